"""baton.remote.serve_learner without the Go side: feedback on ActRequest reaches the
learner as Outcomes, in order, before the decision it rides with; feedback alone is
not answered on a stream; malformed feedback, and feedback to a plain policy, is
INVALID_ARGUMENT naming the field; concurrent streams never run the learner twice at
once."""

import threading

import numpy as np
import pytest

import grpc

from baton import remote as R
from baton.remote import tensors as T
from baton.v1 import baton_pb2 as pb
from baton.v1 import baton_pb2_grpc as pb_grpc

OBS = {"type": "box", "shape": [3], "dtype": "float32", "low": [0, 0, 0], "high": [5, 5, 5]}
ACT = {"type": "discrete", "n": 3, "start": 0}
SPACES = (OBS, ACT, 3)


class Recorder:
    """Acts with the last allowed action; records every call, and fails when it is
    entered while another call runs."""

    def __init__(self):
        self.calls = []
        self._busy = threading.Lock()

    def _enter(self):
        if not self._busy.acquire(blocking=False):
            raise RuntimeError("entered twice at once")

    def act(self, obs, mask, context):
        self._enter()
        try:
            self.calls.append(("act", context.trial, context.agent_id, obs.tolist()))
            return int(np.flatnonzero(mask)[-1]) if mask is not None else 2
        finally:
            self._busy.release()

    def learn(self, outcome):
        self._enter()
        try:
            self.calls.append(("learn", outcome))
        finally:
            self._busy.release()


def obs_tensor(values):
    return T.encode(np.asarray(values, np.float32), T.FLOAT32)


def step(agent_id="strategy_0", trial="t", **kw):
    return pb.Feedback(trial=trial, agent_id=agent_id, step=pb.StepFeedback(**kw))


END = pb.Feedback(trial="t", tick=5, episode_end=pb.EpisodeEndFeedback(truncated=True))


@pytest.fixture
def learner():
    rec = Recorder()
    srv = R.serve_learner(rec, SPACES, name="strategy")
    yield srv, rec
    srv.stop()


def stub(addr):
    ch = grpc.insecure_channel(addr)
    return ch, pb_grpc.AgentServiceStub(ch)


def test_the_spec_says_the_agent_learns(learner):
    srv, _ = learner
    ch, api = stub(srv.addr)
    with ch:
        assert api.Spec(pb.AgentSpecRequest(), timeout=10).learns
    plain = R.serve_policy(lambda obs: 0, SPACES, name="plain")
    try:
        ch, api = stub(plain.addr)
        with ch:
            assert not api.Spec(pb.AgentSpecRequest(), timeout=10).learns
    finally:
        plain.stop()


def test_feedback_reaches_the_learner_in_order_before_the_decision(learner):
    srv, rec = learner
    ch, api = stub(srv.addr)
    requests = [
        pb.ActRequest(
            observation=obs_tensor([1, 2, 3]), context=pb.ActContext(trial="t", agent_id="strategy_0"), seq=1
        ),
        # feedback alone: no answer on the stream
        pb.ActRequest(feedback=[step(reward=0.5, sources=[pb.RewardSource(source="env", value=0.5)], span_ticks=3,
                                     observation=obs_tensor([2, 2, 3]), mask=T.encode([1, 1, 0], T.BOOL))]),
        pb.ActRequest(
            observation=obs_tensor([2, 2, 3]), context=pb.ActContext(trial="t", agent_id="strategy_0"), seq=2,
            feedback=[pb.Feedback(trial="t", tick=3, agent_id="strategy_0",
                                  retro=pb.RetroFeedback(reward=-1, source="teacher", rewarded_episode=0, arrived_tick=4))],
        ),
        pb.ActRequest(feedback=[END]),
    ]
    with ch:
        answers = list(api.ActStream(iter(requests), timeout=10))
        assert [a.seq for a in answers] == [1, 2]
        assert api.Act(pb.ActRequest(feedback=[END]), timeout=10) == pb.ActResponse()
    kinds = [c[0] if c[0] == "act" else c[1].kind for c in rec.calls]
    assert kinds == ["act", R.STEP, R.RETRO, "act", R.EPISODE_END, R.EPISODE_END]
    s = rec.calls[1][1]
    assert (s.trial, s.agent, s.agent_id, s.reward, s.sources, s.span_ticks) == ("t", "strategy", "strategy_0", 0.5, (("env", 0.5),), 3)
    assert s.obs.dtype == np.float32 and s.obs.tolist() == [2, 2, 3]
    assert s.mask.tolist() == [True, True, False]
    r = rec.calls[2][1]
    assert (r.tick, r.reward, r.sources, r.rewarded_episode, r.arrived_tick) == (3, -1, (("teacher", -1),), 0, 4)
    e = rec.calls[4][1]
    assert (e.tick, e.truncated, e.agent_id, e.obs) == (5, True, "", None)


