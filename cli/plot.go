package cli

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"strconv"
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
	p.Title.Text = fmt.Sprintf("%s: %s (%s)", env, text.title, plural(len(xs), "episode", "episodes"))
	p.Title.Padding = vg.Points(6)
	p.Y.Label.Text = text.y
	p.X.Label.Text = "episode (in trial order)"
	p.X.Tick.Marker = integerTicks{}
	p.Y.Tick.Marker = distinctTicks{}

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
	// The legend is drawn last, over the data, on a box of the plot's background, so
	// that neither the dots nor the grid run through its text.
	p.Add(legendBox{legend: p.Legend})
	p.Legend = plot.New().Legend

	// Room above and below the data, so that no dot sits on an edge and the legend
	// has space.
	span := hi - lo
	if span == 0 { // every return the same: the value in the middle of a unit range
		half := math.Max(0.1*math.Abs(hi), 0.5)
		p.Y.Min, p.Y.Max = lo-half, hi+half
	} else {
		p.Y.Min, p.Y.Max = lo-0.08*span, hi+0.35*span
	}
	p.X.Min, p.X.Max = 0, float64(len(xs)+1)
	return p, nil
}

// legendBox draws a plot's legend on a box of the background colour, as the last of
// the plot's plotters (a plot draws its own legend with no background).
type legendBox struct{ legend plot.Legend }

func (b legendBox) Plot(c draw.Canvas, _ *plot.Plot) {
	// The legend's size; it is drawn in the top left corner (Top and Left), where
	// Rectangle does not place it.
	size := b.legend.Rectangle(c).Size()
	m := vg.Points(4)
	box := vg.Rectangle{
		Min: vg.Point{X: c.Min.X + b.legend.XOffs - m, Y: c.Max.Y + b.legend.YOffs - size.Y - m},
		Max: vg.Point{X: c.Min.X + b.legend.XOffs + size.X + 3*m, Y: c.Max.Y + b.legend.YOffs + m},
	}
	c.SetColor(color.White)
	c.Fill(box.Path())
	c.SetLineStyle(draw.LineStyle{Color: color.Gray{Y: 200}, Width: vg.Points(0.5)})
	c.Stroke(box.Path())
	b.legend.Draw(c)
}

// integerTicks marks an axis of episodes: whole numbers only, every one when they are
// few.
type integerTicks struct{}

func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := math.Ceil(lo), math.Floor(hi)
	if last-first <= 12 { // up to about ten episodes
		var ts []plot.Tick
		for v := first; v <= last; v++ {
			ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
		}
		return ts
	}
	var ts []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Value == math.Trunc(t.Value) {
			if t.Label != "" {
				t.Label = strconv.FormatFloat(t.Value, 'f', 0, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// distinctTicks are plot.DefaultTicks labelled with as many decimals as it takes for
// every label to read as its value (6.05 and 6.1, where the default writes 6 and 6.1).
type distinctTicks struct{}

func (distinctTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := (plot.DefaultTicks{}).Ticks(lo, hi)
	decimals := 0
	for _, t := range ts {
		if t.Label != "" {
			decimals = max(decimals, decimalsOf(t.Value))
		}
	}
	for i, t := range ts {
		if t.Label != "" {
			ts[i].Label = strconv.FormatFloat(t.Value, 'f', decimals, 64)
		}
	}
	return ts
}

// decimalsOf is the fewest decimals (at most 6) that write v to within a millionth of
// its magnitude.
func decimalsOf(v float64) int {
	tol := 1e-6 * math.Max(math.Abs(v), 1e-6)
	for d := 0; d < 6; d++ {
		r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', d, 64), 64)
		if err == nil && math.Abs(r-v) <= tol {
			return d
		}
	}
	return 6
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
