"""baton.remote without the Go side: tensors, spaces and keys on the wire, and Python
policies served (serve_policy) and called (RemoteAgent) over real loopback gRPC."""

import os
import shutil
import subprocess
import threading
import time
from concurrent import futures

import numpy as np
import pytest

import grpc
from google.protobuf import descriptor_pool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

import baton
from baton import remote as R
from baton.remote import actions as A
from baton.remote import tensors as T
from baton.remote.errors import STATUS_DETAILS_KEY, _rpc_messages
from baton.v1 import baton_pb2 as pb
from baton.v1 import baton_pb2_grpc as pb_grpc

KEY = "test-key-0123456789abcdef"
OTHER_KEY = "other-key-0123456789abcdef"

# A small agent: a Box observation of 3 values in [0, 5], Discrete(3) actions with a mask.
OBS = {"type": "box", "shape": [3], "dtype": "float32", "low": [0, 0, 0], "high": [5, 5, 5]}
ACT = {"type": "discrete", "n": 3, "start": 0}
SPACES = (OBS, ACT, 3)


def last_allowed(obs, mask):
    """The highest action the mask allows (all when there is no mask)."""
    return 2 if mask is None else int(np.flatnonzero(mask)[-1])


@pytest.fixture
def server():
    srv = R.serve_policy(last_allowed, SPACES, name="strategy")
    yield srv
    srv.stop()


@pytest.fixture
def client(server):
    with R.RemoteAgent(server.addr) as c:
        yield c


# ---------------------------------------------------------------------------------
# Tensors.


def test_tensor_round_trip_every_dtype():
    rng = np.random.default_rng(1)
    cases = [
        (rng.normal(size=(2, 3)).astype(np.float32), T.FLOAT32),
        (rng.integers(-(2**40), 2**40, size=5), T.INT64),
        (rng.random(4) < 0.5, T.BOOL),
        (np.float32(2.5), T.FLOAT32),
    ]
    for a, dtype in cases:
        t = T.encode(a, dtype)
        assert list(t.shape) == list(np.shape(a))
        assert len(t.data) == np.size(a) * {T.FLOAT32: 4, T.INT64: 8, T.BOOL: 1}[dtype]
        back = T.decode("x", t, dtype)
        np.testing.assert_array_equal(back, a)
        assert back.flags.writeable


def test_tensor_bytes_are_little_endian_as_the_contract_says():
    t = T.encode(np.array([1.0, -2.0], np.float32), T.FLOAT32)
    assert t.data == np.array([1.0, -2.0], "<f4").tobytes()
    t = T.encode([1, 256], T.INT64)
    assert t.data == b"\x01" + b"\x00" * 7 + b"\x00\x01" + b"\x00" * 6


@pytest.mark.parametrize(
    "tensor, dtype, accept, field, reason",
    [
        (None, T.FLOAT32, None, "obs", "missing"),
        (pb.Tensor(dtype=T.INT64, shape=[1], data=bytes(8)), T.FLOAT32, None, "obs.dtype", "DTYPE_INT64, want DTYPE_FLOAT32"),
        (pb.Tensor(dtype=T.FLOAT32, shape=[3], data=bytes(12)), T.FLOAT32, [(4,)], "obs.shape", "[3], want [4]"),
        (pb.Tensor(dtype=T.INT64, shape=[2], data=bytes(16)), T.INT64, [(), (1,)], "obs.shape", "[2], want [] or [1]"),
        (
            pb.Tensor(dtype=T.FLOAT32, shape=[106], data=bytes(420)),
            T.FLOAT32,
            None,
            "obs.data",
            "420 bytes, want 424 (106 float32 of 4 bytes, shape [106])",
        ),
        (pb.Tensor(dtype=T.FLOAT32, shape=[-1], data=b""), T.FLOAT32, None, "obs.shape", "dimension 0 is -1, want >= 0"),
        (pb.Tensor(dtype=T.FLOAT32, shape=[1] * 34, data=bytes(4)), T.FLOAT32, None, "obs.shape", "34 dimensions, want at most 33"),
        (
            pb.Tensor(dtype=T.FLOAT32, shape=[1 << 20, 1 << 20], data=b""),
            T.FLOAT32,
            None,
            "obs.shape",
            "[1048576 1048576] holds more than 67108864 elements",
        ),
        (
            pb.Tensor(dtype=T.FLOAT32, shape=[2], data=np.array([1, np.nan], "<f4").tobytes()),
            T.FLOAT32,
            None,
            "obs.data",
            "element 1 is NaN",
        ),
        (pb.Tensor(dtype=T.BOOL, shape=[2], data=b"\x01\x02"), T.BOOL, None, "obs.data", "element 1 is 2, want 0 or 1"),
    ],
)
def test_malformed_tensors_name_the_field(tensor, dtype, accept, field, reason):
    with pytest.raises(R.FieldError) as e:
        T.decode("obs", tensor, dtype, accept)
    assert (e.value.field, e.value.reason) == (field, reason)


