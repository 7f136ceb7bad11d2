"""The fast lane's CartPole on one worker against Gymnasium's numpy-native
CartPoleVectorEnv at large N, measured in the same run.

    scripts/python examples/python/cartpole_large_n_bench.py              # N = 1024, 4096, 16384
    scripts/python examples/python/cartpole_large_n_bench.py --sizes 4096 --rounds 8

Each round measures both contenders once per N, in an order that alternates from
round to round; a figure is the median over the rounds, and a ratio the median of the
rounds' ratios (baton.bench's method: ratios taken in one round move much less than
figures on a loaded machine). One tick is one step of all N copies, random actions
drawn ahead of time.
"""

from __future__ import annotations

import argparse
import statistics

from baton.bench import fast_lane, gymnasium_vector


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1024,4096,16384", help="comma-separated N")
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--seconds", type=float, default=1.0, help="per contender and round")
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    got: dict[int, dict[str, list[float]]] = {n: {"baton": [], "gymnasium": [], "ratio": []} for n in sizes}
    for r in range(args.rounds):
        for n in sizes:
            order = ["baton", "gymnasium"] if r % 2 == 0 else ["gymnasium", "baton"]
            fig = {}
            for name in order:
                fig[name] = fast_lane(n, 1, args.seconds) if name == "baton" else gymnasium_vector(n, args.seconds)
            for name, v in fig.items():
                got[n][name].append(v)
            got[n]["ratio"].append(fig["baton"] / fig["gymnasium"])
            print(f"round {r} N={n}: baton {fig['baton']:,.0f} steps/s, gymnasium {fig['gymnasium']:,.0f}, "
                  f"ratio {fig['baton'] / fig['gymnasium']:.2f}", flush=True)
    print(f"{'N':>6}  {'baton steps/s':>14}  {'gymnasium steps/s':>18}  {'ratio (median)':>14}  {'min':>5}  {'max':>5}")
    for n in sizes:
        g = got[n]
        print(f"{n:>6}  {statistics.median(g['baton']):>14,.0f}  {statistics.median(g['gymnasium']):>18,.0f}  "
              f"{statistics.median(g['ratio']):>14.2f}  {min(g['ratio']):>5.2f}  {max(g['ratio']):>5.2f}")


if __name__ == "__main__":
    main()
