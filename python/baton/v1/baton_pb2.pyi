from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DTYPE_UNSPECIFIED: _ClassVar[DType]
    DTYPE_FLOAT32: _ClassVar[DType]
    DTYPE_INT64: _ClassVar[DType]
    DTYPE_BOOL: _ClassVar[DType]
    DTYPE_FLOAT64: _ClassVar[DType]

class TrialState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TRIAL_STATE_UNSPECIFIED: _ClassVar[TrialState]
    TRIAL_STATE_PENDING: _ClassVar[TrialState]
    TRIAL_STATE_RUNNING: _ClassVar[TrialState]
    TRIAL_STATE_ENDED: _ClassVar[TrialState]
    TRIAL_STATE_STOPPED: _ClassVar[TrialState]
    TRIAL_STATE_FAILED: _ClassVar[TrialState]
DTYPE_UNSPECIFIED: DType
DTYPE_FLOAT32: DType
DTYPE_INT64: DType
DTYPE_BOOL: DType
DTYPE_FLOAT64: DType
TRIAL_STATE_UNSPECIFIED: TrialState
TRIAL_STATE_PENDING: TrialState
TRIAL_STATE_RUNNING: TrialState
TRIAL_STATE_ENDED: TrialState
TRIAL_STATE_STOPPED: TrialState
TRIAL_STATE_FAILED: TrialState

class Tensor(_message.Message):
    __slots__ = ("dtype", "shape", "data")
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    dtype: DType
    shape: _containers.RepeatedScalarFieldContainer[int]
    data: bytes
    def __init__(self, dtype: _Optional[_Union[DType, str]] = ..., shape: _Optional[_Iterable[int]] = ..., data: _Optional[bytes] = ...) -> None: ...

class Space(_message.Message):
    __slots__ = ("discrete", "box", "multi_discrete", "multi_binary", "dict", "tuple", "text")
    DISCRETE_FIELD_NUMBER: _ClassVar[int]
    BOX_FIELD_NUMBER: _ClassVar[int]
    MULTI_DISCRETE_FIELD_NUMBER: _ClassVar[int]
    MULTI_BINARY_FIELD_NUMBER: _ClassVar[int]
    DICT_FIELD_NUMBER: _ClassVar[int]
    TUPLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    discrete: DiscreteSpace
    box: BoxSpace
    multi_discrete: MultiDiscreteSpace
    multi_binary: MultiBinarySpace
    dict: DictSpace
    tuple: TupleSpace
    text: TextSpace
    def __init__(self, discrete: _Optional[_Union[DiscreteSpace, _Mapping]] = ..., box: _Optional[_Union[BoxSpace, _Mapping]] = ..., multi_discrete: _Optional[_Union[MultiDiscreteSpace, _Mapping]] = ..., multi_binary: _Optional[_Union[MultiBinarySpace, _Mapping]] = ..., dict: _Optional[_Union[DictSpace, _Mapping]] = ..., tuple: _Optional[_Union[TupleSpace, _Mapping]] = ..., text: _Optional[_Union[TextSpace, _Mapping]] = ...) -> None: ...

class DiscreteSpace(_message.Message):
    __slots__ = ("n", "start")
    N_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    n: int
    start: int
    def __init__(self, n: _Optional[int] = ..., start: _Optional[int] = ...) -> None: ...

class BoxSpace(_message.Message):
    __slots__ = ("shape", "dtype", "low", "high")
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    shape: _containers.RepeatedScalarFieldContainer[int]
    dtype: str
    low: _containers.RepeatedScalarFieldContainer[float]
    high: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, shape: _Optional[_Iterable[int]] = ..., dtype: _Optional[str] = ..., low: _Optional[_Iterable[float]] = ..., high: _Optional[_Iterable[float]] = ...) -> None: ...

class MultiDiscreteSpace(_message.Message):
    __slots__ = ("nvec",)
    NVEC_FIELD_NUMBER: _ClassVar[int]
    nvec: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, nvec: _Optional[_Iterable[int]] = ...) -> None: ...

class MultiBinarySpace(_message.Message):
    __slots__ = ("shape",)
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    shape: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, shape: _Optional[_Iterable[int]] = ...) -> None: ...

