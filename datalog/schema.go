package datalog

import (
	"bytes"
	"fmt"
	"net/url"
	"runtime/debug"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/spaces"
)

// FormatVersion is the version of the log's layout, columns and metadata that this
// package writes (metadata key MetaFormatVersion). Readers refuse logs of a later
// version. Version 2 added the checksum of every record batch and dictionary batch
// (see "Checksums" in the package documentation); logs of version 1 read as before.
const FormatVersion = 2

// checksumVersion is the first format version whose batches all have checksums.
const checksumVersion = 2

// ModulePath is the module whose version the logs name (MetaVersion).
const ModulePath = "github.com/batonrl/baton"

// The keys of the schema metadata of a part. Every part has MetaFormatVersion,
// MetaVersion, MetaTable and MetaCompression; the parts of an agent's partition also
// have the others, which describe the agent and the trial whose rows opened the part.
const (
	metaPrefix = "baton."
	// MetaFormatVersion is FormatVersion, in decimal.
	MetaFormatVersion = "baton.format_version"
	// MetaVersion is the version of the module that wrote the log, as the Go build
	// information tells it ("v0.3.0", "(devel)" for a build from a checkout).
	MetaVersion = "baton.version"
	// MetaTable names the table: "steps" for an agent's partition, "trials",
	// "episodes" or "rewards".
	MetaTable = "baton.table"
	// MetaCompression names the body compression: "none", "lz4" or "zstd".
	MetaCompression = "baton.compression"
	// MetaAgent is the agent's name, the value of the agent= partition key.
	MetaAgent = "baton.agent"
	// MetaObservationSpace and MetaActionSpace are the agent's spaces as the spaces
	// JSON spec (spaces.Marshal); the observation column holds observations
	// flattened by the observation space (spaces.Space.FlattenTo).
	MetaObservationSpace = "baton.observation_space"
	MetaActionSpace      = "baton.action_space"
	// MetaObservationDim is the length of a flat observation, MetaActionDim that of
	// an action (1 for Discrete), MetaMaskLen that of the action mask (0: none).
	MetaObservationDim = "baton.observation_dim"
	MetaActionDim      = "baton.action_dim"
	MetaMaskLen        = "baton.mask_len"
	// MetaEnv and MetaEnvConfig are the registered name and the JSON configuration
	// ("" for the defaults) of the environment of the trial that opened the part;
	// MetaTrial is that trial's id and MetaSeed its seed, in decimal. The trials table
	// has every trial's.
	MetaEnv       = "baton.env"
	MetaEnvConfig = "baton.env_config"
	MetaTrial     = "baton.trial"
	MetaSeed      = "baton.seed"
)

// The table names of MetaTable, and the folders of the tables other than the steps.
const (
	TableSteps    = "steps"
	TableTrials   = "trials"
	TableEpisodes = "episodes"
	TableRewards  = "rewards"
)

// tableDir is the folder of a table under the log's directory: "agent=NAME" for an
// agent's steps, "_trials" and so on for the others (the leading underscore makes
// pyarrow's dataset discovery skip them).
func tableDir(table, agent string) string {
	if table == TableSteps {
		return "agent=" + url.PathEscape(agent)
	}
	return "_" + table
}

// moduleVersion returns the version of ModulePath in the running binary.
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if bi.Main.Path == ModulePath {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == ModulePath {
			return d.Version
		}
	}
	return "unknown"
}

// The columns of an agent's steps, in order; colMask is absent for an agent without
// a mask, and the columns after it move up by one.
const (
	colTrial = iota
	colEpisode
	colTick
	colIndex
	colAgentID
	colParentID
	colStart
	colActing
	colObs
	colAction
	colMask
	colReward
	colSources
	colTerminated
	colTruncated
	colSpan
	colMessages
)

var (
	dictString  = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	sourceType  = arrow.StructOf(arrow.Field{Name: "source", Type: dictString}, arrow.Field{Name: "value", Type: arrow.PrimitiveTypes.Float32})
	sourcesType = arrow.ListOf(sourceType)
	messageType = arrow.StructOf(
		arrow.Field{Name: "from", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "to", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "payload", Type: arrow.BinaryTypes.Binary},
		arrow.Field{Name: "sent", Type: arrow.PrimitiveTypes.Int64},
	)
)

