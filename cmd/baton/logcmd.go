package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/batonrl/baton/datalog"
	"github.com/spf13/cobra"
)

// newLogCmd is baton log, the commands that work on an activity log's files.
func newLogCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Work on the files of an activity log (recover)",
		Long: `log works on the files of an activity log that "baton run ENV --log DIR" wrote.
"baton log recover DIR" rewrites the parts that a killed writer left without their footer.`,
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
				return usagef("log needs a command (%s)", choices(names))
			}
			return usagef("unknown command %q for log (%s)", args[0], choices(names))
		},
	}
	cmd.AddCommand(newRecover())
	return cmd
}

func newRecover() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "recover DIR",
		Short: "Rewrite the parts that a killed writer left without a footer as proper Arrow files",
		Long: `recover rewrites every part of the activity log in DIR that has no footer (its
writer, a "baton run --log", was killed) as a proper Arrow IPC file holding its complete
record batches, and deletes a part with none. baton reads such parts as they are; other
readers (pyarrow, polars, Arrow JavaScript) need the footer. It prints, per part it
rewrote or deleted, the batches and rows kept, and where the part was cut. Parts with a
footer are left alone. No process may be writing the log meanwhile.`,
		Example: "  baton log recover runs/maze\n  baton log recover runs/maze --json",
		Args:    oneLog("log recover"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return recoverLog(args[0], asJSON, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	return cmd
}

// recoveredPart is a datalog.Recovered in JSON, its path relative to the log's
// directory.
type recoveredPart struct {
	Path    string `json:"path"`
	Batches int    `json:"batches"`
	Rows    int64  `json:"rows"`
	Removed bool   `json:"removed"`
	Cut     string `json:"cut"`
}

func recoverLog(dir string, asJSON bool, w io.Writer) error {
	if _, err := openLog("log recover", dir); err != nil {
		return err
	}
	recs, err := datalog.Recover(dir)
	if err != nil {
		return logError("log recover", dir, err)
	}
	parts := make([]recoveredPart, len(recs))
	var rows int64
	for i, r := range recs {
		path := r.Path
		if rel, err := filepath.Rel(dir, r.Path); err == nil {
			path = filepath.ToSlash(rel)
		}
		parts[i] = recoveredPart{Path: path, Batches: r.Batches, Rows: r.Rows, Removed: r.Removed, Cut: r.Cut}
		rows += r.Rows
	}
	if asJSON {
		return json.NewEncoder(w).Encode(map[string]any{"parts": parts, "rows": rows})
	}
	var b strings.Builder
	for _, p := range parts {
		cut := ""
		if p.Cut != "" {
			cut = " (cut: " + p.Cut + ")"
		}
		if p.Removed {
			fmt.Fprintf(&b, "%s: removed: no complete batch%s\n", p.Path, cut)
			continue
		}
		fmt.Fprintf(&b, "%s: rewritten with its footer: %s, %s kept%s\n", p.Path,
			plural(p.Batches, "batch", "batches"), plural(int(p.Rows), "row", "rows"), cut)
	}
	if len(parts) == 0 {
		b.WriteString("nothing to recover: every part has its footer\n")
	} else {
		fmt.Fprintf(&b, "recovered %s: %s kept\n", plural(len(parts), "part", "parts"), plural(int(rows), "row", "rows"))
	}
	_, err = io.WriteString(w, b.String())
	return err
}
