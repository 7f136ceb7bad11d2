package raster

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"strings"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"

	"github.com/batonrl/baton/env"
)

// MaxSide is the most pixels a picture may be wide or high.
const MaxSide = 4096

// Errors of the package.
var (
	// ErrEmpty: the frame has neither an SVG picture nor text to draw.
	ErrEmpty = errors.New("raster: the frame draws nothing (no SVG, no text)")
	// ErrSVG: the SVG document is not well-formed, or a value in it cannot be read.
	ErrSVG = errors.New("raster: bad SVG")
	// ErrUnsupported: the SVG uses a part of SVG that the package does not draw.
	ErrUnsupported = errors.New("raster: unsupported SVG")
	// ErrTooLarge: the picture is wider or higher than MaxSide pixels.
	ErrTooLarge = errors.New("raster: picture too large")
)

// Frame draws f: its SVG picture when it has one (SVG), else its Text as a terminal
// shows it (Text). A frame with neither is ErrEmpty.
func Frame(f env.Frame) (*image.RGBA, error) {
	switch {
	case f.SVG != "":
		return SVG(f.SVG)
	case f.Text != "":
		return Text(f.Text)
	}
	return nil, ErrEmpty
}

// RGB returns img's pixels as rows of red, green and blue bytes (numpy's H×W×3
// uint8 order), each pixel composited over white, written into dst when it has room
// (len(dst) ≥ 3·W·H) and into a new slice otherwise.
func RGB(img *image.RGBA, dst []byte) []byte {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	n := 3 * w * h
	if len(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	k := 0
	for y := range h {
		row := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):]
		for x := range w {
			p := row[4*x : 4*x+4 : 4*x+4]
			// Premultiplied: over white, c + (255 - a).
			bg := 255 - uint32(p[3])
			dst[k] = uint8(min(uint32(p[0])+bg, 255))
			dst[k+1] = uint8(min(uint32(p[1])+bg, 255))
			dst[k+2] = uint8(min(uint32(p[2])+bg, 255))
			k += 3
		}
	}
	return dst
}

// The text frame's look: Go Mono at textSize pixels, dark on white, with a margin,
// at least a terminal's textCols columns and textRows lines.
const (
	textSize   = 14
	textMargin = 8
	textCols   = 80
	textRows   = 24
)

var fonts struct {
	once          sync.Once
	mono, regular *opentype.Font
	err           error
}

func loadFonts() error {
	fonts.once.Do(func() {
		fonts.mono, fonts.err = opentype.Parse(gomono.TTF)
		if fonts.err == nil {
			fonts.regular, fonts.err = opentype.Parse(goregular.TTF)
		}
	})
	return fonts.err
}

// Text draws text as a terminal shows it: each line of text a row of Go Mono
// characters, dark on white, on a terminal of 80 columns and 24 lines, or as many
// as the longest line and the number of lines need (ErrTooLarge past MaxSide), so
// that the frames of one environment are mostly of one size, as a video wants. Tabs
// count as four spaces.
func Text(text string) (*image.RGBA, error) {
	if err := loadFonts(); err != nil {
		return nil, err
	}
	face, err := opentype.NewFace(fonts.mono, &opentype.FaceOptions{Size: textSize, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return nil, err
	}
	defer face.Close()
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(text, "\t", "    "), "\n"), "\n")
	adv, _ := face.GlyphAdvance('M')
	m := face.Metrics()
	lineH := m.Height.Ceil()
	cols := textCols
	for _, l := range lines {
		cols = max(cols, len([]rune(l)))
	}
	w := 2*textMargin + (fixed.Int26_6(cols) * adv).Ceil()
	h := 2*textMargin + lineH*max(len(lines), textRows)
	if w > MaxSide || h > MaxSide {
		return nil, fmt.Errorf("%w: %d×%d pixels of text (%d columns, %d lines); at most %d a side", ErrTooLarge, w, h, cols, len(lines), MaxSide)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	d := font.Drawer{Dst: img, Src: image.NewUniform(color.NRGBA{0x1a, 0x1a, 0x1a, 0xff}), Face: face}
	for i, l := range lines {
		// Characters one column each, as a terminal places them, whatever their advance.
		y := fixed.I(textMargin+i*lineH) + m.Ascent
		for k, r := range []rune(l) {
			d.Dot = fixed.Point26_6{X: fixed.I(textMargin) + fixed.Int26_6(k)*adv, Y: y}
			d.DrawString(string(r))
		}
	}
	return img, nil
}

// pt is a point in the picture's pixels.
type pt struct{ x, y float64 }

// canvas draws shapes onto an image.
type canvas struct {
	img *image.RGBA
	z   vector.Rasterizer
}