class DictSpace(_message.Message):
    __slots__ = ("spaces",)
    SPACES_FIELD_NUMBER: _ClassVar[int]
    spaces: _containers.RepeatedCompositeFieldContainer[DictEntry]
    def __init__(self, spaces: _Optional[_Iterable[_Union[DictEntry, _Mapping]]] = ...) -> None: ...

class DictEntry(_message.Message):
    __slots__ = ("key", "space")
    KEY_FIELD_NUMBER: _ClassVar[int]
    SPACE_FIELD_NUMBER: _ClassVar[int]
    key: str
    space: Space
    def __init__(self, key: _Optional[str] = ..., space: _Optional[_Union[Space, _Mapping]] = ...) -> None: ...

class TupleSpace(_message.Message):
    __slots__ = ("spaces",)
    SPACES_FIELD_NUMBER: _ClassVar[int]
    spaces: _containers.RepeatedCompositeFieldContainer[Space]
    def __init__(self, spaces: _Optional[_Iterable[_Union[Space, _Mapping]]] = ...) -> None: ...

class TextSpace(_message.Message):
    __slots__ = ("min_length", "max_length", "charset")
    MIN_LENGTH_FIELD_NUMBER: _ClassVar[int]
    MAX_LENGTH_FIELD_NUMBER: _ClassVar[int]
    CHARSET_FIELD_NUMBER: _ClassVar[int]
    min_length: int
    max_length: int
    charset: str
    def __init__(self, min_length: _Optional[int] = ..., max_length: _Optional[int] = ..., charset: _Optional[str] = ...) -> None: ...

class AgentSpec(_message.Message):
    __slots__ = ("name", "observation_space", "action_space", "mask_len", "observation_space_json", "action_space_json", "learns")
    NAME_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_SPACE_FIELD_NUMBER: _ClassVar[int]
    ACTION_SPACE_FIELD_NUMBER: _ClassVar[int]
    MASK_LEN_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_SPACE_JSON_FIELD_NUMBER: _ClassVar[int]
    ACTION_SPACE_JSON_FIELD_NUMBER: _ClassVar[int]
    LEARNS_FIELD_NUMBER: _ClassVar[int]
    name: str
    observation_space: Space
    action_space: Space
    mask_len: int
    observation_space_json: str
    action_space_json: str
    learns: bool
    def __init__(self, name: _Optional[str] = ..., observation_space: _Optional[_Union[Space, _Mapping]] = ..., action_space: _Optional[_Union[Space, _Mapping]] = ..., mask_len: _Optional[int] = ..., observation_space_json: _Optional[str] = ..., action_space_json: _Optional[str] = ..., learns: _Optional[bool] = ...) -> None: ...

class AgentSpecRequest(_message.Message):
    __slots__ = ("agent",)
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: str
    def __init__(self, agent: _Optional[str] = ...) -> None: ...

class AgentsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AgentsResponse(_message.Message):
    __slots__ = ("agents",)
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[AgentSpec]
    def __init__(self, agents: _Optional[_Iterable[_Union[AgentSpec, _Mapping]]] = ...) -> None: ...

class ActContext(_message.Message):
    __slots__ = ("trial", "episode", "tick", "agent_id")
    TRIAL_FIELD_NUMBER: _ClassVar[int]
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    TICK_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    trial: str
    episode: int
    tick: int
    agent_id: str
    def __init__(self, trial: _Optional[str] = ..., episode: _Optional[int] = ..., tick: _Optional[int] = ..., agent_id: _Optional[str] = ...) -> None: ...

class ActRequest(_message.Message):
    __slots__ = ("agent", "observation", "mask", "context", "seq", "feedback")
    AGENT_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    MASK_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    FEEDBACK_FIELD_NUMBER: _ClassVar[int]
    agent: str
    observation: Tensor
    mask: Tensor
    context: ActContext
    seq: int
    feedback: _containers.RepeatedCompositeFieldContainer[Feedback]
    def __init__(self, agent: _Optional[str] = ..., observation: _Optional[_Union[Tensor, _Mapping]] = ..., mask: _Optional[_Union[Tensor, _Mapping]] = ..., context: _Optional[_Union[ActContext, _Mapping]] = ..., seq: _Optional[int] = ..., feedback: _Optional[_Iterable[_Union[Feedback, _Mapping]]] = ...) -> None: ...