# ---------------------------------------------------------------------------------
# Actions.


@pytest.mark.parametrize(
    "space, value, dtype, shape, back",
    [
        (ACT, np.int64(2), T.INT64, [], 2),
        (ACT, 1.0, T.INT64, [], 1),
        ({"type": "discrete", "n": 3, "start": -1}, -1, T.INT64, [], -1),
        ({"type": "multi_discrete", "nvec": [2, 3]}, [1, 2], T.INT64, [2], [1, 2]),
        ({"type": "multi_binary", "shape": [2, 2]}, [[1, 0], [0, 1]], T.INT64, [4], [[1, 0], [0, 1]]),
        (
            {"type": "box", "shape": [2, 1], "low": -1, "high": 1},
            [[0.5], [-0.25]],
            T.FLOAT32,
            [2],
            [[0.5], [-0.25]],
        ),
    ],
)
def test_actions_round_trip_per_space(space, value, dtype, shape, back):
    sp = baton.parse_space(space)
    t = A.encode(sp, value)
    assert (t.dtype, list(t.shape)) == (dtype, shape)
    np.testing.assert_array_equal(A.decode(sp, t), np.asarray(back))


@pytest.mark.parametrize(
    "space, value, mask, reason",
    [
        (ACT, 3, None, "3 is outside Discrete(3): want 0 to 2"),
        (ACT, 1, [True, False, True], "1 is masked out (allowed: [0 2])"),
        (ACT, 1.5, None, "element 0 is 1.5, want an integer"),
        (ACT, [1, 2], None, "2 values of shape [2], want 1 value for Discrete(3)"),
        (ACT, "a", None, "a <U1 value, want integers"),
        ({"type": "multi_discrete", "nvec": [2, 3]}, [1, 3], None, "entry 1 is 3, want 0 to 2"),
        ({"type": "multi_binary", "shape": [2]}, [1, 2], None, "entry 1 is 2, want 0 or 1"),
        ({"type": "box", "shape": [2], "low": -1, "high": 1}, [0, 2], None, "entry 1 is 2.0, outside [-1.0, 1.0]"),
        ({"type": "box", "shape": [2], "low": -1, "high": 1}, [np.nan, 0], None, "entry 0 is NaN"),
    ],
)
def test_actions_outside_their_space_are_refused(space, value, mask, reason):
    with pytest.raises(R.FieldError) as e:
        A.encode(baton.parse_space(space), value, mask=mask)
    assert e.value.reason == reason


def test_action_batches_name_the_row():
    sp = baton.parse_space(ACT)
    t = A.encode_batch(sp, [0, 1, 2], 3)
    assert (t.dtype, list(t.shape)) == (T.INT64, [3])
    np.testing.assert_array_equal(A.decode_batch(sp, t, 3), [0, 1, 2])
    with pytest.raises(R.FieldError) as e:
        A.encode_batch(sp, [0, 1, 2], 3, masks=[[1, 1, 1], [1, 1, 1], [1, 1, 0]])
    assert e.value.field == "actions[row 2]"


# ---------------------------------------------------------------------------------
# Spaces on the wire.


GOLDEN_SPECS = [
    {"type": "discrete", "n": 4, "start": 0},
    {"type": "discrete", "n": 3, "start": -2},
    {"type": "box", "shape": [2], "dtype": "float32", "low": [-1, "-inf"], "high": [1, "inf"]},
    {"type": "multi_discrete", "nvec": [2, 3, 4]},
    {"type": "multi_binary", "shape": [2, 3]},
    {"type": "text", "min_length": 1, "max_length": 5, "charset": "abc"},
    {
        "type": "dict",
        "spaces": [
            {"key": "pos", "space": {"type": "box", "shape": [2], "low": 0, "high": 9}},
            {"key": "t", "space": {"type": "tuple", "spaces": [{"type": "discrete", "n": 2}, {"type": "multi_binary", "shape": [3]}]}},
        ],
    },
]