// bounds returns the pixels that the points cover, grown by pad and clipped to the
// image; ok is false when that is empty.
func (c *canvas) bounds(subs [][]pt, pad float64) (image.Rectangle, bool) {
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, s := range subs {
		for _, p := range s {
			x0, y0, x1, y1 = min(x0, p.x), min(y0, p.y), max(x1, p.x), max(y1, p.y)
		}
	}
	if x0 > x1 {
		return image.Rectangle{}, false
	}
	r := image.Rect(int(math.Floor(x0-pad)), int(math.Floor(y0-pad)), int(math.Ceil(x1+pad))+1, int(math.Ceil(y1+pad))+1)
	r = r.Intersect(c.img.Bounds())
	return r, !r.Empty()
}

// fill paints the inside of the subpaths (each closed) with col, nonzero winding.
func (c *canvas) fill(subs [][]pt, col color.NRGBA) {
	c.paint(subs, 0, col)
}

func (c *canvas) paint(subs [][]pt, pad float64, col color.NRGBA) {
	if col.A == 0 {
		return
	}
	r, ok := c.bounds(subs, pad)
	if !ok {
		return
	}
	c.z.Reset(r.Dx(), r.Dy())
	ox, oy := float64(r.Min.X), float64(r.Min.Y)
	for _, s := range subs {
		if len(s) < 3 {
			continue
		}
		c.z.MoveTo(float32(s[0].x-ox), float32(s[0].y-oy))
		for _, p := range s[1:] {
			c.z.LineTo(float32(p.x-ox), float32(p.y-oy))
		}
		c.z.ClosePath()
	}
	c.z.DrawOp = draw.Over
	c.z.Draw(c.img, r, image.NewUniform(col), image.Point{})
}

// stroke paints lines of width w along the subpaths (closed ones back to their start),
// joined round, with the cap at open ends.
func (c *canvas) stroke(subs [][]pt, closed []bool, w float64, lineCap string, col color.NRGBA) {
	if w <= 0 {
		return
	}
	hw := w / 2
	// Every piece is wound the same way (clockwise on the screen), so that where
	// pieces overlap the rasteriser adds their coverage rather than cancelling it.
	var pieces [][]pt
	for k, s := range subs {
		pts := s
		if closed[k] && len(s) > 1 {
			pts = append(append([]pt(nil), s...), s[0])
		}
		for i := 0; i+1 < len(pts); i++ {
			p0, p1 := pts[i], pts[i+1]
			dx, dy := p1.x-p0.x, p1.y-p0.y
			l := math.Hypot(dx, dy)
			if l == 0 {
				continue
			}
			nx, ny := -dy/l*hw, dx/l*hw
			if lineCap == "square" && !closed[k] {
				ex, ey := dx/l*hw, dy/l*hw
				if i == 0 {
					p0 = pt{p0.x - ex, p0.y - ey}
				}
				if i+2 == len(pts) {
					p1 = pt{p1.x + ex, p1.y + ey}
				}
			}
			pieces = append(pieces, []pt{{p0.x + nx, p0.y + ny}, {p1.x + nx, p1.y + ny}, {p1.x - nx, p1.y - ny}, {p0.x - nx, p0.y - ny}})
		}
		for i, p := range pts {
			end := !closed[k] && (i == 0 || i == len(pts)-1)
			if end && lineCap != "round" {
				continue
			}
			if closed[k] && i == len(pts)-1 {
				continue // the start again
			}
			pieces = append(pieces, disc(p, hw))
		}
	}
	c.paint(pieces, 0, col)
}

// disc is a circle of radius r around p as a polygon, wound as stroke's pieces are.
func disc(p pt, r float64) []pt {
	n := max(8, min(64, int(math.Ceil(r*2))))
	out := make([]pt, n)
	for i := range n {
		t := -2 * math.Pi * float64(i) / float64(n)
		out[i] = pt{p.x + r*math.Cos(t), p.y + r*math.Sin(t)}
	}
	return out
}

// text draws s with its baseline's start (anchor "start"), middle or end at p, in Go
// Regular of size px.
func (c *canvas) text(s string, p pt, px float64, anchor string, col color.NRGBA) error {
	if s == "" || px <= 0 || col.A == 0 {
		return nil
	}
	if err := loadFonts(); err != nil {
		return err
	}
	face, err := opentype.NewFace(fonts.regular, &opentype.FaceOptions{Size: px, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return err
	}
	defer face.Close()
	d := font.Drawer{Dst: c.img, Src: image.NewUniform(col), Face: face}
	x := p.x
	switch anchor {
	case "middle":
		x -= float64(d.MeasureString(s)) / 64 / 2
	case "end":
		x -= float64(d.MeasureString(s)) / 64
	}
	d.Dot = fixed.Point26_6{X: fixed.Int26_6(math.Round(x * 64)), Y: fixed.Int26_6(math.Round(p.y * 64))}
	d.DrawString(s)
	return nil
}