class Feedback(_message.Message):
    __slots__ = ("trial", "episode", "tick", "agent_id", "step", "retro", "episode_end")
    TRIAL_FIELD_NUMBER: _ClassVar[int]
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    TICK_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    RETRO_FIELD_NUMBER: _ClassVar[int]
    EPISODE_END_FIELD_NUMBER: _ClassVar[int]
    trial: str
    episode: int
    tick: int
    agent_id: str
    step: StepFeedback
    retro: RetroFeedback
    episode_end: EpisodeEndFeedback
    def __init__(self, trial: _Optional[str] = ..., episode: _Optional[int] = ..., tick: _Optional[int] = ..., agent_id: _Optional[str] = ..., step: _Optional[_Union[StepFeedback, _Mapping]] = ..., retro: _Optional[_Union[RetroFeedback, _Mapping]] = ..., episode_end: _Optional[_Union[EpisodeEndFeedback, _Mapping]] = ...) -> None: ...

class RewardSource(_message.Message):
    __slots__ = ("source", "value")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    source: str
    value: float
    def __init__(self, source: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...

class StepFeedback(_message.Message):
    __slots__ = ("reward", "sources", "terminated", "truncated", "start", "last", "span_ticks", "observation", "mask")
    REWARD_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    LAST_FIELD_NUMBER: _ClassVar[int]
    SPAN_TICKS_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    MASK_FIELD_NUMBER: _ClassVar[int]
    reward: float
    sources: _containers.RepeatedCompositeFieldContainer[RewardSource]
    terminated: bool
    truncated: bool
    start: bool
    last: bool
    span_ticks: int
    observation: Tensor
    mask: Tensor
    def __init__(self, reward: _Optional[float] = ..., sources: _Optional[_Iterable[_Union[RewardSource, _Mapping]]] = ..., terminated: _Optional[bool] = ..., truncated: _Optional[bool] = ..., start: _Optional[bool] = ..., last: _Optional[bool] = ..., span_ticks: _Optional[int] = ..., observation: _Optional[_Union[Tensor, _Mapping]] = ..., mask: _Optional[_Union[Tensor, _Mapping]] = ...) -> None: ...

class RetroFeedback(_message.Message):
    __slots__ = ("reward", "source", "rewarded_episode", "arrived_tick")
    REWARD_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    REWARDED_EPISODE_FIELD_NUMBER: _ClassVar[int]
    ARRIVED_TICK_FIELD_NUMBER: _ClassVar[int]
    reward: float
    source: str
    rewarded_episode: int
    arrived_tick: int
    def __init__(self, reward: _Optional[float] = ..., source: _Optional[str] = ..., rewarded_episode: _Optional[int] = ..., arrived_tick: _Optional[int] = ...) -> None: ...

class EpisodeEndFeedback(_message.Message):
    __slots__ = ("truncated",)
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    truncated: bool
    def __init__(self, truncated: _Optional[bool] = ...) -> None: ...

class ActResponse(_message.Message):
    __slots__ = ("action", "seq")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    action: Tensor
    seq: int
    def __init__(self, action: _Optional[_Union[Tensor, _Mapping]] = ..., seq: _Optional[int] = ...) -> None: ...

class ActBatchRequest(_message.Message):
    __slots__ = ("agent", "observations", "masks")
    AGENT_FIELD_NUMBER: _ClassVar[int]
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    MASKS_FIELD_NUMBER: _ClassVar[int]
    agent: str
    observations: Tensor
    masks: Tensor
    def __init__(self, agent: _Optional[str] = ..., observations: _Optional[_Union[Tensor, _Mapping]] = ..., masks: _Optional[_Union[Tensor, _Mapping]] = ...) -> None: ...

class ActBatchResponse(_message.Message):
    __slots__ = ("actions",)
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    actions: Tensor
    def __init__(self, actions: _Optional[_Union[Tensor, _Mapping]] = ...) -> None: ...

class EnvsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class EnvsResponse(_message.Message):
    __slots__ = ("envs",)
    ENVS_FIELD_NUMBER: _ClassVar[int]
    envs: _containers.RepeatedCompositeFieldContainer[EnvInfo]
    def __init__(self, envs: _Optional[_Iterable[_Union[EnvInfo, _Mapping]]] = ...) -> None: ...

class EnvInfo(_message.Message):
    __slots__ = ("name", "description")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class EnvSpecRequest(_message.Message):
    __slots__ = ("session", "env", "config")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    session: str
    env: str
    config: str
    def __init__(self, session: _Optional[str] = ..., env: _Optional[str] = ..., config: _Optional[str] = ...) -> None: ...

class EnvSpec(_message.Message):
    __slots__ = ("env", "agents")
    ENV_FIELD_NUMBER: _ClassVar[int]
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    env: str
    agents: _containers.RepeatedCompositeFieldContainer[AgentSpec]
    def __init__(self, env: _Optional[str] = ..., agents: _Optional[_Iterable[_Union[AgentSpec, _Mapping]]] = ...) -> None: ...

class MakeRequest(_message.Message):
    __slots__ = ("env", "config", "max_ticks")
    ENV_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    MAX_TICKS_FIELD_NUMBER: _ClassVar[int]
    env: str
    config: str
    max_ticks: int
    def __init__(self, env: _Optional[str] = ..., config: _Optional[str] = ..., max_ticks: _Optional[int] = ...) -> None: ...

class MakeResponse(_message.Message):
    __slots__ = ("session", "spec")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    session: str
    spec: EnvSpec
    def __init__(self, session: _Optional[str] = ..., spec: _Optional[_Union[EnvSpec, _Mapping]] = ...) -> None: ...

class ResetRequest(_message.Message):
    __slots__ = ("session", "seed", "info")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    INFO_FIELD_NUMBER: _ClassVar[int]
    session: str
    seed: int
    info: bool
    def __init__(self, session: _Optional[str] = ..., seed: _Optional[int] = ..., info: _Optional[bool] = ...) -> None: ...

class StepRequest(_message.Message):
    __slots__ = ("session", "agent_id", "action", "info")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    INFO_FIELD_NUMBER: _ClassVar[int]
    session: str
    agent_id: str
    action: Tensor
    info: bool
    def __init__(self, session: _Optional[str] = ..., agent_id: _Optional[str] = ..., action: _Optional[_Union[Tensor, _Mapping]] = ..., info: _Optional[bool] = ...) -> None: ...

class CloseRequest(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: str
    def __init__(self, session: _Optional[str] = ...) -> None: ...

class CloseResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class MakeBatchRequest(_message.Message):
    __slots__ = ("env", "config", "num_envs", "workers", "multi_agent")
    ENV_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    NUM_ENVS_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    MULTI_AGENT_FIELD_NUMBER: _ClassVar[int]
    env: str
    config: str
    num_envs: int
    workers: int
    multi_agent: bool
    def __init__(self, env: _Optional[str] = ..., config: _Optional[str] = ..., num_envs: _Optional[int] = ..., workers: _Optional[int] = ..., multi_agent: _Optional[bool] = ...) -> None: ...

class MakeBatchResponse(_message.Message):
    __slots__ = ("session", "spec", "num_envs", "multi_agent")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    NUM_ENVS_FIELD_NUMBER: _ClassVar[int]
    MULTI_AGENT_FIELD_NUMBER: _ClassVar[int]
    session: str
    spec: EnvSpec
    num_envs: int
    multi_agent: bool
    def __init__(self, session: _Optional[str] = ..., spec: _Optional[_Union[EnvSpec, _Mapping]] = ..., num_envs: _Optional[int] = ..., multi_agent: _Optional[bool] = ...) -> None: ...

class ResetBatchRequest(_message.Message):
    __slots__ = ("session", "seed")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    session: str
    seed: int
    def __init__(self, session: _Optional[str] = ..., seed: _Optional[int] = ...) -> None: ...

class StepBatchRequest(_message.Message):
    __slots__ = ("session", "actions")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    session: str
    actions: Tensor
    def __init__(self, session: _Optional[str] = ..., actions: _Optional[_Union[Tensor, _Mapping]] = ...) -> None: ...

class BatchTurn(_message.Message):
    __slots__ = ("observations", "masks", "rewards", "terminated", "truncated", "final_observations", "groups", "spans", "ended")
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    MASKS_FIELD_NUMBER: _ClassVar[int]
    REWARDS_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    FINAL_OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    SPANS_FIELD_NUMBER: _ClassVar[int]
    ENDED_FIELD_NUMBER: _ClassVar[int]
    observations: Tensor
    masks: Tensor
    rewards: Tensor
    terminated: Tensor
    truncated: Tensor
    final_observations: Tensor
    groups: _containers.RepeatedCompositeFieldContainer[BatchGroup]
    spans: Tensor
    ended: Tensor
    def __init__(self, observations: _Optional[_Union[Tensor, _Mapping]] = ..., masks: _Optional[_Union[Tensor, _Mapping]] = ..., rewards: _Optional[_Union[Tensor, _Mapping]] = ..., terminated: _Optional[_Union[Tensor, _Mapping]] = ..., truncated: _Optional[_Union[Tensor, _Mapping]] = ..., final_observations: _Optional[_Union[Tensor, _Mapping]] = ..., groups: _Optional[_Iterable[_Union[BatchGroup, _Mapping]]] = ..., spans: _Optional[_Union[Tensor, _Mapping]] = ..., ended: _Optional[_Union[Tensor, _Mapping]] = ...) -> None: ...

class BatchGroup(_message.Message):
    __slots__ = ("agent", "copies", "observations", "masks")
    AGENT_FIELD_NUMBER: _ClassVar[int]
    COPIES_FIELD_NUMBER: _ClassVar[int]
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    MASKS_FIELD_NUMBER: _ClassVar[int]
    agent: str
    copies: Tensor
    observations: Tensor
    masks: Tensor
    def __init__(self, agent: _Optional[str] = ..., copies: _Optional[_Union[Tensor, _Mapping]] = ..., observations: _Optional[_Union[Tensor, _Mapping]] = ..., masks: _Optional[_Union[Tensor, _Mapping]] = ...) -> None: ...

class Clock(_message.Message):
    __slots__ = ("steps", "tick", "sub_episode")
    STEPS_FIELD_NUMBER: _ClassVar[int]
    TICK_FIELD_NUMBER: _ClassVar[int]
    SUB_EPISODE_FIELD_NUMBER: _ClassVar[int]
    steps: int
    tick: int
    sub_episode: int
    def __init__(self, steps: _Optional[int] = ..., tick: _Optional[int] = ..., sub_episode: _Optional[int] = ...) -> None: ...

class Report(_message.Message):
    __slots__ = ("agent_id", "agent", "parent_id", "observation", "mask", "reward", "terminated", "truncated", "start", "span_ticks", "clock")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    MASK_FIELD_NUMBER: _ClassVar[int]
    REWARD_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    SPAN_TICKS_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    agent: str
    parent_id: str
    observation: Tensor
    mask: Tensor
    reward: float
    terminated: bool
    truncated: bool
    start: bool
    span_ticks: int
    clock: Clock
    def __init__(self, agent_id: _Optional[str] = ..., agent: _Optional[str] = ..., parent_id: _Optional[str] = ..., observation: _Optional[_Union[Tensor, _Mapping]] = ..., mask: _Optional[_Union[Tensor, _Mapping]] = ..., reward: _Optional[float] = ..., terminated: _Optional[bool] = ..., truncated: _Optional[bool] = ..., start: _Optional[bool] = ..., span_ticks: _Optional[int] = ..., clock: _Optional[_Union[Clock, _Mapping]] = ...) -> None: ...

class Turn(_message.Message):
    __slots__ = ("reports", "next", "over", "tick", "info_json")
    REPORTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_FIELD_NUMBER: _ClassVar[int]
    OVER_FIELD_NUMBER: _ClassVar[int]
    TICK_FIELD_NUMBER: _ClassVar[int]
    INFO_JSON_FIELD_NUMBER: _ClassVar[int]
    reports: _containers.RepeatedCompositeFieldContainer[Report]
    next: str
    over: bool
    tick: int
    info_json: str
    def __init__(self, reports: _Optional[_Iterable[_Union[Report, _Mapping]]] = ..., next: _Optional[str] = ..., over: _Optional[bool] = ..., tick: _Optional[int] = ..., info_json: _Optional[str] = ...) -> None: ...

class Actor(_message.Message):
    __slots__ = ("policy", "remote", "client")
    POLICY_FIELD_NUMBER: _ClassVar[int]
    REMOTE_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    policy: str
    remote: str
    client: ClientActor
    def __init__(self, policy: _Optional[str] = ..., remote: _Optional[str] = ..., client: _Optional[_Union[ClientActor, _Mapping]] = ...) -> None: ...

class TrialSpec(_message.Message):
    __slots__ = ("id", "env", "config", "actors", "seed", "episodes", "max_ticks")
    class ActorsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: Actor
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[Actor, _Mapping]] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    ACTORS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    MAX_TICKS_FIELD_NUMBER: _ClassVar[int]
    id: str
    env: str
    config: str
    actors: _containers.MessageMap[str, Actor]
    seed: int
    episodes: int
    max_ticks: int
    def __init__(self, id: _Optional[str] = ..., env: _Optional[str] = ..., config: _Optional[str] = ..., actors: _Optional[_Mapping[str, Actor]] = ..., seed: _Optional[int] = ..., episodes: _Optional[int] = ..., max_ticks: _Optional[int] = ...) -> None: ...

class StartRequest(_message.Message):
    __slots__ = ("spec", "trials", "watched", "watch_pace_ms")
    SPEC_FIELD_NUMBER: _ClassVar[int]
    TRIALS_FIELD_NUMBER: _ClassVar[int]
    WATCHED_FIELD_NUMBER: _ClassVar[int]
    WATCH_PACE_MS_FIELD_NUMBER: _ClassVar[int]
    spec: TrialSpec
    trials: int
    watched: bool
    watch_pace_ms: int
    def __init__(self, spec: _Optional[_Union[TrialSpec, _Mapping]] = ..., trials: _Optional[int] = ..., watched: _Optional[bool] = ..., watch_pace_ms: _Optional[int] = ...) -> None: ...

class StartResponse(_message.Message):
    __slots__ = ("ids",)
    IDS_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, ids: _Optional[_Iterable[str]] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("ids",)
    IDS_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, ids: _Optional[_Iterable[str]] = ...) -> None: ...