@pytest.mark.parametrize(
    "feedback, field",
    [
        ([pb.Feedback(trial="t")], "feedback[0]"),
        ([END, step()], "feedback[1].step.observation"),
        ([step(observation=obs_tensor([1, 2]))], "feedback[0].step.observation.shape"),
        ([step(observation=obs_tensor([1, 9, 2]))], "feedback[0].step.observation.data"),
        ([step(observation=obs_tensor([1, 2, 3]), mask=T.encode([1, 1], T.BOOL))], "feedback[0].step.mask.shape"),
        ([step(agent_id="", observation=obs_tensor([1, 2, 3]))], "feedback[0].agent_id"),
        ([pb.Feedback(tick=2, retro=pb.RetroFeedback(reward=1))], "feedback[0].agent_id"),
        ([pb.Feedback(tick=-1, episode_end=pb.EpisodeEndFeedback())], "feedback[0]"),
    ],
)
def test_malformed_feedback_is_invalid_argument_naming_the_field(learner, feedback, field):
    srv, _ = learner
    ch, api = stub(srv.addr)
    with ch:
        with pytest.raises(grpc.RpcError) as e:
            api.Act(pb.ActRequest(observation=obs_tensor([1, 2, 3]), feedback=feedback), timeout=10)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert e.value.details().startswith(field + ": "), e.value.details()
        with pytest.raises(grpc.RpcError) as e:
            list(api.ActStream(iter([pb.ActRequest(feedback=feedback)]), timeout=10))
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_feedback_to_a_plain_policy_is_refused():
    srv = R.serve_policy(lambda obs: 0, SPACES, name="plain")
    try:
        ch, api = stub(srv.addr)
        with ch, pytest.raises(grpc.RpcError) as e:
            api.Act(pb.ActRequest(feedback=[END]), timeout=10)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert e.value.details().startswith("feedback: agent plain does not learn")
    finally:
        srv.stop()


def test_a_failing_learner_fails_the_call():
    class Failing(Recorder):
        def learn(self, outcome):
            raise ValueError("no")

    srv = R.serve_learner(Failing(), SPACES, name="strategy")
    try:
        ch, api = stub(srv.addr)
        with ch, pytest.raises(grpc.RpcError) as e:
            api.Act(pb.ActRequest(feedback=[END]), timeout=10)
        assert e.value.code() == grpc.StatusCode.UNKNOWN
        assert "learning failed: ValueError: no" in e.value.details()
    finally:
        srv.stop()


def test_a_learner_needs_both_methods():
    with pytest.raises(R.ConfigError, match="needs act"):
        R.serve_learner(object(), SPACES, name="strategy")


def test_streams_side_by_side_never_run_the_learner_twice_at_once(learner):
    srv, rec = learner
    n_streams, n_steps = 8, 40

    def play(k, errors):
        ch, api = stub(srv.addr)
        trial = f"t{k}"

        def requests():
            for i in range(n_steps):
                fb = [step(trial=trial, observation=obs_tensor([i % 5, 0, 0]), reward=1.0)] if i else []
                yield pb.ActRequest(observation=obs_tensor([i % 5, 1, 1]), seq=i + 1, feedback=fb,
                                    context=pb.ActContext(trial=trial, agent_id="strategy_0"))

        try:
            with ch:
                assert [a.seq for a in api.ActStream(requests(), timeout=30)] == list(range(1, n_steps + 1))
        except Exception as e:  # reported to the test's thread
            errors.append(e)

    errors = []
    threads = [threading.Thread(target=play, args=(k, errors)) for k in range(n_streams)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(rec.calls) == n_streams * (2 * n_steps - 1)
    for k in range(n_streams):  # each trial's calls in its order: act, then (learn, act) pairs
        mine = [c for c in rec.calls if (c[1] if c[0] == "act" else c[1].trial) == f"t{k}"]
        assert [c[0] for c in mine] == ["act"] + ["learn", "act"] * (n_steps - 1)