@pytest.mark.parametrize("spec", GOLDEN_SPECS, ids=lambda s: s["type"])
def test_spaces_round_trip_through_the_protobuf_form(spec):
    want = baton.parse_space(spec)
    from baton.remote import specs

    msg = specs.space_proto(want)
    again = pb.Space.FromString(msg.SerializeToString())
    assert specs.space_from_proto(again) == want
    assert baton.parse_space(specs.space_spec(want)) == want


def test_agent_spec_carries_both_forms_and_reads_either():
    spec = R.agent_spec(SPACES, name="strategy")
    msg = spec.to_proto()
    assert msg.observation_space_json and msg.HasField("observation_space")
    assert R.AgentSpec.from_proto(msg) == spec
    json_only = pb.AgentSpec(
        name="strategy", mask_len=3, observation_space_json=msg.observation_space_json, action_space_json=msg.action_space_json
    )
    assert R.AgentSpec.from_proto(json_only) == spec
    with pytest.raises(baton.SpecError, match=r"\.action_space"):
        R.AgentSpec.from_proto(pb.AgentSpec(name="x", observation_space=msg.observation_space))


def test_invalid_spaces_in_a_message_name_their_path():
    bad = pb.Space(dict=pb.DictSpace(spaces=[pb.DictEntry(key="a", space=pb.Space(discrete=pb.DiscreteSpace(n=0)))]))
    from baton.remote import specs

    with pytest.raises(baton.SpecError) as e:
        specs.space_from_proto(bad, ".observation_space")
    assert e.value.path == ".observation_space.spaces[0].space.n"
    with pytest.raises(baton.SpecError, match="no kind of space"):
        specs.space_from_proto(pb.Space())


@pytest.mark.parametrize(
    "spaces, name, message",
    [
        (SPACES, None, "has no name"),
        ((OBS, {"type": "text", "min_length": 0, "max_length": 2}), "a", "action space text"),
        ((OBS, ACT, 2), "a", "mask length 2 does not fit"),
        ((OBS, {"type": "multi_discrete", "nvec": [2]}, 2), "a", "mask length 2 does not fit"),
        ((OBS, ACT, -1), "a", "mask_len -1"),
        ((OBS, {"type": "discrete", "n": 0}), "a", r"\.n: want an integer >= 1"),
        ({"observation_space": OBS}, "a", "lacks action_space"),
        (42, "a", "want AgentSpaces"),
        (SPACES, "two words", "white space"),
    ],
)
def test_agent_spec_refuses_what_a_server_would(spaces, name, message):
    with pytest.raises(R.ConfigError, match=message):
        R.agent_spec(spaces, name=name)


def test_agent_spec_reads_an_agent_of_baton_envs_json():
    agent = {"name": "strategy", "observation_space": OBS, "action_space": ACT, "mask_len": 3, "policies": []}
    spec = R.agent_spec(agent)
    assert (spec.name, spec.mask_len, spec.action) == ("strategy", 3, baton.Discrete(3))
    assert R.agent_spec(baton.AgentSpaces(baton.parse_space(OBS), baton.parse_space(ACT), 3), "s").mask_len == 3


# ---------------------------------------------------------------------------------
# Keys.


def test_keys_parse_the_key_file_format():
    keys = R.Keys.parse(f"# keys\n\nstrategy = {KEY}\n{OTHER_KEY}\n")
    assert keys.names == ("strategy",)
    assert keys.key_for("strategy") == KEY
    assert keys.key_for("motion") == OTHER_KEY  # the default key
    g = keys.grant(KEY.encode())
    assert g.any() and g.allows("strategy") and not g.allows("motion")
    g = keys.grant(OTHER_KEY.encode())
    assert g.allows("motion") and not g.allows("strategy")
    assert not keys.grant(b"nope-nope-nope-nope").any()


def test_keys_report_every_problem_by_line_without_the_keys():
    with pytest.raises(R.ConfigError) as e:
        R.Keys.parse(f"=x\nshort\na={KEY}\na={KEY}\nb=has space in it, long enough\n")
    msg = str(e.value)
    for part in ("line 1: empty name", "line 2: the key is 5 bytes long", "line 4: a key for a is given twice", "line 5"):
        assert part in msg
    assert KEY not in msg
    with pytest.raises(R.ConfigError, match="no key"):
        R.Keys.parse("# nothing\n")


