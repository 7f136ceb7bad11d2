package cli

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The command samples of the documentation, README.md and every page of the site under
// docs/ (but the command line reference, which cobra writes), are checked against what
// the command prints, so that they cannot go stale. A sample is a ```text block whose
// first line is a command, "$ go run ./cmd/baton ARGS" or "$ baton ARGS"; its lines up
// to the next "$ " line are what the command prints on stdout. The commands of one
// block run in order in one temporary directory, empty but for a link to the
// repository's examples (so "--log runs/maze" then "inspect runs/maze" works, and
// envs/maze/curriculum.json is there). A line "..." stands for any number of
// lines. Lines whose figures change from run to run or machine to machine (wall time,
// steps/s, the number of workers) are compared with those figures masked. go test
// ./cli -run TestDocs -update rewrites the samples with what the command prints now,
// keeping their "..." and their masked figures.
//
// A sample of baton play --human is a terminal session: what the person types follows
// each prompt ("choice [1, 4]: ", or "press Enter (or type 2) for RIGHT, the only
// allowed action: ") on its line. The command reads those answers, in order,
// on stdin, and its output is compared with each answer put back after its prompt, as
// a terminal echoes it.

// docFiles returns the documentation's Markdown files, relative to package cli: the
// README and the pages of docs/, generated ones left out.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../README.md"}
	err := filepath.WalkDir("../docs", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path == filepath.Join("..", "docs", "reference", "cli"):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".md"):
			files = append(files, path)
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// docName is how a message names a documentation file: its path from the repository's
// root.
func docName(path string) string {
	return filepath.ToSlash(strings.TrimPrefix(filepath.Clean(path), ".."+string(filepath.Separator)))
}

// readmeSample is one ```text block of a documentation file that shows commands.
type readmeSample struct {
	from, to int // the block's body: lines [from, to) of the file
	cmds     []readmeCmd
}

// readmeCmd is one "$ " line of a sample and the lines shown after it.
type readmeCmd struct {
	line string
	args []string
	want []string
}

// readmePrefixes are how a sample's command line starts.
var readmePrefixes = []string{"$ go run ./cmd/baton ", "$ baton "}

func isReadmeCommand(line string) bool {
	for _, p := range readmePrefixes {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// readmeSamples returns the command samples of a documentation file's lines.
func readmeSamples(t *testing.T, name string, lines []string) []readmeSample {
	t.Helper()
	var samples []readmeSample
	for i := 0; i < len(lines); i++ {
		if lines[i] != "```text" {
			continue
		}
		from := i + 1
		to := from
		for to < len(lines) && lines[to] != "```" {
			to++
		}
		require.Less(t, to, len(lines), "%s:%d: the block is not closed", name, i+1)
		i = to
		if from == to || !isReadmeCommand(lines[from]) {
			continue
		}
		s := readmeSample{from: from, to: to}
		for _, l := range lines[from:to] {
			if strings.HasPrefix(l, "$ ") {
				require.True(t, isReadmeCommand(l), "%s: %q: a sample runs baton alone", name, l)
				args, err := shellWords(l[strings.Index(l, "baton ")+len("baton "):])
				require.NoError(t, err, "%s: %q", name, l)
				s.cmds = append(s.cmds, readmeCmd{line: l, args: args})
				continue
			}
			c := &s.cmds[len(s.cmds)-1]
			c.want = append(c.want, l)
		}
		samples = append(samples, s)
	}
	return samples
}

// shellWords splits a command line as a POSIX shell does for the quoting that samples
// use: blanks separate words, '...' quotes literally, "..." quotes with \" and \\.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unclosed ' in %q", s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				w.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, fmt.Errorf("unclosed \" in %q", s)
			}
			inWord = true
		case '$', '`', '|', '&', ';', '<', '>', '*', '?', '\\':
			return nil, fmt.Errorf("%q in %q: a sample takes plain words and quotes", c, s)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// readmeMasks are the figures that differ from run to run or machine to machine.
var readmeMasks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`^(wall time +)[0-9.,]+ s$`), "${1}* s"},
	{regexp.MustCompile(`^(steps/s +)[0-9.,]+$`), "${1}*"},
	{regexp.MustCompile(`\bon [0-9,]+ workers?\b`), "on * workers"},
}

func maskLine(l string) string {
	for _, m := range readmeMasks {
		l = m.re.ReplaceAllString(l, m.with)
	}
	return l
}

// elision is the line of a sample that stands for any number of lines.
const elision = "..."

// segments splits a sample's lines at its elisions.
func segments(want []string) [][]string {
	segs := [][]string{nil}
	for _, l := range want {
		if l == elision {
			segs = append(segs, nil)
			continue
		}
		segs[len(segs)-1] = append(segs[len(segs)-1], l)
	}
	return segs
}

