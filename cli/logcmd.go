package cli

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
"baton log recover DIR" repairs the parts that a killed writer left without their footer,
and the damaged ones.`,
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
		Short: "Repair the parts of an activity log: add the footers a killed writer left out, keep what a damaged part still holds",
		Long: `recover reads every part of the activity log in DIR through, and repairs those that
are not whole; it deletes nothing.

A part that has no footer (its writer, a "baton run --log", was killed) is rewritten as a
proper Arrow IPC file holding its complete record batches: baton reads such parts as they
are, other readers (pyarrow, polars, Arrow JavaScript) need the footer. A damaged part (a
batch whose checksum differs, a footer that does not check) is rewritten with every batch
that reads intact, skipping the damaged ones, and the original is moved into DIR/_damaged/
(at its path in the log). A part with no batch to keep, and a file named as a part that is
not an Arrow file, are moved there too. It prints, per part, the batches and rows kept,
the batches skipped, where a part was cut and what was damaged; whole parts are left
alone. It refuses a log that a process is writing (its lock is held).`,
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
	Skipped int    `json:"skipped"`
	Damage  string `json:"damage"`
	// Moved is where the original went, relative to the log's directory; "" if
	// it was rewritten in place.
	Moved string `json:"moved"`
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
	rel := func(p string) string {
		if r, err := filepath.Rel(dir, p); err == nil && p != "" {
			return filepath.ToSlash(r)
		}
		return p
	}
	moved := 0
	for i, r := range recs {
		parts[i] = recoveredPart{Path: rel(r.Path), Batches: r.Batches, Rows: r.Rows, Removed: r.Removed, Cut: r.Cut,
			Skipped: r.Skipped, Damage: r.Damage, Moved: rel(r.Moved)}
		rows += r.Rows
		if r.Moved != "" {
			moved++
		}
	}
	if asJSON {
		return json.NewEncoder(w).Encode(map[string]any{"parts": parts, "rows": rows, "moved": moved})
	}
	var b strings.Builder
	for _, p := range parts {
		cut := ""
		if p.Cut != "" {
			cut = " (cut: " + p.Cut + ")"
		}
		damage := ""
		if p.Damage != "" {
			damage = " (damaged: " + p.Damage + ")"
		}
		if p.Removed {
			fmt.Fprintf(&b, "%s: no batch to keep%s%s: moved to %s\n", p.Path, cut, damage, p.Moved)
			continue
		}
		skipped := ""
		if p.Skipped > 0 {
			skipped = ", " + plural(p.Skipped, "damaged batch", "damaged batches") + " skipped"
		}
		aside := ""
		if p.Moved != "" {
			aside = "; the original moved to " + p.Moved
		}
		fmt.Fprintf(&b, "%s: rewritten with its footer: %s, %s kept%s%s%s%s\n", p.Path,
			plural(p.Batches, "batch", "batches"), plural(int(p.Rows), "row", "rows"), skipped, cut, damage, aside)
	}
	if len(parts) == 0 {
		b.WriteString("nothing to recover: every part is whole\n")
	} else {
		fmt.Fprintf(&b, "recovered %s: %s kept", plural(len(parts), "part", "parts"), plural(int(rows), "row", "rows"))
		if moved > 0 {
			fmt.Fprintf(&b, "; %s moved to %s", plural(moved, "original", "originals"), datalog.DamagedDir+"/")
		}
		b.WriteString("\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}