def test_new_keys_are_long_distinct_and_valid():
    a, b = R.new_key(), R.new_key()
    assert a != b and len(a) >= R.MIN_KEY_LEN
    R.Keys({"": a})


# ---------------------------------------------------------------------------------
# Targets.


@pytest.mark.parametrize(
    "target, want",
    [
        ("127.0.0.1:50051", ("127.0.0.1:50051", False, "")),
        ("grpc://127.0.0.1:50051", ("127.0.0.1:50051", False, "")),
        ("grpcs://example.org:443/strategy", ("example.org:443", True, "strategy")),
        ("unix:/tmp/sock", ("unix:/tmp/sock", False, "")),
    ],
)
def test_parse_target(target, want):
    assert R.parse_target(target) == want


@pytest.mark.parametrize("target", ["", "grpc://host", "grpc://host:1/a/b", "grpc://u@host:1", "grpc://"])
def test_parse_target_refuses_malformed_targets(target):
    with pytest.raises(R.ConfigError):
        R.parse_target(target)


# ---------------------------------------------------------------------------------
# The policy server, over loopback gRPC.


def test_act_batch_and_stream(client):
    assert client.spec == R.agent_spec(SPACES, name="strategy")
    assert client.act([1, 2, 3], [True, True, False]) == 1
    assert client.act([1, 2, 3]) == 2
    np.testing.assert_array_equal(
        client.act_batch(np.ones((3, 3)), [[1, 0, 0], [1, 1, 0], [1, 1, 1]]), [0, 1, 2]
    )
    masks = [np.array(m, bool) for m in ([1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0])]
    assert list(client.stream((np.full(3, 2.0), m) for m in masks)) == [0, 1, 2, 1]


def test_spec_and_agents(server):
    ch = grpc.insecure_channel(server.addr)
    stub = pb_grpc.AgentServiceStub(ch)
    try:
        assert stub.Spec(pb.AgentSpecRequest(), timeout=10).name == "strategy"
        assert stub.Spec(pb.AgentSpecRequest(agent="strategy"), timeout=10).mask_len == 3
        assert [a.name for a in stub.Agents(pb.AgentsRequest(), timeout=10).agents] == ["strategy"]
    finally:
        ch.close()


def test_health_and_reflection_are_served_without_a_key():
    srv = R.serve_policy(last_allowed, SPACES, name="strategy", key=KEY)
    ch = grpc.insecure_channel(srv.addr)
    try:
        health = health_pb2_grpc.HealthStub(ch)
        for service in ("", "baton.v1.AgentService"):
            got = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
            assert got.status == health_pb2.HealthCheckResponse.SERVING, service
        with pytest.raises(grpc.RpcError) as e:
            health.Check(health_pb2.HealthCheckRequest(service="baton.v1.EnvService"), timeout=10)
        assert e.value.code() == grpc.StatusCode.NOT_FOUND
        # Reflection: the services, and the contract's descriptors from the server alone.
        db = ProtoReflectionDescriptorDatabase(ch)
        assert sorted(db.get_services()) == [
            "baton.v1.AgentService",
            "grpc.health.v1.Health",
            "grpc.reflection.v1alpha.ServerReflection",
        ]
        pool = descriptor_pool.DescriptorPool(db)
        act = pool.FindServiceByName("baton.v1.AgentService").FindMethodByName("ActBatch")
        assert act.input_type.full_name == "baton.v1.ActBatchRequest"
        assert [f.name for f in act.input_type.fields] == ["agent", "observations", "masks"]
        # The key is still needed for the agent itself.
        with pytest.raises(grpc.RpcError) as e:
            pb_grpc.AgentServiceStub(ch).Spec(pb.AgentSpecRequest(), timeout=10)
        assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        ch.close()
        srv.stop()


def test_health_turns_not_serving_when_the_server_stops():
    srv = R.serve_policy(last_allowed, SPACES, name="strategy")
    ch = grpc.insecure_channel(srv.addr)
    try:
        watch = health_pb2_grpc.HealthStub(ch).Watch(health_pb2.HealthCheckRequest(service="baton.v1.AgentService"), timeout=30)
        assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
        stopper = threading.Thread(target=srv.stop, kwargs={"grace": 10})
        stopper.start()
        assert next(watch).status == health_pb2.HealthCheckResponse.NOT_SERVING
        watch.cancel()  # the call in flight that the grace period waits for
        stopper.join()
    finally:
        ch.close()
        srv.stop()