// matchSample reports whether got, masked, is want: the first segment of want begins got,
// the last ends it, and those between follow in order ("..." matches any lines).
func matchSample(want, got []string) bool {
	eq := func(seg []string, at int) bool {
		if at < 0 || at+len(seg) > len(got) {
			return false
		}
		for i, l := range seg {
			if maskLine(l) != maskLine(got[at+i]) {
				return false
			}
		}
		return true
	}
	segs := segments(want)
	if len(segs) == 1 {
		return len(want) == len(got) && eq(want, 0)
	}
	first, last := segs[0], segs[len(segs)-1]
	if !eq(first, 0) || len(first)+len(last) > len(got) || !eq(last, len(got)-len(last)) {
		return false
	}
	pos, end := len(first), len(got)-len(last)
	for _, seg := range segs[1 : len(segs)-1] {
		at := pos
		for at+len(seg) <= end && !eq(seg, at) {
			at++
		}
		if at+len(seg) > end {
			return false
		}
		pos = at + len(seg)
	}
	return true
}

// updateSample returns got shown the way want shows it: with want's elisions, each part
// between them placed by its first line without digits (the others hold figures that may
// change), the last part running to the end, and with want's own line wherever it and
// got's differ only in masked figures.
func updateSample(want, got []string) ([]string, error) {
	segs := segments(want)
	if len(segs) == 1 {
		return keepMasked(want, got), nil
	}
	var out []string
	pos := 0 // got[:pos] is shown or elided
	for i, seg := range segs {
		last := i == len(segs)-1
		start, end := pos, pos
		switch k := slices.IndexFunc(seg, isAnchor); {
		case i == 0:
			end = min(len(seg), len(got))
		case k < 0 && !last:
			return nil, fmt.Errorf("the part after elision %d has no line without digits to place it by: edit it by hand", i)
		case k < 0:
			start, end = max(pos, len(got)-len(seg)), len(got)
		default:
			at := pos + k
			for at < len(got) && got[at] != seg[k] {
				at++
			}
			if at == len(got) {
				return nil, fmt.Errorf("line %q after elision %d is no longer printed: edit the sample by hand", seg[k], i)
			}
			start, end = at-k, min(at-k+len(seg), len(got))
			if last {
				end = len(got)
			}
		}
		if i > 0 {
			out = append(out, elision)
		}
		out = append(out, keepMasked(seg, got[start:end])...)
		pos = end
	}
	return out, nil
}

// isAnchor reports whether a sample's line places its part when the sample is rewritten:
// a line with no figures in it.
func isAnchor(l string) bool {
	return strings.TrimSpace(l) != "" && !strings.ContainsAny(l, "0123456789")
}

// keepMasked returns got with old's line in place of each line that differs from old's
// at the same index only in masked figures.
func keepMasked(old, got []string) []string {
	out := append([]string{}, got...)
	for i := range min(len(old), len(out)) {
		if maskLine(old[i]) == maskLine(out[i]) {
			out[i] = old[i]
		}
	}
	return out
}

// TestDocs runs the command samples of README.md and of the pages under docs/, and
// checks what they print.
func TestDocs(t *testing.T) {
	total := 0
	for _, path := range docFiles(t) {
		t.Run(docName(path), func(t *testing.T) {
			total += checkSamples(t, path)
		})
	}
	require.Positive(t, total, "the documentation shows no command sample")
}

// checkSamples runs the command samples of one documentation file (with -update,
// rewrites them) and returns how many it has.
func checkSamples(t *testing.T, path string) int {
	name := docName(path)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := strings.Split(string(data), "\n")
	samples := readmeSamples(t, name, doc)

	// The samples read the repository's files (a schedule file under envs/, examples)
	// by their paths from the repository's root.
	var linked []string
	for _, d := range []string{"envs", "examples"} {
		abs, err := filepath.Abs(filepath.Join("..", d))
		require.NoError(t, err)
		linked = append(linked, abs)
	}
	updated := map[int][]string{} // sample index -> new body
	for si, s := range samples {
		t.Run(strings.Join(s.cmds[0].args, " "), func(t *testing.T) {
			dir := t.TempDir()
			for _, abs := range linked {
				require.NoError(t, os.Symlink(abs, filepath.Join(dir, filepath.Base(abs))))
			}
			t.Chdir(dir)
			var body []string
			for _, c := range s.cmds {
				var r result
				answers, typed := typedAnswers(c)
				if typed {
					r = runInput(t, strings.Join(answers, "\n")+"\n", c.args...)
					r.stdout = echoAnswers(r.stdout, answers)
				} else {
					r = runArgs(t, c.args...)
				}
				require.Equal(t, 0, r.code, "%s: stderr: %s", c.line, r.stderr)
				got := lines(r.stdout)
				if *update {
					show, err := updateSample(c.want, got)
					require.NoError(t, err, "%s:%d: %s", name, s.from+1, c.line)
					require.True(t, matchSample(show, got), "%s:%d: %s: the rewritten sample does not match", name, s.from+1, c.line)
					body = append(append(body, c.line), show...)
					continue
				}
				if !matchSample(c.want, got) {
					assert.Fail(t, "the sample differs from the output",
						"%s:%d: %s\nthe sample shows (... is any lines; wall time, steps/s and workers are masked):\n%s\n\nthe command prints:\n%s\n\ngo test ./cli -run TestDocs -update rewrites the samples",
						name, s.from+1, c.line, strings.Join(c.want, "\n"), r.stdout)
				}
			}
			if *update {
				updated[si] = body
			}
		})
	}
	if !*update || t.Failed() {
		return len(samples)
	}
	var out []string
	prev := 0
	for si, s := range samples {
		out = append(append(out, doc[prev:s.from]...), updated[si]...)
		prev = s.to
	}
	out = append(out, doc[prev:]...)
	require.NoError(t, os.WriteFile(filepath.Clean(path), []byte(strings.Join(out, "\n")), 0o644))
	return len(samples)
}

