package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/batonrl/baton/models"
	"github.com/batonrl/baton/remote"
	"github.com/spf13/cobra"
)

const modelsLong = `models lists, shows, pulls and pushes trained models in a model registry: versions by
name, each its bytes (an ONNX policy, a checkpoint) and its metadata (the environment
and agent, their spaces, the training run, its figures and learning curve). The
registry is a directory (--dir; $BATON_MODELS, else ~/.local/share/baton/models) or a
model server (--server grpc://HOST:PORT, started with "baton serve models"). A model
is named NAME, NAME@latest or NAME@VERSION.`

// modelFlags choose the registry a models command talks to.
type modelFlags struct {
	dir     string
	server  string
	keyFile string
	caFile  string
	jsonOut bool
}

func (f *modelFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", "", "the registry's `DIR` ($BATON_MODELS, else ~/.local/share/baton/models)")
	fl.StringVar(&f.server, "server", "", "a model server at `TARGET` (grpc://HOST:PORT) instead of a directory")
	fl.StringVar(&f.keyFile, "key-file", "", "present the key for the model (or the default key) from `FILE` (NAME=KEY lines) to --server")
	fl.StringVar(&f.caFile, "tls-ca", "", "trust the PEM certificates of `FILE` for a grpcs:// --server")
	fl.BoolVar(&f.jsonOut, "json", false, "print JSON")
}

// open returns the store, and a function that closes it.
func (f *modelFlags) open(ctx context.Context, name string) (models.Store, func(), error) {
	if f.server == "" {
		if f.keyFile != "" || f.caFile != "" {
			return nil, nil, usagef("--key-file and --tls-ca go with --server")
		}
		dir := f.dir
		if dir == "" {
			var err error
			if dir, err = models.DefaultDir(); err != nil {
				return nil, nil, err
			}
		}
		d, err := models.OpenDir(dir)
		if err != nil {
			return nil, nil, err
		}
		return d, func() {}, nil
	}
	if f.dir != "" {
		return nil, nil, usagef("--dir and --server are exclusive")
	}
	var keys *remote.Keys
	if f.keyFile != "" {
		k, err := remote.ReadKeys(f.keyFile)
		if err != nil {
			return nil, nil, usageErr(err, "--key-file")
		}
		keys = &k
	}
	opts, err := clientOptions(name, keys, f.keyFile, f.caFile)
	if err != nil {
		return nil, nil, err
	}
	c, err := remote.DialModels(ctx, f.server, opts...)
	if err != nil {
		return nil, nil, err
	}
	return c, func() { _ = c.Close() }, nil
}

func newModels() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models ls|show|pull|push",
		Short: "List, show, pull and push trained models",
		Long:  modelsLong,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("models needs a command (choices: ls, pull, push, show)")
			}
			return usagef("unknown models command %q (choices: ls, pull, push, show)", args[0])
		},
	}
	cmd.AddCommand(newModelsLs(), newModelsShow(), newModelsPull(), newModelsPush())
	return cmd
}

func newModelsLs() *cobra.Command {
	var f modelFlags
	cmd := &cobra.Command{
		Use:   "ls [NAME]",
		Short: "List the models (their newest versions), or the versions of one",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			store, done, err := f.open(cmd.Context(), name)
			if err != nil {
				return err
			}
			defer done()
			all, err := store.List(cmd.Context(), name)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if f.jsonOut {
				return writeJSON(out, all)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "MODEL\tFORMAT\tENV\tAGENT\tSIZE\tCREATED\tFIGURES")
			for _, m := range all {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", m.Ref(), dash(m.Format), dash(m.Env), dash(m.Agent), m.Size,
					m.Created.Format("2006-01-02 15:04:05"), figures(m.Figures))
			}
			return tw.Flush()
		},
	}
	f.register(cmd)
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func figures(f map[string]float64) string {
	if len(f) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range f {
			if !yield(k) {
				return
			}
		}
	}) {
		parts = append(parts, k+"="+strconv.FormatFloat(f[k], 'g', 4, 64))
	}
	return strings.Join(parts, " ")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// openRef parses a reference and opens the store for its name.
func (f *modelFlags) openRef(ctx context.Context, ref string) (models.Store, func(), string, int, error) {
	name, version, err := models.ParseRef(ref)
	if err != nil {
		return nil, nil, "", 0, usageErr(err)
	}
	store, done, err := f.open(ctx, name)
	if err != nil {
		return nil, nil, "", 0, err
	}
	return store, done, name, version, nil
}

func newModelsShow() *cobra.Command {
	var f modelFlags
	cmd := &cobra.Command{
		Use:   "show NAME[@VERSION]",
		Short: "Show a model's metadata, figures and learning curve",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, done, name, version, err := f.openRef(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer done()
			m, err := store.Stat(cmd.Context(), name, version)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if f.jsonOut {
				return writeJSON(out, m)
			}
			return showModel(out, m)
		},
	}
	f.register(cmd)
	return cmd
}

func showModel(w io.Writer, m models.Meta) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("model", m.Ref())
	row("created", m.Created.Format("2006-01-02 15:04:05 MST"))
	row("size", fmt.Sprintf("%d bytes, sha256 %s", m.Size, m.SHA256))
	row("format", dash(m.Format))
	row("env", dash(m.Env))
	row("agent", dash(m.Agent))
	row("observations", dash(string(m.ObservationSpace)))
	row("actions", dash(string(m.ActionSpace)))
	row("run", dash(m.Run))
	row("figures", figures(m.Figures))
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range m.Labels {
			if !yield(k) {
				return
			}
		}
	}) {
		row("label "+k, m.Labels[k])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(m.Curve) == 0 {
		return nil
	}
	return writeCurve(w, m.Curve)
}

