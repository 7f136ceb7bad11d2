package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// terminal is a pseudo-terminal that a command runs under, as a person's terminal:
// what the command writes is kept, and expect waits for it.
type terminal struct {
	t    *testing.T
	pty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	pos  int           // where expect looks from
	more chan struct{} // told after each read
	done chan struct{} // closed when the command's side is closed
}

// startTerminal starts bin with args under a new pseudo-terminal.
func startTerminal(t *testing.T, bin string, args ...string) (*terminal, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 100})
	require.NoError(t, err)
	tm := &terminal{t: t, pty: f, more: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(tm.done)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			select {
			case tm.more <- struct{}{}:
			default:
			}
			if err != nil { // EIO once the command's side is closed
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = f.Close()
		<-tm.done
	})
	return tm, cmd
}

// expect waits until the command has written s after what the previous expect found.
func (tm *terminal) expect(s string) {
	tm.t.Helper()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	for {
		tm.mu.Lock()
		seen := tm.out.String()
		tm.mu.Unlock()
		if i := strings.Index(seen[tm.pos:], s); i >= 0 {
			tm.pos += i + len(s)
			return
		}
		select {
		case <-tm.more:
		case <-tm.done:
			tm.mu.Lock()
			seen = tm.out.String()
			tm.mu.Unlock()
			if !strings.Contains(seen[tm.pos:], s) {
				tm.t.Fatalf("the command ended without writing %q; it wrote:\n%s", s, seen)
			}
		case <-deadline.C:
			tm.t.Fatalf("no %q after a minute; the command wrote:\n%s", s, seen)
		}
	}
}

// rest waits for the command's side to close and returns what the command wrote
// after what the last expect found.
func (tm *terminal) rest() string {
	tm.t.Helper()
	select {
	case <-tm.done:
	case <-time.After(60 * time.Second):
		tm.t.Fatal("the terminal stayed open a minute after the command")
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()[tm.pos:]
}

// typ types keys at the terminal.
func (tm *terminal) typ(keys string) {
	tm.t.Helper()
	_, err := io.WriteString(tm.pty, keys)
	require.NoError(tm.t, err)
}

// exitCode waits for the command and returns its exit status.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return ee.ExitCode()
	}
	require.NoError(t, err)
	return 0
}

// TestPlayHumanTerminal plays the maze as its strategy agent at a terminal, through
// the built command under a pseudo-terminal: to the goal (with bad input on the way),
// and stopped by Ctrl-C and by Ctrl-D, each with a log that baton inspect reads and
// baton replay replays.
func TestPlayHumanTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds baton and runs it under a pseudo-terminal")
	}
	bin := buildBaton(t)
	// The oracle's way with motion=forward: LEFT DOWN LEFT UP UP LEFT UP.
	type turn struct{ expect, keys string }
	tests := []struct {
		name  string
		turns []turn
		// end is the last line before the returns, code the exit status, trials the
		// trials line of baton inspect.
		end    string
		code   int
		trials string
	}{
		{
			// The directions numbered as the page numbers them, the blocked ones
			// marked; arrow keys, names and numbers.
			name: "to the goal",
			turns: []turn{
				{"position [4 9] heading LEFT, goal [0 4]\n  1) UP\n  2) RIGHT (not allowed now)\n  3) DOWN (not allowed now)\n  4) LEFT\nchoice [1, 4]: ", "west\r"},
				{"\"west\" is not a choice: type a number of [1, 4] or an action's name\n  1) UP\n", "\x1b[D\r"},
				{"  1) UP (not allowed now)\n  2) RIGHT\n  3) DOWN\n  4) LEFT\nchoice [2-4]: ", "up\r"},
				{"UP is not allowed now (allowed: RIGHT, DOWN, LEFT)\n", "3\r"},
				{"choice [1, 3, 4]: ", "Left\r"},
				{"choice [1, 2, 4]: ", "UP\r"},
				{"choice [1, 3, 4]: ", "\r"},
				{"\"\" is not a choice", "\x1b[A\r"},
				{"choice [2-4]: ", "left\r"},
				{"choice [1, 2, 4]: ", "up\r"},
			},
			end:    "trial maze-0 ended: episode over after 20 ticks, success",
			code:   0,
			trials: "1 (1 ended, 0 stopped, 0 failed)",
		},
		{
			name:   "ctrl-c",
			turns:  []turn{{"choice [1, 4]: ", "left\r"}, {"choice [2-4]: ", "\x03"}},
			end:    "trial maze-0 stopped after 2 ticks: interrupted",
			code:   exitInterrupted,
			trials: "1 (0 ended, 1 stopped, 0 failed)",
		},
		{
			name:   "ctrl-d",
			turns:  []turn{{"choice [1, 4]: ", "left\r"}, {"choice [2-4]: ", "\x04"}},
			end:    "trial maze-0 stopped after 2 ticks: the input ended",
			code:   0,
			trials: "1 (0 ended, 1 stopped, 0 failed)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "log")
			tm, cmd := startTerminal(t, bin, "play", "maze", "--human", "strategy", "--policy", "motion=forward", "--log", dir)
			tm.expect("strategy_0 to act at tick 0:")
			for _, tn := range tt.turns {
				tm.expect(strings.ReplaceAll(tn.expect, "\n", "\r\n"))
				tm.typ(tn.keys)
			}
			tm.expect(tt.end + "\r\n")
			tm.expect("returns:\r\n  strategy ")
			tm.expect("(human)\r\n  motion ")
			tm.expect("(forward)\r\nlog: " + dir + ", ")
			tm.expect(" rows\r\n")
			assert.Equal(t, tt.code, exitCode(t, cmd))
			assert.Empty(t, tm.rest(), "nothing after the summary: an interrupt is no error to report again")

			out, err := exec.Command(bin, "inspect", dir).CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Contains(t, string(out), "trials         "+tt.trials+"\n")
			// The person's actions are logged as any policy's: the log replays.
			out, err = exec.Command(bin, "replay", dir).CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Contains(t, string(out), "no mismatch")
		})
	}
}
