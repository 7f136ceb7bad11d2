// Command libbaton is the fast lane's C library of the environments baton ships
// (envs/catalog): built with
//
// What you touch here: nothing; build it, or let Python build it. A library of your own
// environments is your own main package calling capi.Use.
//
//	go build -buildmode=c-shared -o libbaton.so ./cmd/libbaton
//
// (which Python's baton.vector does on first use in a checkout, or python -m
// baton.build; a wheel of the Python package carries it built), it steps vectors of
// those environments in the process that loads it, writing their results into the
// caller's memory.
//
// It is package capi's C ABI over catalog.Register, with the scrambled variants of
// maze, maze-flat and cartpole (package scramble: "maze-scrambled", which Python's
// scramble=SEED keyword makes); capi documents the functions, and
// a library of a user's own environments is the same few lines in the user's module
// (cmd/libNAME/main.go) with the user's register functions.
package main
