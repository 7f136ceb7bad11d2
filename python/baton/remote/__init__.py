"""baton over gRPC from Python: remote environments and served policies.

Needs the remote extra of baton's pyproject.toml (grpcio, protobuf,
grpcio-health-checking, grpcio-reflection), which the project's environment
(scripts/python) has.

Environments (EnvService, e.g. ``baton serve env``):

    from baton.remote import RemoteEnv, RemoteMultiAgentEnv

    with RemoteEnv("127.0.0.1:50051", env="cartpole") as env:      # Gymnasium view
        obs, info = env.reset(seed=1)
        obs, reward, terminated, truncated, info = env.step(1)

    with RemoteMultiAgentEnv("127.0.0.1:50051", env="maze") as env:  # every agent
        turn = env.reset(seed=1)
        while not turn.over:
            report = turn.reports[turn.next]       # what the acting agent sees
            turn = env.step(my_policy(report.observation, report.mask))

Policies (AgentService, for ``baton run ENV --policy AGENT=grpc://HOST:PORT``):

    from baton.remote import serve_policy

    server = serve_policy(fn, spaces, "127.0.0.1:50052", name="strategy", key=KEY)
    server.wait()    # until server.stop(), from a signal handler say

Learners (an agent trained online while Go trials play it):

    server = serve_learner(learner, spaces, "127.0.0.1:50052", name="strategy")

``learner`` has ``act(obs, mask, context)`` and ``learn(outcome)``, told every
Outcome (step rewards and next observations, retroactive rewards, episode ends) of
the trials it acts in.

``fn`` takes the agent's flat float32 observation (and its bool action mask) as numpy
arrays and returns the raw action; ``spaces`` are the agent's spaces, from
``RemoteMultiAgentEnv.spec``, an agent of ``baton envs ENV --json``, or
baton.AgentSpaces. ``RemoteAgent`` calls any agent server from Python.

Failed calls raise RemoteError subclasses named for their gRPC status
(InvalidArgument, whose ``field`` names the bad field, Unauthenticated, NotFound,
Unavailable, DeadlineExceeded, Rejected); answers that do not fit the spec raise
Mismatch; bad arguments of this API raise ConfigError before anything is sent.
"""

try:
    import grpc as _grpc  # noqa: F401
    import google.protobuf as _protobuf  # noqa: F401
    import grpc_health as _grpc_health  # noqa: F401
    import grpc_reflection as _grpc_reflection  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError(
        f"baton.remote needs grpcio, protobuf, grpcio-health-checking and grpcio-reflection ({e}): "
        "pip install 'baton[remote]', or run scripts/python"
    ) from e

from .agent import RemoteAgent
from .channel import DEFAULT_TIMEOUT, parse_target
from .env import Clock, EnvInfo, RemoteEnv, RemoteMultiAgentEnv, Report, Turn, env_spec, list_envs
from .errors import (
    ConfigError,
    DeadlineExceeded,
    FieldError,
    InvalidArgument,
    Mismatch,
    NotFound,
    PermissionDenied,
    Rejected,
    RemoteError,
    Unauthenticated,
    Unavailable,
)
from .keys import MIN_KEY_LEN, Keys, new_key
from .learner import EPISODE_END, RETRO, STEP, LearnerPolicy, Outcome
from .policy import ActContext, Policy
from .server import DEFAULT_ADDR, PolicyServer, serve_learner, serve_policies, serve_policy
from .specs import AgentSpec, agent_spec

__all__ = [
    "DEFAULT_ADDR",
    "DEFAULT_TIMEOUT",
    "EPISODE_END",
    "MIN_KEY_LEN",
    "RETRO",
    "STEP",
    "ActContext",
    "AgentSpec",
    "Clock",
    "ConfigError",
    "DeadlineExceeded",
    "EnvInfo",
    "FieldError",
    "InvalidArgument",
    "Keys",
    "LearnerPolicy",
    "Mismatch",
    "NotFound",
    "Outcome",
    "PermissionDenied",
    "Policy",
    "PolicyServer",
    "Rejected",
    "RemoteAgent",
    "RemoteEnv",
    "RemoteError",
    "RemoteMultiAgentEnv",
    "Report",
    "Turn",
    "Unauthenticated",
    "Unavailable",
    "agent_spec",
    "env_spec",
    "list_envs",
    "new_key",
    "parse_target",
    "serve_learner",
    "serve_policies",
    "serve_policy",
]