def test_the_policy_gets_mask_and_context_as_its_signature_asks():
    seen = []

    def with_context(obs, mask, context):
        seen.append((obs.dtype, obs.shape, None if mask is None else mask.tolist(), context))
        return 0

    with R.serve_policy(with_context, SPACES, name="s") as srv, R.RemoteAgent(srv.addr) as c:
        c.act([1, 1, 1], [True, False, False], R.ActContext("trial-1", 2, 7, "s_0"))
        c.act([1, 1, 1])
    assert seen == [
        (np.float32, (3,), [True, False, False], R.ActContext("trial-1", 2, 7, "s_0")),
        (np.float32, (3,), None, R.ActContext()),
    ]
    obs_only = R.Policy(lambda obs: 1, SPACES, name="s")
    keyword = R.Policy(lambda obs, *, mask=None: int(mask is not None), SPACES, name="s")
    assert obs_only.act(np.zeros(3, np.float32), np.ones(3, bool)) == 1
    assert keyword.act(np.zeros(3, np.float32), np.ones(3, bool)) == 1


def test_batch_fn_gets_the_whole_batch():
    calls = []

    def batch(obs, masks):
        calls.append(obs.shape)
        return np.argmax(masks, axis=1)

    with R.serve_policy(last_allowed, SPACES, name="s", batch_fn=batch) as srv, R.RemoteAgent(srv.addr) as c:
        got = c.act_batch(np.zeros((4, 3)), [[0, 1, 1], [1, 0, 0], [0, 0, 1], [0, 1, 0]])
    np.testing.assert_array_equal(got, [1, 0, 2, 1])
    assert calls == [(4, 3)]


def raw_call(addr, method, request, metadata=()):
    """Calls AgentService directly, returning the grpc error (or None)."""
    ch = grpc.insecure_channel(addr)
    try:
        getattr(pb_grpc.AgentServiceStub(ch), method)(request, timeout=10, metadata=metadata)
        return None
    except grpc.RpcError as e:
        return e
    finally:
        ch.close()


def obs_tensor(values):
    return T.encode(np.asarray(values, np.float32), T.FLOAT32)


@pytest.mark.parametrize(
    "request_, field, reason",
    [
        (pb.ActRequest(), "observation", "missing"),
        (pb.ActRequest(observation=T.encode([1, 2, 3], T.INT64)), "observation.dtype", "DTYPE_INT64, want DTYPE_FLOAT32"),
        (pb.ActRequest(observation=obs_tensor([1, 2])), "observation.shape", "[2], want [3]"),
        (
            pb.ActRequest(observation=pb.Tensor(dtype=T.FLOAT32, shape=[3], data=bytes(11))),
            "observation.data",
            "11 bytes, want 12 (3 float32 of 4 bytes, shape [3])",
        ),
        (pb.ActRequest(observation=obs_tensor([1, np.nan, 3])), "observation.data", "element 1 is NaN"),
        (pb.ActRequest(observation=obs_tensor([1, 6, 3])), "observation.data", "element 1 is 6.0, outside the bounds [0.0, 5.0]"),
        (
            pb.ActRequest(observation=obs_tensor([1, 2, 3]), mask=T.encode([1, 1], T.BOOL)),
            "mask.shape",
            "[2], want [3]",
        ),
        (
            pb.ActRequest(observation=obs_tensor([1, 2, 3]), mask=pb.Tensor(dtype=T.BOOL, shape=[3], data=b"\x00\x03\x00")),
            "mask.data",
            "element 1 is 3, want 0 or 1",
        ),
        (
            pb.ActRequest(observation=obs_tensor([1, 2, 3]), mask=T.encode([0, 0, 0], T.BOOL)),
            "mask.data",
            "allows no action",
        ),
    ],
)
def test_malformed_requests_are_invalid_argument_naming_the_field(server, request_, field, reason):
    err = raw_call(server.addr, "Act", request_)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.details() == f"{field}: {reason}"
    # The google.rpc.BadRequest detail names the field too.
    Status, BadRequest = _rpc_messages()
    details = dict(err.trailing_metadata())[STATUS_DETAILS_KEY]
    st = Status.FromString(details)
    assert st.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    br = BadRequest.FromString(st.details[0].value)
    assert [(v.field, v.description) for v in br.field_violations] == [(field, reason)]