// TestDocsMatch checks the matching of samples against output, elisions and masks.
func TestDocsMatch(t *testing.T) {
	got := []string{"a", "b", "c", "d", "wall time      0.013 s", "steps/s        3,489,431", "trials 8 on 16 workers (8 ended)"}
	for _, tc := range []struct {
		name string
		want []string
		ok   bool
	}{
		{"exact", got, true},
		{"masked", []string{"a", "b", "c", "d", "wall time      9.000 s", "steps/s        1", "trials 8 on 2 workers (8 ended)"}, true},
		{"unmasked figure", []string{"a", "b", "c", "d", "wall time      0.013 s", "steps/s        3,489,431", "trials 9 on 16 workers (8 ended)"}, false},
		{"line missing", got[:6], false},
		{"line added", append(append([]string{}, got...), "e"), false},
		{"head and tail", []string{"a", elision, got[6]}, true},
		{"middle", []string{"a", elision, "c", elision, got[6]}, true},
		{"middle out of order", []string{"a", elision, "d", elision, "c", elision, got[6]}, false},
		{"middle missing", []string{"a", elision, "x", elision, got[6]}, false},
		{"leading elision", []string{elision, got[6]}, true},
		{"overlap", []string{"a", "b", "c", "d", elision, "d", "wall time      0.013 s", "steps/s        3,489,431", got[6]}, false},
		{"wrong head", []string{"b", elision}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.ok, matchSample(tc.want, got))
		})
	}
}

// TestDocsUpdate checks that -update keeps a sample's elisions and masked figures.
func TestDocsUpdate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		want, got []string
		show      []string
		err       string
	}{
		{
			name: "no elision",
			want: []string{"x 1", "wall time      0.013 s"},
			got:  []string{"x 2", "wall time      0.020 s", "y"},
			show: []string{"x 2", "wall time      0.013 s", "y"},
		},
		{
			name: "parts placed by their lines without digits",
			want: []string{"head", "1", elision, "9", "returns:", "a 1", elision, "total:", "b 2"},
			got:  []string{"head", "0", "1", "2", "8", "returns:", "a 3", "a 4", "total:", "b 5", "c 6"},
			show: []string{"head", "0", elision, "8", "returns:", "a 3", elision, "total:", "b 5", "c 6"},
		},
		{
			name: "tail by length",
			want: []string{"h", elision, "1", "2"},
			got:  []string{"h", "x", "3", "4"},
			show: []string{"h", elision, "3", "4"},
		},
		{
			name: "anchor gone",
			want: []string{"h", elision, "returns:", "1", elision, "end"},
			got:  []string{"h", "x", "end"},
			err:  "no longer printed",
		},
		{
			name: "no anchor",
			want: []string{"h", elision, "1", elision, "end"},
			got:  []string{"h", "1", "end"},
			err:  "no line without digits",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			show, err := updateSample(tc.want, tc.got)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.show, show)
			assert.True(t, matchSample(show, tc.got))
		})
	}
}

