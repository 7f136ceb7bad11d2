package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/batonrl/baton/registry"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Main runs the command line of os.Args over a registry made of the given register
// functions, in order (with none, of the environments baton ships: envs/catalog),
// and returns the exit status for os.Exit: 0 on success, 2 for bad input, 1 for a
// failure while running, 130 when SIGINT or SIGTERM stopped it. It is the whole body of
// a program's main:
//
//	func main() { os.Exit(cli.Main(keydoor.Register)) }
//
// The program's name (os.Args[0]) heads its help and its error messages. Main handles
// SIGINT and SIGTERM for as long as it runs: the first one cancels the command, which
// stops its trials and closes its log. The bench command, which runs baton's own
// benchmark suite, is there only over the shipped environments (no register function).
func Main(register ...func(*registry.Registry) error) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	prog := filepath.Base(os.Args[0])
	envs, err := newEnvironments(prog, register)
	if err != nil {
		fmt.Fprintln(os.Stderr, prog+": "+oneLine(err.Error()))
		return 1
	}
	return runWith(ctx, envs, os.Args[1:], os.Stdout, os.Stderr)
}

// Run runs one command line, args without the program's name, as Main does, over a
// registry made of the given register functions (none: the shipped environments). It
// reads stdin (a person's input to play --human), writes to stdout and stderr, and
// treats ctx's end as an interrupt (exit status 130); it reads neither os.Args nor
// signals, so that a program's tests can run its command line in the process. Errors
// are headed "baton: ".
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, register ...func(*registry.Registry) error) int {
	envs, err := newEnvironments("baton", register)
	if err != nil {
		fmt.Fprintln(stderr, "baton: "+oneLine(err.Error()))
		return 1
	}
	return runWithInput(ctx, envs, args, stdin, stdout, stderr)
}

// Command returns the command tree that Main and Run execute, named prog, over a
// registry made of the given register functions (none: the shipped environments), for
// tools that work on the tree rather than run it: the command line reference of the
// documentation is written from it with cobra's doc package. Executing it is Run's job;
// its output goes to os.Stdout and os.Stderr.
func Command(prog string, register ...func(*registry.Registry) error) (*cobra.Command, error) {
	envs, err := newEnvironments(prog, register)
	if err != nil {
		return nil, err
	}
	return newRoot(envs, os.Stdout, os.Stderr), nil
}

// run is Run over the shipped environments, reading os.Stdin.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return Run(ctx, args, nil, stdout, stderr)
}

// exitInterrupted is the exit status of a command stopped by an interrupt (SIGINT or
// SIGTERM, which cancel main's context): 128 + SIGINT, as shells report.
const exitInterrupted = 130

// runWith is run over given environments, reading os.Stdin.
func runWith(ctx context.Context, envs *environments, args []string, stdout, stderr io.Writer) int {
	return runWithInput(ctx, envs, args, nil, stdout, stderr)
}

// runWithInput is runWith reading stdin instead of os.Stdin when it is not nil.
func runWithInput(ctx context.Context, envs *environments, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(envs, stdout, stderr)
	if stdin != nil {
		root.SetIn(stdin)
	}
	root.SetArgs(append([]string{}, args...)) // never nil: cobra would read os.Args
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	if _, reported := errors.AsType[*reportedError](err); !reported {
		fmt.Fprintln(stderr, envs.prog+": "+oneLine(err.Error()))
	}
	switch {
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return exitInterrupted
	case isUsage(err):
		return 2
	}
	return 1
}

// reportedError is an error that the command has already told the person about (baton
// play --human's summary says that the trial was interrupted): it sets the exit status
// and prints nothing more.
type reportedError struct{ err error }

func (e *reportedError) Error() string { return e.err.Error() }
func (e *reportedError) Unwrap() error { return e.err }

// usageError is bad input: exit status 2.
type usageError struct {
	msg string
	err error // the cause, if any
}

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

func isUsage(err error) bool {
	_, ok := errors.AsType[*usageError](err)
	return ok
}

// oneLine joins the lines of a message (errors.Join and multierr use newlines).
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// choices formats the names a user may pick from, as registry.NameError does.
func choices(names []string) string {
	if len(names) == 0 {
		return "there are none"
	}
	return "choices: " + strings.Join(names, ", ")
}

func newRoot(envs *environments, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   envs.prog,
		Short: "Run and play hierarchical multi-agent environments",
		Long: `baton runs hierarchical environments: typed agents that pass control to each other
(a strategy agent choosing where to go, a motion agent getting there), stepped by baton's
pure runtime (package hrl). "baton run" runs a campaign of many trials and sums them up
(with --log DIR, writing every step to an Apache Arrow activity log), "baton play"
prints one episode step by step, "baton envs" lists the environments and "baton graph"
draws an environment's switching state machine. "baton inspect DIR" sums up a log,
"baton replay DIR" checks it by replaying its trials, and "baton log recover DIR"
repairs the files of a writer that was killed. "baton serve" puts agents, environments
or trials on the network over gRPC.`,
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
			slices.Sort(names)
			if len(args) == 0 {
				return usagef("missing command (%s)", choices(names))
			}
			return usagef("unknown command %q (%s)", args[0], choices(names))
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newRun(envs), newPlay(envs), newEnvs(envs), newGraph(envs),
		newInspect(), newReplay(envs), newLogCmd(), newServe(envs), newModels())
	if envs.shipped {
		root.AddCommand(newBench(), newNew())
	}
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