def test_the_client_reads_the_field_of_an_invalid_argument(client):
    with pytest.raises(R.InvalidArgument) as e:
        client.act([9, 0, 0])
    assert e.value.field == "observation.data"
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize(
    "request_, field",
    [
        (pb.ActBatchRequest(), "observations"),
        (pb.ActBatchRequest(observations=obs_tensor([1, 2, 3])), "observations.shape"),
        (pb.ActBatchRequest(observations=obs_tensor([[1, 2, 3], [1, 9, 3]])), "observations.data[row 1]"),
        (
            pb.ActBatchRequest(observations=obs_tensor([[1, 2, 3]] * 2), masks=T.encode([[1, 1, 1], [0, 0, 0]], T.BOOL)),
            "masks.data",
        ),
        (pb.ActBatchRequest(observations=obs_tensor([[1, 2, 3]] * 2), masks=T.encode([[1, 1, 1]], T.BOOL)), "masks.shape"),
    ],
)
def test_malformed_batches_are_invalid_argument(server, request_, field):
    err = raw_call(server.addr, "ActBatch", request_)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.details().startswith(field + ":")


def test_an_invalid_request_ends_the_stream_with_its_status(client):
    stream = client.stream([np.ones(3), np.full(3, 7.0), np.ones(3)])
    assert next(stream) == 2
    with pytest.raises(R.InvalidArgument) as e:
        next(stream)
    assert e.value.field == "observation.data"


def test_a_mask_for_an_agent_without_one_is_refused():
    with R.serve_policy(lambda obs: 0, (OBS, ACT), name="s") as srv:
        err = raw_call(srv.addr, "Act", pb.ActRequest(observation=obs_tensor([1, 1, 1]), mask=T.encode([1, 1, 1], T.BOOL)))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.details() == "mask: agent s has no action mask; leave the field out"