class EpisodeResult(_message.Message):
    __slots__ = ("seed", "ticks", "complete", "truncated", "success", "returns")
    SEED_FIELD_NUMBER: _ClassVar[int]
    TICKS_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    RETURNS_FIELD_NUMBER: _ClassVar[int]
    seed: int
    ticks: int
    complete: bool
    truncated: bool
    success: bool
    returns: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, seed: _Optional[int] = ..., ticks: _Optional[int] = ..., complete: _Optional[bool] = ..., truncated: _Optional[bool] = ..., success: _Optional[bool] = ..., returns: _Optional[_Iterable[float]] = ...) -> None: ...

class TrialResult(_message.Message):
    __slots__ = ("agents", "episodes", "steps", "defines_success", "first_episode", "totals")
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    DEFINES_SUCCESS_FIELD_NUMBER: _ClassVar[int]
    FIRST_EPISODE_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedScalarFieldContainer[str]
    episodes: _containers.RepeatedCompositeFieldContainer[EpisodeResult]
    steps: int
    defines_success: bool
    first_episode: int
    totals: EpisodeTotals
    def __init__(self, agents: _Optional[_Iterable[str]] = ..., episodes: _Optional[_Iterable[_Union[EpisodeResult, _Mapping]]] = ..., steps: _Optional[int] = ..., defines_success: _Optional[bool] = ..., first_episode: _Optional[int] = ..., totals: _Optional[_Union[EpisodeTotals, _Mapping]] = ...) -> None: ...

