// Command gendoc writes the command line reference of the documentation site: a
// Markdown page per command of baton's command line (docs/reference/cli/baton.md,
// baton_run.md, ...), written by cobra's doc package from the commands themselves, so
// that the reference says what the command's help says. scripts/generate runs it; with
// -check it writes nothing and fails when a committed page differs from what it would
// write, or when a page is left over from a command that is gone.
//
//	go run ./cli/internal/gendoc [-dir docs/reference/cli] [-check]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/batonrl/baton/cli"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

func main() {
	dir := flag.String("dir", "docs/reference/cli", "the folder of the pages")
	check := flag.Bool("check", false, "write nothing; fail when a page differs from what would be written")
	flag.Parse()
	if err := run(*dir, *check, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc: "+err.Error())
		os.Exit(1)
	}
}

// run writes (or checks) the pages of the command tree into dir.
func run(dir string, check bool, stderr io.Writer) error {
	root, err := cli.Command("baton")
	if err != nil {
		return err
	}
	pages, err := render(root)
	if err != nil {
		return err
	}
	if check {
		return compare(dir, pages, stderr)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if _, ok := pages[filepath.Base(f)]; !ok {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	for name, b := range pages {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// render returns each page of the tree by file name: cobra's Markdown of every
// available command, without the date cobra stamps (so that a page changes only when
// its command does), each linked to the pages of its parent and subcommands.
func render(root *cobra.Command) (map[string][]byte, error) {
	root.DisableAutoGenTag = true
	pages := map[string][]byte{}
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		if !c.IsAvailableCommand() && c != root || c.IsAdditionalHelpTopicCommand() {
			return nil
		}
		c.DisableAutoGenTag = true
		var b bytes.Buffer
		name := strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
		if err := doc.GenMarkdownCustom(c, &b, func(s string) string { return s }); err != nil {
			return fmt.Errorf("%s: %w", c.CommandPath(), err)
		}
		pages[name] = tidy(b.Bytes())
		for _, sub := range c.Commands() {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	return pages, walk(root)
}

// tidy makes cobra's page a page of the site: its first heading the page's title (one
// "#"), the others one level below it.
func tidy(b []byte) []byte {
	lines := strings.Split(string(b), "\n")
	fence := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if !fence && strings.HasPrefix(l, "##") {
			lines[i] = l[1:]
		}
	}
	return []byte(strings.TrimRight(strings.Join(lines, "\n"), "\n") + "\n")
}

// compare reports every page of dir that differs from pages, is missing or is left
// over.
func compare(dir string, pages map[string][]byte, stderr io.Writer) error {
	var bad []string
	names := make([]string, 0, len(pages))
	for name := range pages {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, pages[name]) {
			bad = append(bad, name)
		}
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if _, ok := pages[filepath.Base(f)]; !ok {
			bad = append(bad, filepath.Base(f)+" (no such command)")
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("the pages of %s are not what the commands write (run scripts/generate): %s", dir, strings.Join(bad, ", "))
	}
	return nil
}
