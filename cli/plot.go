package cli

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The plot's size: one panel per agent, since their returns have their own scales.
const (
	plotWidth       = 9 * vg.Inch
	plotPanelHeight = 3 * vg.Inch
	plotDPI         = 110
)

// plotReturns draws each agent's episode returns over the episodes of a log, in trial
// order, into a PNG file: one panel per agent, the returns as dots and their moving
// mean as a line; then one panel per environment metric, its values drawn the same
// way.
func plotReturns(path string, s *logSummary) error {
	var names []string
	for _, name := range s.agentOrder {
		if len(s.series[name]) > 0 {
			names = append(names, name)
		}
	}
	var metrics []string
	for _, name := range s.metricOrder {
		if len(s.metricSeries[name]) > 0 {
			metrics = append(metrics, name)
		}
	}
	if len(names) == 0 && len(metrics) == 0 {
		return errors.New("--plot: the log has no complete episode to draw")
	}
	env := strings.Join(s.Envs, ", ")
	if env == "" {
		env = "log"
	}
	plots := make([][]*plot.Plot, 0, len(names)+len(metrics))
	for i, name := range names {
		p, err := returnPanel(env, panelText{title: "episode return of " + name, y: "return", dots: "episode return"}, s.series[name], plotutil.Color(i))
		if err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		plots = append(plots, []*plot.Plot{p})
	}
	for i, name := range metrics {
		p, err := returnPanel(env, panelText{title: "metric " + name, y: name, dots: name + " of the episode"}, s.metricSeries[name], plotutil.Color(len(names)+i))
		if err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		plots = append(plots, []*plot.Plot{p})
	}
	img := vgimg.NewWith(vgimg.UseWH(plotWidth, vg.Length(len(plots))*plotPanelHeight), vgimg.UseDPI(plotDPI),
		vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6),
		PadLeft: vg.Points(6), PadRight: vg.Points(12), PadY: vg.Points(18)}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("--plot: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	return nil
}

// panelText is what a panel's title, y axis and dots say.
type panelText struct{ title, y, dots string }

// returnPanel draws one figure of the episodes, xs (an agent's returns, or a metric):
// dots in a pale c, the moving mean in c.
func returnPanel(env string, text panelText, xs []float64, c color.Color) (*plot.Plot, error) {
	window := movingWindow(len(xs))
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s (%s episodes)", env, text.title, group(int64(len(xs))))
	p.Title.Padding = vg.Points(6)
	p.Y.Label.Text = text.y
	p.X.Label.Text = "episode (in trial order)"

	dots := make(plotter.XYs, len(xs))
	means := make(plotter.XYs, len(xs))
	sum := 0.0
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, x := range xs {
		sum += x
		if i >= window {
			sum -= xs[i-window]
		}
		dots[i] = plotter.XY{X: float64(i + 1), Y: x}
		means[i] = plotter.XY{X: float64(i + 1), Y: sum / float64(min(i+1, window))}
		lo, hi = min(lo, x), max(hi, x)
	}
	sc, err := plotter.NewScatter(dots)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	sc.GlyphStyle.Radius = vg.Points(dotRadius(len(xs)))
	line, err := plotter.NewLine(means)
	if err != nil {
		return nil, err
	}
	line.LineStyle.Color = c
	if window > 1 {
		sc.GlyphStyle.Color = pale(c)
		line.LineStyle.Width = vg.Points(2)
		p.Add(plotter.NewGrid(), sc, line)
		p.Legend.Add(text.dots, sc)
		p.Legend.Add(fmt.Sprintf("mean of the last %d episodes", window), line)
	} else { // few episodes: the returns themselves, joined
		sc.GlyphStyle.Color = c
		line.LineStyle.Width = vg.Points(1)
		p.Add(plotter.NewGrid(), line, sc)
		p.Legend.Add(text.dots, line, sc)
	}
	p.Legend.Top = true
	p.Legend.Left = true

	// Room above and below the data, so that no dot sits on an edge and the legend
	// has space.
	span := hi - lo
	if span == 0 { // every return the same
		span = math.Max(0.1*math.Abs(hi), 1)
	}
	p.Y.Min, p.Y.Max = lo-0.08*span, hi+0.35*span
	p.X.Min, p.X.Max = 0, float64(len(xs)+1)
	return p, nil
}

// movingWindow is the number of episodes the moving mean of n episodes spans: about a
// twentieth of them, between 1 and 100.
func movingWindow(n int) int { return max(1, min(100, n/20)) }

// dotRadius shrinks the dots as episodes grow many.
func dotRadius(n int) float64 {
	switch {
	case n <= 100:
		return 2.5
	case n <= 1000:
		return 1.6
	}
	return 1
}

// pale mixes c with white, for the dots under the mean.
func pale(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((v>>8)*45/100 + 255*55/100) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 255}
}