def test_policy_failures_are_the_calls_not_the_servers(caplog):
    def broken(obs):
        if obs[0] > 4:
            raise RuntimeError("no plan for this")
        return 7 if obs[0] > 3 else 0

    with R.serve_policy(broken, (OBS, ACT), name="s") as srv, R.RemoteAgent(srv.addr) as c:
        with pytest.raises(R.RemoteError) as e:
            c.act([5, 0, 0])
        assert e.value.code == grpc.StatusCode.UNKNOWN
        assert "agent s: the policy failed: RuntimeError: no plan for this" in e.value.message
        with pytest.raises(R.RemoteError) as e:
            c.act([4, 0, 0])
        assert e.value.code == grpc.StatusCode.INTERNAL
        assert "the policy chose an action outside its space: action: 7 is outside Discrete(3)" in e.value.message
        assert c.act([1, 0, 0]) == 0  # the server goes on
    assert any("no plan for this" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


def test_several_agents_are_named_by_each_request():
    policies = [R.Policy(lambda obs: 0, SPACES, name="a"), R.Policy(lambda obs: 1, SPACES, name="b")]
    srv = R.serve_policies(policies)
    try:
        with R.RemoteAgent(srv.addr, "b") as b, R.RemoteAgent(f"grpc://{srv.addr}/a") as a:
            assert (a.act([0, 0, 0]), b.act([0, 0, 0])) == (0, 1)
        with pytest.raises(R.InvalidArgument) as e:
            R.RemoteAgent(srv.addr)
        assert e.value.field == "agent"
        assert "the server serves several agents: name one (agents: a, b)" in e.value.message
        with pytest.raises(R.NotFound, match='no agent "c"'):
            R.RemoteAgent(srv.addr, "c")
    finally:
        srv.stop()
    with pytest.raises(R.ConfigError, match="agent a is served twice"):
        R.serve_policies([policies[0], policies[0]])


def test_keys_are_checked_per_agent():
    policies = [R.Policy(lambda obs: 0, SPACES, name="a"), R.Policy(lambda obs: 1, SPACES, name="b")]
    srv = R.serve_policies(policies, key={"a": KEY, "": OTHER_KEY})
    try:
        with R.RemoteAgent(srv.addr, "a", key=KEY) as a:
            assert a.act([0, 0, 0]) == 0
        with R.RemoteAgent(srv.addr, "b", key=OTHER_KEY) as b:
            assert b.act([0, 0, 0]) == 1
        cases = [
            ("a", None, 'missing API key: send the metadata "authorization: Bearer KEY"', False),
            ("a", "wrong-key-0123456789abcdef", "invalid API key", False),
            ("c", "wrong-key-0123456789abcdef", "invalid API key", False),  # an unknown key learns nothing
            # the default key: only for agents without one
            ("a", OTHER_KEY, 'the API key does not grant agent "a" (it grants: b)', True),
            ("b", KEY, 'the API key does not grant agent "b" (it grants: a)', True),
            ("c", KEY, 'the API key does not grant agent "c" (it grants: a)', True),
        ]
        for agent, key, message, denied in cases:
            with pytest.raises(R.Unauthenticated) as e:
                R.RemoteAgent(srv.addr, agent, key=key)
            assert e.value.message == message
            assert isinstance(e.value, R.PermissionDenied) == denied
            assert isinstance(e.value, PermissionError)
        with pytest.raises(R.NotFound) as e:  # the default key grants c, which is not served
            R.RemoteAgent(srv.addr, "c", key=OTHER_KEY)
        assert e.value.message == 'no agent "c" (agents: b)'
        # x-baton-key works as well as authorization: Bearer.
        req = pb.ActRequest(agent="a", observation=obs_tensor([0, 0, 0]))
        assert raw_call(srv.addr, "Act", req, metadata=(("x-baton-key", KEY),)) is None
        assert raw_call(srv.addr, "Act", req, metadata=(("authorization", "Basic " + KEY),)).code() == grpc.StatusCode.UNAUTHENTICATED
        # Agents lists what the key grants.
        ch = grpc.insecure_channel(srv.addr)
        agents = pb_grpc.AgentServiceStub(ch).Agents(pb.AgentsRequest(), timeout=10, metadata=(("authorization", "Bearer " + KEY),))
        ch.close()
        assert [a.name for a in agents.agents] == ["a"]
    finally:
        srv.stop()
    with pytest.raises(R.ConfigError, match="agent b has no API key"):
        R.serve_policies(policies, key={"a": KEY})


def test_concurrent_callers_get_their_own_answers():
    srv = R.serve_policy(lambda obs: int(obs[0]) % 3, (OBS, ACT), name="s", max_workers=8)
    errors, results = [], {}

    def caller(i):
        try:
            with R.RemoteAgent(srv.addr) as c:
                results[i] = list(c.stream(np.full(3, float(j % 5)) for j in range(i, i + 20)))
        except Exception as e:  # collected: pytest sees them below
            errors.append(e)

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    srv.stop()
    assert errors == []
    for i, got in results.items():
        assert got == [(j % 5) % 3 for j in range(i, i + 20)]


def test_calls_beyond_max_workers_are_refused_not_left_waiting():
    with R.serve_policy(last_allowed, SPACES, name="s", max_workers=2) as srv, R.RemoteAgent(srv.addr) as c:
        streams = [c.stream(iter([np.ones(3)] * 2)) for _ in range(2)]
        assert [next(s) for s in streams] == [2, 2]  # two streams open: every worker busy
        with pytest.raises(R.Rejected) as e:
            c.act([1, 1, 1])
        assert e.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert [list(s) for s in streams] == [[2], [2]]  # run out: the server ends them
        # The server frees a worker when its handler returns, just after the status
        # the client saw: retry for that moment only, bounded in time.
        deadline = time.monotonic() + 10
        while True:
            try:
                assert c.act([1, 1, 1]) == 2
                break
            except R.Rejected:
                if time.monotonic() > deadline:
                    raise


def test_stop_is_graceful_and_idempotent():
    srv = R.serve_policy(last_allowed, SPACES, name="s")
    c = R.RemoteAgent(srv.addr, timeout=5)
    assert c.act([0, 0, 0]) == 2
    srv.stop(grace=1)
    assert srv.wait(0)
    srv.stop()
    with pytest.raises(R.Unavailable):
        c.act([0, 0, 0])
    c.close()


def test_a_missing_server_fails_at_once_unless_waited_for():
    with R.serve_policy(last_allowed, SPACES, name="s") as srv:
        addr = srv.addr
    with pytest.raises(R.Unavailable):
        R.RemoteAgent(addr, timeout=30)
    with pytest.raises(R.DeadlineExceeded):
        R.RemoteAgent(addr, timeout=0.5, wait_ready=True)


def test_listening_on_a_taken_port_fails():
    with R.serve_policy(last_allowed, SPACES, name="s") as srv:
        with pytest.raises(OSError, match="cannot listen"):
            R.serve_policy(last_allowed, SPACES, srv.addr, name="s")


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (apt-get install openssl): no certificate for the TLS test")
    d = tmp_path_factory.mktemp("tls")
    cert, key = str(d / "cert.pem"), str(d / "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True,
    )
    return cert, key


def test_tls(certificate):
    cert, key = certificate
    with R.serve_policy(last_allowed, SPACES, name="s", tls=(cert, key), key=KEY) as srv:
        with R.RemoteAgent(srv.addr, key=KEY, tls=cert) as c:
            assert c.act([1, 1, 1]) == 2
        with R.RemoteAgent(f"grpcs://{srv.addr}", key=KEY, tls=cert) as c:
            assert c.act([1, 1, 1]) == 2
        with pytest.raises(R.Unavailable):
            R.RemoteAgent(srv.addr, key=KEY, timeout=5)  # plaintext to a TLS server
    with pytest.raises(R.ConfigError, match="tls"):
        R.serve_policy(last_allowed, SPACES, name="s", tls=("/nonexistent/cert.pem", key))


def test_the_generated_stubs_load_on_this_runtime():
    """The committed stubs load on this runtime and describe the .proto's services
    (scripts/genproto --check, in scripts/test, checks they are what protoc writes)."""
    from baton.v1 import baton_pb2

    services = baton_pb2.DESCRIPTOR.services_by_name
    assert set(services) == {"AgentService", "EnvService", "ModelService", "TrialService"}
    assert [m.name for m in services["AgentService"].methods] == ["Spec", "Act", "ActStream", "ActBatch", "Agents"]
    assert os.path.exists(os.path.join(os.path.dirname(baton_pb2.__file__), "baton_pb2_grpc.py"))


# ---------------------------------------------------------------------------------
# Environment clients against an environment server that refuses to reset.

REFUSAL = "env refusing (session 5e55): Reset: the map file maps/nowhere.txt is unreadable"


class RefusingEnvService(pb_grpc.EnvServiceServicer):
    """An EnvService whose sessions open but whose environment refuses every Reset after
    the first ``ok``, as a Go env server answers for an environment whose Reset fails."""

    def __init__(self, ok=0):
        self.ok = ok
        self.closed = []

    def Make(self, request, context):
        spec = R.agent_spec(SPACES, name="strategy").to_proto()
        return pb.MakeResponse(session="5e55", spec=pb.EnvSpec(env=request.env, agents=[spec]))

    def Reset(self, request, context):
        if self.ok <= 0:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, REFUSAL)
        self.ok -= 1
        obs = T.encode(np.zeros(3, np.float32), pb.DTYPE_FLOAT32)
        mask = T.encode(np.ones(3, np.bool_), pb.DTYPE_BOOL)
        report = pb.Report(agent_id="strategy_0", agent="strategy", observation=obs, mask=mask, start=True, clock=pb.Clock())
        return pb.Turn(reports=[report], next="strategy_0")

    def CloseSession(self, request, context):
        self.closed.append(request.session)
        return pb.CloseResponse()