// shape is what the steps of an agent look like: its spaces and the types they give
// the observation, action and mask columns.
type shape struct {
	name             string
	obs, act         spaces.Space
	obsJSON, actJSON []byte
	obsDim, maskLen  int
	actKind          spaces.Kind
	actDim           int
	actType          arrow.DataType
	// actFloats and actInts tell a Box action (Action.Floats) and a MultiDiscrete or
	// MultiBinary one (Action.Ints) from a Discrete one (Action.Int).
	actFloats, actInts bool
}

func newShape(s env.Spec) (*shape, error) {
	if s.ObservationSpace == nil || s.ActionSpace == nil {
		return nil, fmt.Errorf("%w: agent %s has no observation or action space", ErrEvent, s.Name)
	}
	sh := &shape{name: s.Name, obs: s.ObservationSpace, act: s.ActionSpace, obsDim: s.ObservationSpace.FlatDim(), maskLen: s.MaskLen, actKind: s.ActionSpace.Kind()}
	var err error
	if sh.obsJSON, err = spaces.Marshal(s.ObservationSpace); err != nil {
		return nil, fmt.Errorf("%w: agent %s: observation space: %w", ErrEvent, s.Name, err)
	}
	if sh.actJSON, err = spaces.Marshal(s.ActionSpace); err != nil {
		return nil, fmt.Errorf("%w: agent %s: action space: %w", ErrEvent, s.Name, err)
	}
	switch sp := s.ActionSpace.(type) {
	case spaces.Discrete, *spaces.Discrete:
		sh.actDim, sh.actType = 1, arrow.PrimitiveTypes.Int64
	case *spaces.Box:
		sh.actDim = sp.FlatDim()
		sh.actType = arrow.FixedSizeListOf(int32(sh.actDim), arrow.PrimitiveTypes.Float32)
		sh.actFloats = true
	case *spaces.MultiDiscrete:
		sh.actDim = len(sp.Nvec())
		sh.actType = arrow.FixedSizeListOf(int32(sh.actDim), arrow.PrimitiveTypes.Int64)
		sh.actInts = true
	case *spaces.MultiBinary:
		sh.actDim = sp.FlatDim()
		sh.actType = arrow.FixedSizeListOf(int32(sh.actDim), arrow.PrimitiveTypes.Int64)
		sh.actInts = true
	default:
		return nil, fmt.Errorf("%w: agent %s: %v is not an action space (Discrete, Box, MultiDiscrete or MultiBinary)", ErrEvent, s.Name, s.ActionSpace)
	}
	return sh, nil
}

// same reports whether s describes the same steps as sh.
func (sh *shape) same(s env.Spec) bool {
	if s.MaskLen != sh.maskLen || s.ObservationSpace == nil || s.ActionSpace == nil {
		return false
	}
	if s.ObservationSpace != sh.obs && !s.ObservationSpace.Equal(sh.obs) {
		return false
	}
	return s.ActionSpace == sh.act || s.ActionSpace.Equal(sh.act)
}

// col returns the position of column c in the agent's schema.
func (sh *shape) col(c int) int {
	if c > colMask && sh.maskLen == 0 {
		return c - 1
	}
	return c
}

func (sh *shape) fields() []arrow.Field {
	fs := []arrow.Field{
		{Name: "trial_id", Type: dictString},
		{Name: "episode", Type: arrow.PrimitiveTypes.Int32},
		{Name: "tick", Type: arrow.PrimitiveTypes.Int64},
		{Name: "index", Type: arrow.PrimitiveTypes.Int32},
		{Name: "agent_id", Type: dictString},
		{Name: "parent_agent_id", Type: dictString, Nullable: true},
		{Name: "start", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "acting", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "observation", Type: arrow.FixedSizeListOf(int32(sh.obsDim), arrow.PrimitiveTypes.Float32)},
		{Name: "action", Type: sh.actType, Nullable: true},
	}
	if sh.maskLen > 0 {
		fs = append(fs, arrow.Field{Name: "action_mask", Type: arrow.FixedSizeListOf(int32(sh.maskLen), arrow.FixedWidthTypes.Boolean), Nullable: true})
	}
	return append(fs,
		arrow.Field{Name: "reward", Type: arrow.PrimitiveTypes.Float32},
		arrow.Field{Name: "reward_sources", Type: sourcesType},
		arrow.Field{Name: "terminated", Type: arrow.FixedWidthTypes.Boolean},
		arrow.Field{Name: "truncated", Type: arrow.FixedWidthTypes.Boolean},
		arrow.Field{Name: "span_ticks", Type: arrow.PrimitiveTypes.Int32},
		arrow.Field{Name: "messages", Type: arrow.ListOf(messageType)},
	)
}

