package raster_test

import (
	"image"
	"image/color"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/raster"
	"github.com/batonrl/baton/envs/catalog"
	"github.com/batonrl/baton/registry"
)

// rgb is the colour of a pixel, alpha dropped (the pictures are drawn on white).
func rgb(img *image.RGBA, x, y int) [3]uint8 {
	c := img.RGBAAt(x, y)
	return [3]uint8{c.R, c.G, c.B}
}

var (
	white = [3]uint8{255, 255, 255}
	black = [3]uint8{0, 0, 0}
	red   = [3]uint8{255, 0, 0}
	blue  = [3]uint8{0, 0, 255}
)

func svg(w, h int, body string) string {
	return `<svg xmlns="http://www.w3.org/2000/svg" width="` + itoa(w) + `" height="` + itoa(h) + `">` + body + `</svg>`
}

func itoa(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		n /= 10
		if n == 0 {
			return s
		}
	}
}

func TestSVGShapes(t *testing.T) {
	type probe struct {
		x, y int
		want [3]uint8
	}
	tests := []struct {
		name   string
		doc    string
		probes []probe
	}{
		{"rect", svg(40, 30, `<rect x="10" y="5" width="20" height="10" fill="#ff0000"/>`),
			[]probe{{20, 10, red}, {5, 10, white}, {20, 20, white}}},
		{"rect rounded corner left empty", svg(40, 40, `<rect x="0" y="0" width="40" height="40" rx="15" fill="blue"/>`),
			[]probe{{1, 1, white}, {20, 20, blue}, {20, 1, blue}}},
		{"circle", svg(40, 40, `<circle cx="20" cy="20" r="10" fill="rgb(0, 0, 255)"/>`),
			[]probe{{20, 20, blue}, {20, 12, blue}, {20, 5, white}, {8, 8, white}}},
		{"ellipse", svg(60, 40, `<ellipse cx="30" cy="20" rx="25" ry="5" fill="#000"/>`),
			[]probe{{10, 20, black}, {30, 12, white}}},
		{"line stroke with round caps", svg(50, 20, `<line x1="10" y1="10" x2="40" y2="10" stroke="#000000" stroke-width="6" stroke-linecap="round"/>`),
			[]probe{{25, 10, black}, {25, 8, black}, {8, 10, black}, {25, 16, white}, {4, 10, white}}},
		{"butt caps stop at the ends", svg(50, 20, `<line x1="10" y1="10" x2="40" y2="10" stroke="black" stroke-width="6"/>`),
			[]probe{{11, 10, black}, {8, 10, white}}},
		{"polygon", svg(40, 40, `<polygon points="5,35 35,35 20,5" fill="red"/>`),
			[]probe{{20, 30, red}, {5, 5, white}}},
		{"polyline filled and stroked", svg(40, 40, `<polyline points="5,5 35,5 35,35" fill="none" stroke="blue" stroke-width="4"/>`),
			[]probe{{20, 5, blue}, {35, 20, blue}, {15, 25, white}}},
		{"path with curves and an arc", svg(40, 40, `<path d="M5 20 A15 15 0 0 1 35 20 Z" fill="black"/>`),
			[]probe{{20, 10, black}, {20, 30, white}}},
		{"relative path", svg(40, 40, `<path d="m10 10 h20 v20 h-20 z" fill="red"/>`),
			[]probe{{20, 20, red}, {5, 5, white}}},
		{"cubic and quadratic", svg(40, 40, `<path d="M5 35 C5 5 35 5 35 35 Q20 20 5 35" fill="blue"/>`),
			[]probe{{20, 20, blue}, {20, 38, white}}},
		{"group style and transform", svg(40, 40, `<g fill="red" transform="translate(20 0)"><rect x="0" y="0" width="10" height="10"/></g>`),
			[]probe{{25, 5, red}, {5, 5, white}}},
		{"rotate about a centre", svg(40, 40, `<rect x="15" y="0" width="10" height="20" fill="black" transform="rotate(90 20 20)"/>`),
			[]probe{{30, 20, black}, {20, 5, white}}},
		{"viewBox scales", `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" viewBox="0 0 20 20"><rect x="10" y="10" width="10" height="10" fill="red"/></svg>`,
			[]probe{{30, 30, red}, {15, 15, white}}},
		{"style attribute and opacity", svg(20, 20, `<rect width="20" height="20" style="fill: #000000; fill-opacity: 0.5"/>`),
			[]probe{{10, 10, [3]uint8{127, 127, 127}}}},
		{"fill none draws nothing", svg(20, 20, `<rect width="20" height="20" fill="none"/>`),
			[]probe{{10, 10, white}}},
		{"skipped elements", svg(20, 20, `<title>t</title><defs><linearGradient id="g"/></defs><rect width="20" height="20" fill="red"/>`),
			[]probe{{10, 10, red}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := raster.SVG(tt.doc)
			require.NoError(t, err)
			for _, p := range tt.probes {
				got := rgb(img, p.x, p.y)
				for k := range 3 {
					assert.InDelta(t, float64(p.want[k]), float64(got[k]), 2, "pixel (%d, %d): got %v, want %v", p.x, p.y, got, p.want)
				}
			}
		})
	}
}

func TestSVGText(t *testing.T) {
	img, err := raster.SVG(svg(200, 40, `<text x="100" y="30" font-size="24" text-anchor="middle" fill="#000">ROCK</text>`))
	require.NoError(t, err)
	dark, left, right := 0, 200, 0
	for y := range 40 {
		for x := range 200 {
			if rgb(img, x, y)[0] < 128 {
				dark++
				left, right = min(left, x), max(right, x)
			}
		}
	}
	assert.Greater(t, dark, 50, "the word is drawn")
	assert.InDelta(t, 100, (left+right)/2, 4, "centred on x")
}

func TestSVGErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want error
		says string
	}{
		{"not XML", `<svg width="10" height="10"><rect`, raster.ErrSVG, ""},
		{"not svg", `<html/>`, raster.ErrSVG, "root element"},
		{"no size", `<svg xmlns="http://www.w3.org/2000/svg"/>`, raster.ErrSVG, "width"},
		{"gradient fill", svg(10, 10, `<rect width="10" height="10" fill="url(#g)"/>`), raster.ErrUnsupported, "gradients"},
		{"unknown element", svg(10, 10, `<image href="x.png"/>`), raster.ErrUnsupported, "<image>"},
		{"dashes", svg(10, 10, `<line x2="10" stroke="red" stroke-dasharray="2 2"/>`), raster.ErrUnsupported, "dash"},
		{"unknown colour", svg(10, 10, `<rect width="10" height="10" fill="chartreuse"/>`), raster.ErrUnsupported, "chartreuse"},
		{"bad path", svg(10, 10, `<path d="M 1 x"/>`), raster.ErrSVG, "path data"},
		{"too large", svg(raster.MaxSide+1, 10, ``), raster.ErrTooLarge, "4096"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := raster.SVG(tt.doc)
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.says)
		})
	}
}

func TestText(t *testing.T) {
	small, err := raster.Text("round 1 of 3\n")
	require.NoError(t, err)
	long, err := raster.Text(strings.Repeat("x", 120) + "\n" + strings.Repeat("line\n", 30))
	require.NoError(t, err)
	assert.Greater(t, small.Bounds().Dx(), 600, "80 columns at least")
	assert.Greater(t, long.Bounds().Dx(), small.Bounds().Dx(), "a longer line widens it")
	assert.Greater(t, long.Bounds().Dy(), small.Bounds().Dy(), "more lines heighten it")
	assert.Equal(t, white, rgb(small, small.Bounds().Dx()-2, small.Bounds().Dy()-2))
	_, err = raster.Text(strings.Repeat("x", 1000))
	assert.ErrorIs(t, err, raster.ErrTooLarge)
}

func TestFrame(t *testing.T) {
	_, err := raster.Frame(env.Frame{})
	assert.ErrorIs(t, err, raster.ErrEmpty)
	img, err := raster.Frame(env.Frame{Text: "only text\n", SVG: svg(10, 10, `<rect width="10" height="10" fill="red"/>`)})
	require.NoError(t, err)
	assert.Equal(t, image.Pt(10, 10), img.Bounds().Size(), "the SVG wins over the text")
}

func TestRGB(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 2, 1))
	img.Set(0, 0, color.NRGBA{255, 0, 0, 255})
	img.Set(1, 0, color.NRGBA{0, 0, 0, 0}) // transparent: white
	got := raster.RGB(img, nil)
	assert.Equal(t, []byte{255, 0, 0, 255, 255, 255}, got)
	buf := make([]byte, 10)
	assert.Equal(t, got, raster.RGB(img, buf))
	assert.Equal(t, got, buf[:6], "written into the caller's buffer")
}

// The shipped environments' frames look like their SVG pictures: the cart-pole as
// Gymnasium draws it (600 x 400, a black cart on the track at y 300, the pole above
// it), the maze's walls, corridors, goal and agent.
func TestShippedFrames(t *testing.T) {
	reg, err := catalog.New()
	require.NoError(t, err)
	frame := func(name string) *image.RGBA {
		e, err := reg.Lookup(name)
		require.NoError(t, err)
		f, err := e.Open(nil)
		require.NoError(t, err)
		m, err := f.NewEnv(registry.EnvOptions{})
		require.NoError(t, err)
		turn, err := m.Reset(5)
		require.NoError(t, err)
		if name != "cartpole" {
			_, err = m.Step(turn.Next, agent.RawAction{Int: 0})
			require.NoError(t, err)
		}
		img, err := raster.Frame(e.Look.Frame(m))
		require.NoError(t, err)
		return img
	}
	cp := frame("cartpole")
	require.Equal(t, image.Pt(600, 400), cp.Bounds().Size())
	assert.Equal(t, black, rgb(cp, 285, 292), "the cart, centred at the start")
	pole := rgb(cp, 302, 220)
	assert.InDelta(t, 0xca, float64(pole[0]), 8, "the pole, above the cart: %v", pole)
	assert.Equal(t, white, rgb(cp, 50, 50))

	mz := frame("maze")
	colours := map[[3]uint8]int{}
	b := mz.Bounds()
	for y := 0; y < b.Dy(); y += 2 {
		for x := 0; x < b.Dx(); x += 2 {
			colours[rgb(mz, x, y)]++
		}
	}
	for _, c := range [][3]uint8{{0x33, 0x33, 0x33}, white, {0x74, 0xc4, 0x76}, {0xde, 0x2d, 0x26}} {
		assert.Positive(t, colours[c], "the maze draws %v (walls, corridors, goal, agent)", c)
	}

	// rps draws its SVG picture (480 x 240, each player's panel outlined in #333333);
	// webtest has no picture and draws its text, wider than the default 80 columns.
	rp := frame("rps")
	require.Equal(t, image.Pt(480, 240), rp.Bounds().Size())
	assert.Equal(t, white, rgb(rp, 2, 2), "rps's background")
	assert.Equal(t, [3]uint8{0x33, 0x33, 0x33}, rgb(rp, 30, 136), "the first player's panel's edge")
	wt := frame("webtest")
	assert.Greater(t, wt.Bounds().Dx(), 600, "webtest draws its text")
}
