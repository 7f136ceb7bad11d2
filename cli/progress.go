package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/batonrl/baton/runners"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows how far a campaign is. update is called after each trial, serialised
// by the campaign; finish once after the campaign.
type progress interface {
	update(p runners.Progress)
	finish(interrupted bool)
}

// newProgress returns a progress bar when w is a terminal and plain lines otherwise.
func newProgress(w io.Writer, env string, total int) progress {
	if f, ok := w.(interface{ Fd() uintptr }); ok && term.IsTerminal(int(f.Fd())) {
		return newBarProgress(w, env, total)
	}
	return &lineProgress{w: w, env: env, start: time.Now()}
}

// lineProgress writes a line each time another tenth of the trials is done (each
// trial when there are fewer than ten), for logs and pipes:
//
//	run maze: 10/100 trials (10%), 5,512 env steps, 0 failed, 0.1 s
type lineProgress struct {
	w      io.Writer
	env    string
	start  time.Time
	decile int
}

func (l *lineProgress) update(p runners.Progress) {
	d := p.Done * 10 / p.Total
	if d == l.decile && p.Done < p.Total {
		return
	}
	l.decile = d
	fmt.Fprintf(l.w, "run %s: %d/%d trials (%d%%), %s env steps, %d failed, %.1f s\n",
		l.env, p.Done, p.Total, p.Done*100/p.Total, group(p.Steps), p.Failed, time.Since(l.start).Seconds())
}

func (l *lineProgress) finish(bool) {}

// barProgress draws a progress bar (github.com/schollz/progressbar) on a terminal.
type barProgress struct {
	bar  *progressbar.ProgressBar
	done bool // the bar completed and ended its line
}

func newBarProgress(w io.Writer, env string, total int) *barProgress {
	b := &barProgress{}
	b.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("run "+env),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("trials"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionOnCompletion(func() {
			b.done = true
			fmt.Fprintln(w)
		}),
	)
	return b
}

func (b *barProgress) update(p runners.Progress) { _ = b.bar.Set(p.Done) }

// finish ends the bar's line where the bar did not complete (an interrupt): Exit
// calls the completion function.
func (b *barProgress) finish(bool) {
	if !b.done {
		_ = b.bar.Exit()
	}
}