// metadata returns the schema metadata of a part of the agent opened by trial t.
func (sh *shape) metadata(base map[string]string, t *trialLog) arrow.Metadata {
	md := map[string]string{
		MetaAgent:            sh.name,
		MetaObservationSpace: string(sh.obsJSON),
		MetaActionSpace:      string(sh.actJSON),
		MetaObservationDim:   strconv.Itoa(sh.obsDim),
		MetaActionDim:        strconv.Itoa(sh.actDim),
		MetaMaskLen:          strconv.Itoa(sh.maskLen),
	}
	if t != nil && t.info != nil {
		md[MetaEnv] = t.info.Env
		md[MetaEnvConfig] = string(bytes.TrimSpace(t.info.Config))
		md[MetaTrial] = t.info.ID
		md[MetaSeed] = strconv.FormatUint(t.info.Seed, 10)
	}
	for k, v := range base {
		md[k] = v
	}
	return arrow.MetadataFrom(md)
}

// The columns of the trials table.
const (
	trialID = iota
	trialIndex
	trialEnv
	trialConfig
	trialSeed
	trialEpisodes
	trialMaxTicks
	trialAgents
	trialPolicies
	trialDefinesSuccess
	trialState
	trialError
	trialTask
)

var trialFields = []arrow.Field{
	{Name: "trial_id", Type: arrow.BinaryTypes.String},
	{Name: "index", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "env", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "config", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "seed", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "episodes", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "max_ticks", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "agents", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "policies", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "defines_success", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "state", Type: arrow.BinaryTypes.String},
	{Name: "error", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "task", Type: arrow.BinaryTypes.String, Nullable: true},
}

// The columns of the episodes table.
const (
	epTrial = iota
	epEpisode
	epSeed
	epTicks
	epTruncated
	epSuccess
	epReturns
	epMetrics
)

var (
	returnType = arrow.StructOf(arrow.Field{Name: "agent", Type: arrow.BinaryTypes.String}, arrow.Field{Name: "value", Type: arrow.PrimitiveTypes.Float64})
	metricType = arrow.StructOf(arrow.Field{Name: "name", Type: arrow.BinaryTypes.String}, arrow.Field{Name: "value", Type: arrow.PrimitiveTypes.Float64})
)

var episodeFields = []arrow.Field{
	{Name: "trial_id", Type: arrow.BinaryTypes.String},
	{Name: "episode", Type: arrow.PrimitiveTypes.Int32},
	{Name: "seed", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "ticks", Type: arrow.PrimitiveTypes.Int64},
	{Name: "truncated", Type: arrow.FixedWidthTypes.Boolean},
	{Name: "success", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "returns", Type: arrow.ListOf(returnType)},
	{Name: "metrics", Type: arrow.ListOf(metricType)},
}

// The columns of the rewards table.
const (
	rwTrial = iota
	rwEpisode
	rwTick
	rwAgent
	rwAgentID
	rwSource
	rwValue
	rwArrivedEpisode
	rwArrivedTick
)

var rewardFields = []arrow.Field{
	{Name: "trial_id", Type: arrow.BinaryTypes.String},
	{Name: "episode", Type: arrow.PrimitiveTypes.Int32},
	{Name: "tick", Type: arrow.PrimitiveTypes.Int64},
	{Name: "agent", Type: arrow.BinaryTypes.String},
	{Name: "agent_id", Type: arrow.BinaryTypes.String},
	{Name: "source", Type: arrow.BinaryTypes.String},
	{Name: "value", Type: arrow.PrimitiveTypes.Float32},
	{Name: "arrived_episode", Type: arrow.PrimitiveTypes.Int32},
	{Name: "arrived_tick", Type: arrow.PrimitiveTypes.Int64},
}