class EpisodeTotals(_message.Message):
    __slots__ = ("episodes", "complete", "successes", "returns")
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    RETURNS_FIELD_NUMBER: _ClassVar[int]
    episodes: int
    complete: int
    successes: int
    returns: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, episodes: _Optional[int] = ..., complete: _Optional[int] = ..., successes: _Optional[int] = ..., returns: _Optional[_Iterable[float]] = ...) -> None: ...

class TrialStateChange(_message.Message):
    __slots__ = ("trial", "state", "error", "result")
    TRIAL_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    trial: str
    state: TrialState
    error: str
    result: TrialResult
    def __init__(self, trial: _Optional[str] = ..., state: _Optional[_Union[TrialState, str]] = ..., error: _Optional[str] = ..., result: _Optional[_Union[TrialResult, _Mapping]] = ...) -> None: ...

class StopRequest(_message.Message):
    __slots__ = ("ids",)
    IDS_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, ids: _Optional[_Iterable[str]] = ...) -> None: ...

class StopResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class TrialStatus(_message.Message):
    __slots__ = ("id", "env", "state", "error", "episode", "tick", "reason", "clients")
    ID_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    TICK_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CLIENTS_FIELD_NUMBER: _ClassVar[int]
    id: str
    env: str
    state: TrialState
    error: str
    episode: int
    tick: int
    reason: str
    clients: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., env: _Optional[str] = ..., state: _Optional[_Union[TrialState, str]] = ..., error: _Optional[str] = ..., episode: _Optional[int] = ..., tick: _Optional[int] = ..., reason: _Optional[str] = ..., clients: _Optional[_Iterable[str]] = ...) -> None: ...

