// Package catalog is the registry of the environments baton ships: the maze (and its
// flat variant), the cart-pole, the web tester and rock-paper-scissors, each
// registered by its own package. The command
// (cmd/baton, over package cli) and the fast lane's library (cmd/libbaton, which
// Python's baton.vector loads) both build their registry with New or Register, so
// that a name means the same
// environment, with the same configuration, everywhere.
//
// What you touch here: call Register (or New, for the registry alone) to have baton's
// shipped environments beside your own, as cli.Main and capi.Use take them; implement
// nothing.
package catalog