// TestShellWords checks the splitting of sample command lines.
func TestShellWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{in: "play maze --seed 1", want: []string{"play", "maze", "--seed", "1"}},
		{in: `run maze --env-config '{"procedure": true}'`, want: []string{"run", "maze", "--env-config", `{"procedure": true}`}},
		{in: `graph "a b" x"y\"z"`, want: []string{"graph", "a b", `xy"z`}},
		{in: "run maze > out", err: true},
		{in: "run 'maze", err: true},
		{in: `run "maze`, err: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := shellWords(tc.in)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// prompt is how baton play --human asks the person for a choice.
var prompt = regexp.MustCompile(`choice \[[0-9, -]+\]: |press Enter \(or type [0-9]+\) for .*, the only allowed action: `)

// typedAnswers returns what the person types in a sample of baton play --human: the
// text after each prompt. typed is false for a sample of another command.
func typedAnswers(c readmeCmd) (answers []string, typed bool) {
	if !slices.Contains(c.args, "--human") {
		return nil, false
	}
	for _, l := range c.want {
		if loc := prompt.FindStringIndex(l); loc != nil {
			answers = append(answers, l[loc[1]:])
		}
	}
	return answers, true
}

// echoAnswers puts each answer back after its prompt, with the end of the line that
// a terminal echoes, as the person saw the session.
func echoAnswers(out string, answers []string) string {
	var b strings.Builder
	for _, a := range answers {
		loc := prompt.FindStringIndex(out)
		if loc == nil {
			break
		}
		b.WriteString(out[:loc[1]] + a + "\n")
		out = out[loc[1]:]
	}
	b.WriteString(out)
	return b.String()
}

// docCommand matches a command line of a ```sh block that runs baton.
var docCommand = regexp.MustCompile(`^(?:go run \./cmd/baton|\./baton) (.*)$`)

// shellCommands returns the baton command lines of a file's ```sh blocks (continued
// lines joined), each without what the shell does around it: a trailing "&", a
// comment, a pipe or a redirection.
func shellCommands(lines []string) (cmds []string, at []int) {
	in := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case l == "```sh":
			in = true
			continue
		case strings.HasPrefix(l, "```"):
			in = false
			continue
		case !in:
			continue
		}
		from := i
		for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, `\`) + " " + strings.TrimSpace(lines[i])
		}
		l = shellStatement(strings.TrimSpace(l))
		if m := docCommand.FindStringSubmatch(l); m != nil {
			cmds = append(cmds, m[1])
			at = append(at, from)
		}
	}
	return cmds, at
}

// shellStatement cuts a shell line at its first comment, pipe, redirection or "&"
// outside quotes.
func shellStatement(l string) string {
	var quote byte
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '|' || c == '>' || c == '&' || c == ';' || c == '#' && (i == 0 || l[i-1] == ' '):
			return strings.TrimSpace(l[:i])
		}
	}
	return l
}

// TestDocsCommands checks every baton command line of the documentation's ```sh
// blocks against the command line: the command exists and takes the flags given, so
// that a renamed command or flag cannot linger in a page. (The ```text samples are run
// by TestDocs.)
func TestDocsCommands(t *testing.T) {
	envs, err := newEnvironments("baton", nil)
	require.NoError(t, err)
	checked := 0
	for _, path := range docFiles(t) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		cmds, at := shellCommands(strings.Split(string(data), "\n"))
		for i, line := range cmds {
			where := fmt.Sprintf("%s:%d: baton %s", docName(path), at[i]+1, line)
			if strings.Contains(line, "$") {
				continue // a shell variable: the words are the shell's
			}
			args, err := shellWords(line)
			require.NoError(t, err, where)
			root := newRoot(envs, io.Discard, io.Discard)
			cmd, rest, err := root.Find(args)
			require.NoError(t, err, where)
			require.NotEqual(t, root, cmd, "%s: no such command", where)
			require.NoError(t, cmd.ParseFlags(rest), where)
			checked++
		}
	}
	assert.Greater(t, checked, 20, "the documentation's ```sh blocks run baton")
}

// TestShellStatement checks the cutting of shell lines.
func TestShellStatement(t *testing.T) {
	for in, want := range map[string]string{
		"go run ./cmd/baton run maze   # comment":           "go run ./cmd/baton run maze",
		"./baton serve ui --addr 127.0.0.1:8080 &":          "./baton serve ui --addr 127.0.0.1:8080",
		"go run ./cmd/baton envs maze --json > /tmp/x.json": "go run ./cmd/baton envs maze --json",
		`./baton run maze --env-config '{"a": "#|>"}' | jq`: `./baton run maze --env-config '{"a": "#|>"}'`,
	} {
		assert.Equal(t, want, shellStatement(in), in)
	}
}

// readmeLink matches a Markdown link or picture's target.
var readmeLink = regexp.MustCompile(`\]\(([^)\s#]+)(?:#[^)]*)?\)`)

// TestREADMELinks checks that every file the README links to or shows is there (the
// site's pages are checked by scripts/docs --check, which the README is not part of).
func TestREADMELinks(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	n := 0
	for _, m := range readmeLink.FindAllStringSubmatch(string(data), -1) {
		target := m[1]
		if strings.Contains(target, "://") {
			continue
		}
		n++
		_, err := os.Stat(filepath.Join("..", filepath.FromSlash(target)))
		assert.NoError(t, err, "README.md links to %s", target)
	}
	assert.Greater(t, n, 10, "the README links to the documentation's pages")
}
