// Package registry is what an environment's author writes to make an environment
// known to every baton tool: an Entry that describes the environment, registered by
// name into a Registry. It is to baton what database/sql/driver is to database/sql:
// authors implement and fill in these types, and the packages that run, serve, log and
// show environments (runners, remote, cli, capi, the fast lane) only read them.
//
// # What an author touches
//
// An environment's package exports one register function,
//
//	func Register(r *registry.Registry) error { return r.Register(registry.Entry{...}) }
//
// whose Entry says how to open a JSON configuration into a Factory of environments
// (env.MultiAgent; SingleAgent adapts an env.Env; FactoryFunc adapts a function), the
// named policies of each agent with a default (AgentEntry, PolicyEntry), and
// optionally what makes an episode a success, its metrics (Metric), and how people see
// its actions and states (Look: LEFT for a raw 3, "[4 8] LEFT" for an Info, and the
// state drawn as an env.Frame by Look.Frame: the entry's Render, else the
// environment's own env.Renderer; RenderState makes a Render for the hrl runtime).
// DecodeConfig reads a configuration strictly, as every shipped environment does.
// Nothing else in this package needs to be written by an author; everything in it
// may be used.
//
// # What a tool touches
//
// Commands, services and libraries build a Registry (New), have environments register
// into it (maze.Register, catalog.Register), and look them up by name (Lookup, Names,
// All). Unknown names are *NameError values whose one-line message lists the choices;
// a name registered twice is a *DuplicateError that names both registrations.
//
// # Configurations from the network
//
// A configuration may come from a trusted caller (the command line, a program) or
// from the network (a server's caller). Open opens the first kind: a file it names is
// read from its path with ReadConfigFile (a regular file of at most
// MaxConfigFileBytes). Servers open the second kind through a remote view of the
// registry (Registry.Remote), whose entries open with OpenRemote and a Remote: a file
// is read with Remote.ReadFile only, inside the folder the server's operator allows,
// and sizes are checked with Remote.Check against the entry's Limits (defaults the
// operator may change), a refusal being a *LimitError that names the limit and how to
// raise it. An entry without OpenRemote opens both kinds with Open. A Factory that
// implements Sizer estimates the memory of what it builds, for servers' budgets.
//
// # Layering
//
// registry imports the core (agent, env, hrl) and nothing that runs trials: an
// environment's package that registers itself does not depend on the runner, the
// log or the network.
//
// # Concurrency
//
// A Registry is safe for concurrent use; Look's functions, Open and OpenRemote must
// be too. A Remote is a value, safe for concurrent use.
package registry
