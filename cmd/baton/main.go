package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line args with the environments baton ships and returns the
// exit status: 0 on success, 2 for bad input, 1 for a failure while running.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWith(ctx, environments(), args, stdout, stderr)
}

// runWith is run over a given table of environments.
func runWith(ctx context.Context, envs table, args []string, stdout, stderr io.Writer) int {
	root := newRoot(envs, stdout, stderr)
	root.SetArgs(append([]string{}, args...)) // never nil: cobra would read os.Args
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "baton: "+oneLine(err.Error()))
	if _, ok := errors.AsType[*usageError](err); ok {
		return 2
	}
	return 1
}

// usageError is bad input: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// oneLine joins the lines of a message (errors.Join and multierr use newlines).
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// choices formats the names a user may pick from, sorted.
func choices(names []string) string {
	names = slices.Sorted(slices.Values(names))
	return "choose one of: " + strings.Join(names, ", ")
}

func newRoot(envs table, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "baton",
		Short: "Play hierarchical multi-agent environments",
		Long: `baton plays hierarchical environments: typed agents that pass control to each other
(a strategy agent choosing where to go, a motion agent getting there), stepped by baton's
pure runtime (package hrl).`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		// Runnable, so that a missing or unknown command reaches RunE, which names the
		// choices in one line (cobra's own message spans several).
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var names []string
			for _, c := range cmd.Commands() {
				if c.IsAvailableCommand() {
					names = append(names, c.Name())
				}
			}
			if len(args) == 0 {
				return usagef("missing command (%s)", choices(names))
			}
			return usagef("unknown command %q (%s)", args[0], choices(names))
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newPlay(envs))
	return root
}

// flagError turns a flag parsing error into a usage error that names the flag and
// what it wants, or lists the command's flags.
func flagError(cmd *cobra.Command, err error) error {
	var f *pflag.Flag
	if e, ok := errors.AsType[*pflag.InvalidValueError](err); ok {
		f = e.GetFlag()
	} else if e, ok := errors.AsType[*pflag.ValueRequiredError](err); ok {
		f = e.GetFlag()
	}
	if f != nil {
		_, usage := pflag.UnquoteUsage(f)
		return usagef("%v (--%s: %s)", err, f.Name, usage)
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, "--"+f.Name) })
	return usagef("%v (flags of %s: %s)", err, cmd.CommandPath(), strings.Join(slices.Sorted(slices.Values(names)), ", "))
}
