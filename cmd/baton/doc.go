// Command baton is baton's command line over the environments it ships (the maze, the
// flat maze, the cart-pole, the web tester and rock-paper-scissors): run, play, envs,
// graph, bench, inspect, replay, log recover and serve. It is package cli's Main over
// the shipped catalog; the commands are documented there (go doc
// github.com/batonrl/baton/cli). A program of the user's own module is the same command
// over its own environments: os.Exit(cli.Main(mymodule.Register)).
//
// What you touch here: nothing; run it. A command over your own environments is your
// own main package calling cli.Main.
package main