class ListResponse(_message.Message):
    __slots__ = ("trials", "next_page_token")
    TRIALS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    trials: _containers.RepeatedCompositeFieldContainer[TrialStatus]
    next_page_token: str
    def __init__(self, trials: _Optional[_Iterable[_Union[TrialStatus, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RewardRequest(_message.Message):
    __slots__ = ("trial", "agent_id", "next_step", "episode", "tick", "value", "source")
    TRIAL_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    NEXT_STEP_FIELD_NUMBER: _ClassVar[int]
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    TICK_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    trial: str
    agent_id: str
    next_step: bool
    episode: int
    tick: int
    value: float
    source: str
    def __init__(self, trial: _Optional[str] = ..., agent_id: _Optional[str] = ..., next_step: _Optional[bool] = ..., episode: _Optional[int] = ..., tick: _Optional[int] = ..., value: _Optional[float] = ..., source: _Optional[str] = ...) -> None: ...

class RewardResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ClientActor(_message.Message):
    __slots__ = ("timeout_ms", "default_action", "default_policy", "idle_timeout_ms")
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_ACTION_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_POLICY_FIELD_NUMBER: _ClassVar[int]
    IDLE_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    timeout_ms: int
    default_action: int
    default_policy: str
    idle_timeout_ms: int
    def __init__(self, timeout_ms: _Optional[int] = ..., default_action: _Optional[int] = ..., default_policy: _Optional[str] = ..., idle_timeout_ms: _Optional[int] = ...) -> None: ...

class PendingRequest(_message.Message):
    __slots__ = ("trial", "agent", "wait_ms")
    TRIAL_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    trial: str
    agent: str
    wait_ms: int
    def __init__(self, trial: _Optional[str] = ..., agent: _Optional[str] = ..., wait_ms: _Optional[int] = ...) -> None: ...

class ActionChoice(_message.Message):
    __slots__ = ("raw", "name", "allowed")
    RAW_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    raw: int
    name: str
    allowed: bool
    def __init__(self, raw: _Optional[int] = ..., name: _Optional[str] = ..., allowed: _Optional[bool] = ...) -> None: ...

class Frame(_message.Message):
    __slots__ = ("text", "scene_json", "svg")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SCENE_JSON_FIELD_NUMBER: _ClassVar[int]
    SVG_FIELD_NUMBER: _ClassVar[int]
    text: str
    scene_json: str
    svg: str
    def __init__(self, text: _Optional[str] = ..., scene_json: _Optional[str] = ..., svg: _Optional[str] = ...) -> None: ...

class ClientMessage(_message.Message):
    __slots__ = ("to", "payload")
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    to: str
    payload: str
    def __init__(self, to: _Optional[str] = ..., payload: _Optional[str] = ..., **kwargs) -> None: ...

class PendingResponse(_message.Message):
    __slots__ = ("state", "acting", "agent_id", "episode", "tick", "observation", "frame", "actions", "remaining_ms", "inbox", "error", "receivers", "last_reward")
    STATE_FIELD_NUMBER: _ClassVar[int]
    ACTING_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    TICK_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    FRAME_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    REMAINING_MS_FIELD_NUMBER: _ClassVar[int]
    INBOX_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RECEIVERS_FIELD_NUMBER: _ClassVar[int]
    LAST_REWARD_FIELD_NUMBER: _ClassVar[int]
    state: TrialState
    acting: bool
    agent_id: str
    episode: int
    tick: int
    observation: _containers.RepeatedScalarFieldContainer[float]
    frame: Frame
    actions: _containers.RepeatedCompositeFieldContainer[ActionChoice]
    remaining_ms: int
    inbox: _containers.RepeatedCompositeFieldContainer[ClientMessage]
    error: str
    receivers: _containers.RepeatedScalarFieldContainer[str]
    last_reward: float
    def __init__(self, state: _Optional[_Union[TrialState, str]] = ..., acting: _Optional[bool] = ..., agent_id: _Optional[str] = ..., episode: _Optional[int] = ..., tick: _Optional[int] = ..., observation: _Optional[_Iterable[float]] = ..., frame: _Optional[_Union[Frame, _Mapping]] = ..., actions: _Optional[_Iterable[_Union[ActionChoice, _Mapping]]] = ..., remaining_ms: _Optional[int] = ..., inbox: _Optional[_Iterable[_Union[ClientMessage, _Mapping]]] = ..., error: _Optional[str] = ..., receivers: _Optional[_Iterable[str]] = ..., last_reward: _Optional[float] = ...) -> None: ...

class ClientActRequest(_message.Message):
    __slots__ = ("trial", "agent", "tick", "name", "raw", "messages")
    TRIAL_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    TICK_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RAW_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    trial: str
    agent: str
    tick: int
    name: str
    raw: int
    messages: _containers.RepeatedCompositeFieldContainer[ClientMessage]
    def __init__(self, trial: _Optional[str] = ..., agent: _Optional[str] = ..., tick: _Optional[int] = ..., name: _Optional[str] = ..., raw: _Optional[int] = ..., messages: _Optional[_Iterable[_Union[ClientMessage, _Mapping]]] = ...) -> None: ...

class ClientActResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class EpisodesRequest(_message.Message):
    __slots__ = ("trial",)
    TRIAL_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    trial: str
    def __init__(self, trial: _Optional[str] = ..., **kwargs) -> None: ...

class EpisodesResponse(_message.Message):
    __slots__ = ("agents", "episodes", "first")
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    FIRST_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedScalarFieldContainer[str]
    episodes: _containers.RepeatedCompositeFieldContainer[EpisodeResult]
    first: int
    def __init__(self, agents: _Optional[_Iterable[str]] = ..., episodes: _Optional[_Iterable[_Union[EpisodeResult, _Mapping]]] = ..., first: _Optional[int] = ...) -> None: ...

class ModelInfo(_message.Message):
    __slots__ = ("name", "version", "sha256", "size", "meta_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    META_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: int
    sha256: str
    size: int
    meta_json: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[int] = ..., sha256: _Optional[str] = ..., size: _Optional[int] = ..., meta_json: _Optional[str] = ...) -> None: ...

class PutModelRequest(_message.Message):
    __slots__ = ("name", "data", "meta_json", "data_sha256")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    META_JSON_FIELD_NUMBER: _ClassVar[int]
    DATA_SHA256_FIELD_NUMBER: _ClassVar[int]
    name: str
    data: bytes
    meta_json: str
    data_sha256: str
    def __init__(self, name: _Optional[str] = ..., data: _Optional[bytes] = ..., meta_json: _Optional[str] = ..., data_sha256: _Optional[str] = ...) -> None: ...

class GetModelRequest(_message.Message):
    __slots__ = ("name", "version", "meta_only")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    META_ONLY_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: int
    meta_only: bool
    def __init__(self, name: _Optional[str] = ..., version: _Optional[int] = ..., meta_only: _Optional[bool] = ...) -> None: ...

class GetModelResponse(_message.Message):
    __slots__ = ("model", "data")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    model: ModelInfo
    data: bytes
    def __init__(self, model: _Optional[_Union[ModelInfo, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class ListModelsRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class ListModelsResponse(_message.Message):
    __slots__ = ("models",)
    MODELS_FIELD_NUMBER: _ClassVar[int]
    models: _containers.RepeatedCompositeFieldContainer[ModelInfo]
    def __init__(self, models: _Optional[_Iterable[_Union[ModelInfo, _Mapping]]] = ...) -> None: ...

class WatchModelRequest(_message.Message):
    __slots__ = ("name", "after")
    NAME_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    name: str
    after: int
    def __init__(self, name: _Optional[str] = ..., after: _Optional[int] = ...) -> None: ...
