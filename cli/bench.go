package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/batonrl/baton/internal/bench"
	"github.com/spf13/cobra"
)

func newBench() *cobra.Command {
	var (
		run       string
		benchtime time.Duration
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run the benchmark suite and print each framework path against its hand-written baseline",
		Long: `bench runs the benchmark suite of package bench (the same cases as
"go test -bench . ./internal/bench") and prints one table: for every case its time and
allocations per iteration (a step or a trial), its throughput, and the ratio of its
throughput to the case it is compared with (the hand-written loop doing the same work,
or the layer below it). --run selects cases by a regular expression over their names.`,
		Example: "  baton bench\n  baton bench --run Maze --benchtime 2s\n  baton bench --json",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("bench takes no arguments (got %q); select cases with --run", strings.Join(args, " "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return benchmark(cmd.Context(), run, benchtime, asJSON, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&run, "run", "", "run only the cases whose names match this `regexp`")
	fl.DurationVar(&benchtime, "benchtime", time.Second, "how long to run each case")
	fl.BoolVar(&asJSON, "json", false, "print the results as one JSON object")
	return cmd
}

// benchResult is one case's figures.
type benchResult struct {
	Name        string  `json:"name"`
	Unit        string  `json:"unit"`
	N           int     `json:"iterations"`
	NsPerOp     float64 `json:"ns_per_op"`
	AllocsPerOp int64   `json:"allocs_per_op"`
	BytesPerOp  int64   `json:"bytes_per_op"`
	PerSecond   float64 `json:"per_second"`
	Baseline    string  `json:"baseline,omitempty"`
	Ratio       float64 `json:"ratio,omitempty"` // throughput over the baseline's
	// SerialPercent is, for a synchronous vector case, the share of a tick spent
	// outside the work that workers share (its "serial%" metric): by Amdahl's law, W
	// workers go at most 1/(s + (1-s)/W) times as fast.
	SerialPercent float64 `json:"serial_percent,omitempty"`
}

func benchmark(ctx context.Context, run string, benchtime time.Duration, asJSON bool, stdout, stderr io.Writer) error {
	re, err := regexp.Compile(run)
	if err != nil {
		return usagef("--run %q: %v", run, err)
	}
	if benchtime <= 0 {
		return usagef("--benchtime %v: want a positive duration", benchtime)
	}
	// testing.Benchmark reads the test flags; register them and set the time.
	testing.Init()
	if err := flag.Set("test.benchtime", benchtime.String()); err != nil {
		return err
	}
	var cases []bench.Case
	for _, c := range bench.Suite() {
		if re.MatchString(c.Name) {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		names := make([]string, 0)
		for _, c := range bench.Suite() {
			names = append(names, c.Name)
		}
		return usagef("--run %q matches no case (cases: %s)", run, strings.Join(names, ", "))
	}
	results := map[string]*benchResult{}
	var order []*benchResult
	for _, c := range cases {
		if err := ctx.Err(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "bench: %s\n", c.Name)
		r := testing.Benchmark(c.Run)
		if r.N == 0 {
			return fmt.Errorf("bench: case %s failed", c.Name)
		}
		res := &benchResult{
			Name: c.Name, Unit: c.Unit, N: r.N,
			NsPerOp:     float64(r.T.Nanoseconds()) / float64(r.N),
			AllocsPerOp: r.AllocsPerOp(), BytesPerOp: r.AllocedBytesPerOp(),
			PerSecond: r.Extra[c.Unit+"s/s"], Baseline: c.Baseline,
			SerialPercent: r.Extra["serial%"],
		}
		results[c.Name], order = res, append(order, res)
	}
	for _, r := range order {
		if b, ok := results[r.Baseline]; ok && b.PerSecond > 0 {
			r.Ratio = r.PerSecond / b.PerSecond
		}
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"benchtime": benchtime.String(), "cases": order})
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tunit\tns/op\tallocs/op\tper second\tratio\tagainst\tserial\t")
	for _, r := range order {
		ratio, serial := "", ""
		if r.Ratio > 0 {
			ratio = fmt.Sprintf("%.0f%%", 100*r.Ratio)
		}
		if r.SerialPercent > 0 {
			serial = fmt.Sprintf("%.1f%%", r.SerialPercent)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%d\t%s\t%s\t%s\t%s\t\n", r.Name, r.Unit, r.NsPerOp, r.AllocsPerOp, group(int64(math.Round(r.PerSecond))), ratio, r.Baseline, serial)
	}
	return tw.Flush()
}