// writeCurve prints a learning curve in at most 10 bins of episodes: each bin's mean
// return and success rate.
func writeCurve(w io.Writer, curve []models.Point) error {
	fmt.Fprintf(w, "\nlearning curve (%d episodes)\n", len(curve))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "episodes\tmean return\tsuccess\t")
	const bins = 10
	size := max(1, (len(curve)+bins-1)/bins)
	for lo := 0; lo < len(curve); lo += size {
		hi := min(lo+size, len(curve))
		var ret float64
		var ok int
		for _, p := range curve[lo:hi] {
			ret += p.Return
			if p.Success {
				ok++
			}
		}
		n := float64(hi - lo)
		fmt.Fprintf(tw, "%d-%d\t%.3f\t%.0f%%\t\n", curve[lo].Episode, curve[hi-1].Episode, ret/n, 100*float64(ok)/n)
	}
	return tw.Flush()
}

func newModelsPull() *cobra.Command {
	var (
		f   modelFlags
		out string
	)
	cmd := &cobra.Command{
		Use:   "pull NAME[@VERSION]",
		Short: "Write a model's bytes to a file (checked against its checksum)",
		Long: `pull writes a model's bytes to --output (NAME-vVERSION.FORMAT by default; "-" for
stdout), and with --meta its metadata as JSON beside them.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, done, name, version, err := f.openRef(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer done()
			m, data, err := store.Get(cmd.Context(), name, version)
			if err != nil {
				return err
			}
			if out == "-" {
				_, err := cmd.OutOrStdout().Write(data)
				return err
			}
			if out == "" {
				out = fmt.Sprintf("%s-v%d", m.Name, m.Version)
				if m.Format != "" {
					out += "." + m.Format
				}
			}
			if err := os.WriteFile(out, data, 0o644); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "pulled %s to %s (%d bytes)\n", m.Ref(), out, m.Size)
			return err
		},
	}
	f.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to `FILE` (\"-\": stdout)")
	return cmd
}

func newModelsPush() *cobra.Command {
	var (
		f                        modelFlags
		metaFile                 string
		format, env, agent, runs string
	)
	cmd := &cobra.Command{
		Use:   "push NAME FILE",
		Short: "Store a file as a model's next version",
		Long: `push stores FILE as NAME's next version, with the metadata of --meta (a JSON file, as
"baton models show --json" prints) and the flags, which override it.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := models.CheckName(name); err != nil {
				return usageErr(err)
			}
			var meta models.Meta
			if metaFile != "" {
				b, err := os.ReadFile(metaFile)
				if err != nil {
					return usageErr(err, "--meta")
				}
				if err := json.Unmarshal(b, &meta); err != nil {
					return usagef("--meta %s: %v", metaFile, err)
				}
			}
			meta.Name = name
			for _, s := range []struct {
				dst *string
				v   string
			}{{&meta.Format, format}, {&meta.Env, env}, {&meta.Agent, agent}, {&meta.Run, runs}} {
				if s.v != "" {
					*s.dst = s.v
				}
			}
			data, err := os.ReadFile(args[1])
			if err != nil {
				return usageErr(err)
			}
			store, done, err := f.open(cmd.Context(), name)
			if err != nil {
				return err
			}
			defer done()
			m, err := store.Put(cmd.Context(), meta, data)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "pushed %s (%d bytes, sha256 %s)\n", m.Ref(), m.Size, m.SHA256)
			return err
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&metaFile, "meta", "", "the metadata, from the JSON `FILE`")
	fl.StringVar(&format, "format", "", "what the bytes are: `onnx`, torch, ...")
	fl.StringVar(&env, "env", "", "the `ENV` the model acts in")
	fl.StringVar(&agent, "agent", "", "the `AGENT` the model acts for")
	fl.StringVar(&runs, "run", "", "the training `RUN` that made it")
	return cmd
}

const serveModelsLong = `serve models serves a model registry (ModelService) kept under --dir: clients put,
get, list and watch versions of models by name ("baton models --server", Python's
baton.models, acting policies that follow NAME@latest). With --key-file, a key named
for a model grants that model. --keep keeps only the newest N versions of each.`

func newServeModels() *cobra.Command {
	var (
		sf   serveFlags
		dir  string
		keep int
	)
	cmd := &cobra.Command{
		Use:     "models",
		Short:   "Serve a model registry (ModelService)",
		Long:    serveModelsLong,
		Example: "  baton serve models --dir ./models --keep 20",
		Args:    noArgs("serve models"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := sf.options(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if keep < 0 {
				return usagef("--keep %d: want 0 (keep every version) or more", keep)
			}
			if dir == "" {
				if dir, err = models.DefaultDir(); err != nil {
					return err
				}
			}
			d, err := models.OpenDir(dir, models.WithKeep(keep))
			if err != nil {
				return err
			}
			s, err := remote.NewServer(opts...)
			if err != nil {
				return err
			}
			if err := s.AddModels(models.NewRegistry(d)); err != nil {
				return err
			}
			return sf.serve(cmd.Context(), s, "models of "+dir, false, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&dir, "dir", "", "keep the models under `DIR` ($BATON_MODELS, else ~/.local/share/baton/models)")
	fl.IntVar(&keep, "keep", 0, "keep the newest `N` versions of each model (0: all)")
	sf.register(cmd)
	return cmd
}