def serve_env(service):
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_EnvServiceServicer_to_server(service, srv)
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    return srv, f"127.0.0.1:{port}"


@pytest.mark.parametrize("ok", [0, 1])
def test_a_refused_reset_raises_with_the_servers_message(ok):
    """A refused reset, the first or after an episode started, raises Rejected with the
    server's message, and a step after it asks for a reset without calling the server."""
    service = RefusingEnvService(ok)
    srv, addr = serve_env(service)
    try:
        with R.RemoteMultiAgentEnv(addr, "refusing") as env:
            for _ in range(ok):
                assert env.reset(seed=1).next == "strategy_0"
            with pytest.raises(R.Rejected, match="the map file maps/nowhere.txt is unreadable") as e:
                env.reset(seed=1)
            assert e.value.code == grpc.StatusCode.FAILED_PRECONDITION
            assert e.value.message == REFUSAL
            assert e.value.method == "EnvService/Reset"
            with pytest.raises(RuntimeError, match="call reset"):
                env.step(0)
        assert service.closed == ["5e55"], "closing the environment ends its session (CloseSession)"
    finally:
        srv.stop(None)
    srv, addr = serve_env(RefusingEnvService(ok))
    try:
        with R.RemoteEnv(addr, "refusing") as env:
            for _ in range(ok):
                obs, _ = env.reset(seed=1)
                assert obs.shape == (3,)
            with pytest.raises(R.Rejected, match="the map file maps/nowhere.txt is unreadable"):
                env.reset(seed=1)
            with pytest.raises(RuntimeError, match="call reset"):
                env.step(0)
    finally:
        srv.stop(None)
