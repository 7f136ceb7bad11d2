package remote

// The converters at the package's edge, exported to its external tests.
var (
	SpaceProto         = spaceProto
	SpaceFromProto     = spaceFromProto
	AgentSpecProto     = agentSpecProto
	AgentSpecFromProto = agentSpecFromProto
)
