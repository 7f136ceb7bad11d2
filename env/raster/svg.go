package raster

import (
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"io"
	"math"
	"strconv"
	"strings"
)

// matrix is an affine transform: x' = a·x + c·y + e, y' = b·x + d·y + f.
type matrix struct{ a, b, c, d, e, f float64 }

var identity = matrix{a: 1, d: 1}

// then returns the transform that applies n, then m (m·n).
func (m matrix) then(n matrix) matrix {
	return matrix{
		a: m.a*n.a + m.c*n.b, b: m.b*n.a + m.d*n.b,
		c: m.a*n.c + m.c*n.d, d: m.b*n.c + m.d*n.d,
		e: m.a*n.e + m.c*n.f + m.e, f: m.b*n.e + m.d*n.f + m.f,
	}
}

func (m matrix) apply(p pt) pt { return pt{m.a*p.x + m.c*p.y + m.e, m.b*p.x + m.d*p.y + m.f} }

// scale is the transform's mean scale, for stroke widths and font sizes.
func (m matrix) scale() float64 { return math.Sqrt(math.Abs(m.a*m.d - m.b*m.c)) }

// paint is a fill or stroke: a colour, or none.
type paint struct {
	c    color.NRGBA
	none bool
}

// style is what an element inherits from its parents.
type style struct {
	fill, stroke                        paint
	strokeWidth                         float64
	lineCap, anchor                     string
	opacity, fillOpacity, strokeOpacity float64
	fontSize                            float64
	m                                   matrix
}

// SVG draws an SVG document (see the package documentation for the part of SVG it
// draws) on white, at the root's width and height in pixels (the viewBox's size
// when they are missing). A document it cannot read wraps ErrSVG; one that uses
// what it does not draw, ErrUnsupported; one larger than MaxSide a side,
// ErrTooLarge.
func SVG(doc string) (*image.RGBA, error) {
	dec := xml.NewDecoder(strings.NewReader(doc))
	var c *canvas
	stack := []style{}
	var text *textRun
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSVG, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			switch name {
			case "title", "desc", "metadata", "defs", "style":
				if name == "style" {
					return nil, fmt.Errorf("%w: <style> sheets (use presentation attributes)", ErrUnsupported)
				}
				if err := dec.Skip(); err != nil {
					return nil, fmt.Errorf("%w: %w", ErrSVG, err)
				}
				continue
			}
			if c == nil {
				if name != "svg" {
					return nil, fmt.Errorf("%w: the root element is <%s>, not <svg>", ErrSVG, name)
				}
				var st style
				if c, st, err = root(t); err != nil {
					return nil, err
				}
				stack = append(stack, st)
				continue
			}
			if text != nil && name != "tspan" {
				return nil, fmt.Errorf("%w: <%s> inside <text>", ErrUnsupported, name)
			}
			st, err := inherit(stack[len(stack)-1], t)
			if err != nil {
				return nil, err
			}
			stack = append(stack, st)
			switch name {
			case "g", "tspan":
			case "text":
				text = &textRun{style: st, at: pt{attrNum(t, "x"), attrNum(t, "y")}}
			default:
				if err := shape(c, name, t, st); err != nil {
					return nil, err
				}
			}
		case xml.EndElement:
			if c == nil || len(stack) == 0 {
				continue
			}
			if t.Name.Local == "text" && text != nil {
				if err := text.draw(c); err != nil {
					return nil, err
				}
				text = nil
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if text != nil {
				text.s.Write(t)
			}
		}
	}
	if c == nil {
		return nil, fmt.Errorf("%w: no <svg> element", ErrSVG)
	}
	return c.img, nil
}

// textRun collects a text element's characters until its end.
type textRun struct {
	style
	at pt
	s  strings.Builder
}

func (r *textRun) draw(c *canvas) error {
	s := strings.Join(strings.Fields(r.s.String()), " ")
	if r.fill.none {
		return nil
	}
	col := r.fill.c
	col.A = uint8(math.Round(float64(col.A) * clamp01(r.opacity*r.fillOpacity)))
	return c.text(s, r.m.apply(r.at), r.fontSize*r.m.scale(), r.anchor, col)
}

// root reads the svg element: the picture's size and the transform of its viewBox.
func root(t xml.StartElement) (*canvas, style, error) {
	st := style{
		fill: paint{c: color.NRGBA{A: 255}}, stroke: paint{none: true}, strokeWidth: 1, lineCap: "butt", anchor: "start",
		opacity: 1, fillOpacity: 1, strokeOpacity: 1, fontSize: 16, m: identity,
	}
	var vb []float64
	if s, ok := attr(t, "viewBox"); ok {
		var err error
		if vb, err = numbers(s); err != nil || len(vb) != 4 || vb[2] <= 0 || vb[3] <= 0 {
			return nil, st, fmt.Errorf("%w: viewBox %q: want min-x, min-y, width, height", ErrSVG, s)
		}
	}
	size := func(name string, fromBox float64) (float64, error) {
		s, ok := attr(t, name)
		if !ok || s == "100%" {
			if vb == nil {
				return 0, fmt.Errorf("%w: the svg element has neither a %s nor a viewBox", ErrSVG, name)
			}
			return fromBox, nil
		}
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "px"), 64)
		if err != nil || v <= 0 {
			return 0, fmt.Errorf("%w: %s %q: want a length in pixels", ErrSVG, name, s)
		}
		return v, nil
	}
	var w, h float64
	var err error
	if vb != nil {
		w, h = vb[2], vb[3]
	}
	if w, err = size("width", w); err != nil {
		return nil, st, err
	}
	if h, err = size("height", h); err != nil {
		return nil, st, err
	}
	W, H := int(math.Ceil(w)), int(math.Ceil(h))
	if W > MaxSide || H > MaxSide {
		return nil, st, fmt.Errorf("%w: %d×%d pixels; at most %d a side", ErrTooLarge, W, H, MaxSide)
	}
	if vb != nil {
		st.m = matrix{a: w / vb[2], d: h / vb[3]}.then(matrix{a: 1, d: 1, e: -vb[0], f: -vb[1]})
	}
	st, err = inherit(st, t)
	if err != nil {
		return nil, st, err
	}
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	return &canvas{img: img}, st, nil
}

// attr returns the value of the attribute name of t.
func attr(t xml.StartElement, name string) (string, bool) {
	for _, a := range t.Attr {
		if a.Name.Local == name && (a.Name.Space == "" || a.Name.Space == "http://www.w3.org/2000/svg") {
			return a.Value, true
		}
	}
	return "", false
}

// attrNum is the number of an attribute, 0 when missing or unreadable (a length
// with "px" reads as its number).
func attrNum(t xml.StartElement, name string) float64 {
	s, _ := attr(t, name)
	v, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "px"), 64)
	return v
}

// inherit returns the style of element t, child of an element of style st.
func inherit(st style, t xml.StartElement) (style, error) {
	props := map[string]string{}
	for _, a := range t.Attr {
		if a.Name.Space != "" && a.Name.Space != "http://www.w3.org/2000/svg" {
			continue
		}
		props[a.Name.Local] = a.Value
	}
	if s, ok := props["style"]; ok {
		for _, decl := range strings.Split(s, ";") {
			k, v, ok := strings.Cut(decl, ":")
			if ok {
				props[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	var err error
	for k, v := range props {
		v = strings.TrimSpace(v)
		switch k {
		case "fill":
			st.fill, err = parsePaint(k, v)
		case "stroke":
			st.stroke, err = parsePaint(k, v)
		case "stroke-width":
			st.strokeWidth, err = length(k, v)
		case "stroke-linecap":
			if v != "butt" && v != "round" && v != "square" {
				err = fmt.Errorf("%w: stroke-linecap %q", ErrUnsupported, v)
			}
			st.lineCap = v
		case "text-anchor":
			if v != "start" && v != "middle" && v != "end" {
				err = fmt.Errorf("%w: text-anchor %q", ErrUnsupported, v)
			}
			st.anchor = v
		case "font-size":
			st.fontSize, err = length(k, v)
		case "opacity":
			var o float64
			o, err = length(k, v)
			st.opacity *= o
		case "fill-opacity":
			st.fillOpacity, err = length(k, v)
		case "stroke-opacity":
			st.strokeOpacity, err = length(k, v)
		case "transform":
			var m matrix
			m, err = parseTransform(v)
			st.m = st.m.then(m)
		case "clip-path", "mask", "filter", "marker-start", "marker-mid", "marker-end":
			if v != "none" {
				err = fmt.Errorf("%w: %s", ErrUnsupported, k)
			}
		case "stroke-dasharray":
			if v != "none" {
				err = fmt.Errorf("%w: stroke-dasharray (dashed lines)", ErrUnsupported)
			}
		case "fill-rule":
			if v != "nonzero" {
				err = fmt.Errorf("%w: fill-rule %q (nonzero only)", ErrUnsupported, v)
			}
		}
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

func length(name, v string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSuffix(v, "px"), 64)
	if err != nil || x < 0 || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%w: %s %q: want a number of pixels", ErrSVG, name, v)
	}
	return x, nil
}

func clamp01(x float64) float64 { return min(max(x, 0), 1) }

// named holds the CSS 1 and 2 colour names.
var named = map[string]color.NRGBA{
	"black": {0, 0, 0, 255}, "silver": {192, 192, 192, 255}, "gray": {128, 128, 128, 255}, "grey": {128, 128, 128, 255},
	"white": {255, 255, 255, 255}, "maroon": {128, 0, 0, 255}, "red": {255, 0, 0, 255}, "purple": {128, 0, 128, 255},
	"fuchsia": {255, 0, 255, 255}, "green": {0, 128, 0, 255}, "lime": {0, 255, 0, 255}, "olive": {128, 128, 0, 255},
	"yellow": {255, 255, 0, 255}, "navy": {0, 0, 128, 255}, "blue": {0, 0, 255, 255}, "teal": {0, 128, 128, 255},
	"aqua": {0, 255, 255, 255}, "orange": {255, 165, 0, 255}, "transparent": {0, 0, 0, 0},
}

func parsePaint(name, v string) (paint, error) {
	v = strings.ToLower(v)
	switch {
	case v == "none":
		return paint{none: true}, nil
	case strings.HasPrefix(v, "#"):
		h := v[1:]
		if len(h) == 3 {
			h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
		}
		x, err := strconv.ParseUint(h, 16, 32)
		if len(h) != 6 || err != nil {
			return paint{}, fmt.Errorf("%w: %s %q: want #rgb or #rrggbb", ErrSVG, name, v)
		}
		return paint{c: color.NRGBA{uint8(x >> 16), uint8(x >> 8), uint8(x), 255}}, nil
	case strings.HasPrefix(v, "rgb(") && strings.HasSuffix(v, ")"):
		ns, err := numbers(v[4 : len(v)-1])
		if err != nil || len(ns) != 3 {
			return paint{}, fmt.Errorf("%w: %s %q: want rgb(r, g, b)", ErrSVG, name, v)
		}
		var c [3]uint8
		for i, x := range ns {
			c[i] = uint8(min(max(math.Round(x), 0), 255))
		}
		return paint{c: color.NRGBA{c[0], c[1], c[2], 255}}, nil
	case strings.HasPrefix(v, "url("):
		return paint{}, fmt.Errorf("%w: %s %q (gradients and patterns)", ErrUnsupported, name, v)
	}
	if c, ok := named[v]; ok {
		return paint{c: c}, nil
	}
	return paint{}, fmt.Errorf("%w: %s %q: not a colour this package knows", ErrUnsupported, name, v)
}

// numbers reads a list of numbers separated by spaces or commas.
func numbers(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

func parseTransform(s string) (matrix, error) {
	m := identity
	rest := strings.TrimSpace(s)
	for rest != "" {
		open := strings.IndexByte(rest, '(')
		end := strings.IndexByte(rest, ')')
		if open < 0 || end < open {
			return m, fmt.Errorf("%w: transform %q", ErrSVG, s)
		}
		fn := strings.TrimSpace(rest[:open])
		args, err := numbers(rest[open+1 : end])
		if err != nil {
			return m, fmt.Errorf("%w: transform %q: %w", ErrSVG, s, err)
		}
		rest = strings.TrimLeft(rest[end+1:], " ,\t\n")
		bad := func(want ...int) bool {
			for _, n := range want {
				if len(args) == n {
					return false
				}
			}
			return true
		}
		var n matrix
		switch fn {
		case "matrix":
			if bad(6) {
				return m, fmt.Errorf("%w: transform %q: matrix takes 6 numbers", ErrSVG, s)
			}
			n = matrix{args[0], args[1], args[2], args[3], args[4], args[5]}
		case "translate":
			if bad(1, 2) {
				return m, fmt.Errorf("%w: transform %q: translate takes 1 or 2 numbers", ErrSVG, s)
			}
			n = matrix{a: 1, d: 1, e: args[0]}
			if len(args) == 2 {
				n.f = args[1]
			}
		case "scale":
			if bad(1, 2) {
				return m, fmt.Errorf("%w: transform %q: scale takes 1 or 2 numbers", ErrSVG, s)
			}
			n = matrix{a: args[0], d: args[0]}
			if len(args) == 2 {
				n.d = args[1]
			}
		case "rotate":
			if bad(1, 3) {
				return m, fmt.Errorf("%w: transform %q: rotate takes 1 or 3 numbers", ErrSVG, s)
			}
			t := args[0] * math.Pi / 180
			sin, cos := math.Sincos(t)
			n = matrix{a: cos, b: sin, c: -sin, d: cos}
			if len(args) == 3 {
				cx, cy := args[1], args[2]
				n = matrix{a: 1, d: 1, e: cx, f: cy}.then(n).then(matrix{a: 1, d: 1, e: -cx, f: -cy})
			}
		case "skewX", "skewY":
			if bad(1) {
				return m, fmt.Errorf("%w: transform %q: %s takes 1 number", ErrSVG, s, fn)
			}
			k := math.Tan(args[0] * math.Pi / 180)
			n = matrix{a: 1, d: 1, c: k}
			if fn == "skewY" {
				n = matrix{a: 1, d: 1, b: k}
			}
		default:
			return m, fmt.Errorf("%w: transform %q: %q", ErrUnsupported, s, fn)
		}
		m = m.then(n)
	}
	return m, nil
}

// shape draws one shape element.
func shape(c *canvas, name string, t xml.StartElement, st style) error {
	num := func(k string) float64 { return attrNum(t, k) }
	var p pathBuilder
	switch name {
	case "rect":
		x, y, w, h := num("x"), num("y"), num("width"), num("height")
		if w <= 0 || h <= 0 {
			return nil
		}
		_, okx := attr(t, "rx")
		_, oky := attr(t, "ry")
		rX, rY := num("rx"), num("ry")
		switch {
		case !okx && oky:
			rX = rY
		case okx && !oky:
			rY = rX
		}
		rX, rY = min(rX, w/2), min(rY, h/2)
		if rX > 0 && rY > 0 {
			p.move(pt{x + rX, y})
			p.line(pt{x + w - rX, y})
			p.arc(rX, rY, 0, false, true, pt{x + w, y + rY})
			p.line(pt{x + w, y + h - rY})
			p.arc(rX, rY, 0, false, true, pt{x + w - rX, y + h})
			p.line(pt{x + rX, y + h})
			p.arc(rX, rY, 0, false, true, pt{x, y + h - rY})
			p.line(pt{x, y + rY})
			p.arc(rX, rY, 0, false, true, pt{x + rX, y})
		} else {
			p.move(pt{x, y})
			p.line(pt{x + w, y})
			p.line(pt{x + w, y + h})
			p.line(pt{x, y + h})
		}
		p.close()
	case "circle", "ellipse":
		cx, cy := num("cx"), num("cy")
		rx, ry := num("rx"), num("ry")
		if name == "circle" {
			rx, ry = num("r"), num("r")
		}
		if rx <= 0 || ry <= 0 {
			return nil
		}
		p.move(pt{cx + rx, cy})
		p.arc(rx, ry, 0, false, true, pt{cx - rx, cy})
		p.arc(rx, ry, 0, false, true, pt{cx + rx, cy})
		p.close()
	case "line":
		p.move(pt{num("x1"), num("y1")})
		p.line(pt{num("x2"), num("y2")})
	case "polyline", "polygon":
		s, _ := attr(t, "points")
		ns, err := numbers(s)
		if err != nil || len(ns)%2 != 0 {
			return fmt.Errorf("%w: <%s> points %q", ErrSVG, name, s)
		}
		for i := 0; i+1 < len(ns); i += 2 {
			if i == 0 {
				p.move(pt{ns[0], ns[1]})
			} else {
				p.line(pt{ns[i], ns[i+1]})
			}
		}
		if name == "polygon" {
			p.close()
		}
	case "path":
		d, _ := attr(t, "d")
		if err := p.data(d); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: element <%s>", ErrUnsupported, name)
	}
	subs, closed := p.flatten(st.m)
	if !st.fill.none && name != "line" { // a line has no inside
		col := st.fill.c
		col.A = uint8(math.Round(float64(col.A) * clamp01(st.opacity*st.fillOpacity)))
		c.fill(subs, col)
	}
	if !st.stroke.none && st.strokeWidth > 0 {
		col := st.stroke.c
		col.A = uint8(math.Round(float64(col.A) * clamp01(st.opacity*st.strokeOpacity)))
		c.stroke(subs, closed, st.strokeWidth*st.m.scale(), st.lineCap, col)
	}
	return nil
}

// seg is a piece of a path in user space: a line to to, or a cubic Bézier curve
// through c1 and c2 to to.
type seg struct {
	cubic      bool
	c1, c2, to pt
}

type subpath struct {
	start  pt
	segs   []seg
	closed bool
}

// pathBuilder collects a path's subpaths in user space.
type pathBuilder struct {
	subs []subpath
	cur  pt
	// ctrl is the last control point of the last curve, for S and T; ok when the last
	// command was a curve of that kind.
	ctrl       pt
	cubicCtrl  bool
	quadCtrl   bool
	quadCtrlPt pt
}

func (p *pathBuilder) move(to pt) {
	p.subs = append(p.subs, subpath{start: to})
	p.cur = to
}

func (p *pathBuilder) last() *subpath {
	if len(p.subs) == 0 {
		p.move(p.cur)
	}
	return &p.subs[len(p.subs)-1]
}

func (p *pathBuilder) line(to pt) {
	s := p.last()
	s.segs = append(s.segs, seg{to: to})
	p.cur = to
}

func (p *pathBuilder) cubic(c1, c2, to pt) {
	s := p.last()
	s.segs = append(s.segs, seg{cubic: true, c1: c1, c2: c2, to: to})
	p.cur = to
}

func (p *pathBuilder) quad(q, to pt) {
	from := p.cur
	p.cubic(pt{from.x + 2.0/3*(q.x-from.x), from.y + 2.0/3*(q.y-from.y)}, pt{to.x + 2.0/3*(q.x-to.x), to.y + 2.0/3*(q.y-to.y)}, to)
}

func (p *pathBuilder) close() {
	if len(p.subs) == 0 {
		return
	}
	s := &p.subs[len(p.subs)-1]
	s.closed = true
	p.cur = s.start
	// A command after Z starts a new subpath at the same point.
	p.subs = append(p.subs, subpath{start: s.start})
}

// arc adds an elliptical arc from the current point to to, as SVG's A command (the
// endpoint parameterisation of SVG 1.1, appendix F.6), as cubic curves.
func (p *pathBuilder) arc(rx, ry, phiDeg float64, large, sweep bool, to pt) {
	from := p.cur
	if from == to {
		return
	}
	rx, ry = math.Abs(rx), math.Abs(ry)
	if rx == 0 || ry == 0 {
		p.line(to)
		return
	}
	sinPhi, cosPhi := math.Sincos(phiDeg * math.Pi / 180)
	dx, dy := (from.x-to.x)/2, (from.y-to.y)/2
	x1 := cosPhi*dx + sinPhi*dy
	y1 := -sinPhi*dx + cosPhi*dy
	if l := x1*x1/(rx*rx) + y1*y1/(ry*ry); l > 1 {
		rx, ry = rx*math.Sqrt(l), ry*math.Sqrt(l)
	}
	num := rx*rx*ry*ry - rx*rx*y1*y1 - ry*ry*x1*x1
	den := rx*rx*y1*y1 + ry*ry*x1*x1
	k := math.Sqrt(math.Max(0, num/den))
	if large == sweep {
		k = -k
	}
	cx1, cy1 := k*rx*y1/ry, -k*ry*x1/rx
	cx := cosPhi*cx1 - sinPhi*cy1 + (from.x+to.x)/2
	cy := sinPhi*cx1 + cosPhi*cy1 + (from.y+to.y)/2
	angle := func(ux, uy, vx, vy float64) float64 {
		return math.Atan2(ux*vy-uy*vx, ux*vx+uy*vy)
	}
	t1 := angle(1, 0, (x1-cx1)/rx, (y1-cy1)/ry)
	dt := angle((x1-cx1)/rx, (y1-cy1)/ry, (-x1-cx1)/rx, (-y1-cy1)/ry)
	if !sweep && dt > 0 {
		dt -= 2 * math.Pi
	} else if sweep && dt < 0 {
		dt += 2 * math.Pi
	}
	n := int(math.Ceil(math.Abs(dt) / (math.Pi / 2)))
	step := dt / float64(n)
	alpha := 4.0 / 3 * math.Tan(step/4)
	point := func(t float64) (pt, pt) { // the point at t and the derivative's direction
		s, c := math.Sincos(t)
		x, y := rx*c, ry*s
		ddx, ddy := -rx*s, ry*c
		return pt{cosPhi*x - sinPhi*y + cx, sinPhi*x + cosPhi*y + cy}, pt{cosPhi*ddx - sinPhi*ddy, sinPhi*ddx + cosPhi*ddy}
	}
	t := t1
	for i := range n {
		a, da := point(t)
		b, db := point(t + step)
		if i == n-1 {
			b = to
		}
		p.cubic(pt{a.x + alpha*da.x, a.y + alpha*da.y}, pt{b.x - alpha*db.x, b.y - alpha*db.y}, b)
		t += step
	}
}

// flatten returns the subpaths in the picture's pixels, curves as polylines, and
// which are closed.
func (p *pathBuilder) flatten(m matrix) ([][]pt, []bool) {
	var subs [][]pt
	var closed []bool
	for _, s := range p.subs {
		if len(s.segs) == 0 {
			continue
		}
		cur := m.apply(s.start)
		pts := []pt{cur}
		for _, g := range s.segs {
			to := m.apply(g.to)
			if !g.cubic {
				pts = append(pts, to)
				cur = to
				continue
			}
			c1, c2 := m.apply(g.c1), m.apply(g.c2)
			l := math.Hypot(c1.x-cur.x, c1.y-cur.y) + math.Hypot(c2.x-c1.x, c2.y-c1.y) + math.Hypot(to.x-c2.x, to.y-c2.y)
			n := max(2, min(64, int(math.Ceil(l/3))))
			for i := 1; i <= n; i++ {
				t := float64(i) / float64(n)
				u := 1 - t
				pts = append(pts, pt{
					u*u*u*cur.x + 3*u*u*t*c1.x + 3*u*t*t*c2.x + t*t*t*to.x,
					u*u*u*cur.y + 3*u*u*t*c1.y + 3*u*t*t*c2.y + t*t*t*to.y,
				})
			}
			cur = to
		}
		subs = append(subs, pts)
		closed = append(closed, s.closed)
	}
	return subs, closed
}

// data reads SVG path data.
func (p *pathBuilder) data(d string) error {
	sc := pathScanner{s: d}
	var cmd byte
	for {
		sc.skip()
		if sc.done() {
			return nil
		}
		if c := sc.s[sc.i]; strings.IndexByte("MmLlHhVvCcSsQqTtAaZz", c) >= 0 {
			cmd = c
			sc.i++
		} else if cmd == 0 {
			return fmt.Errorf("%w: path data %q: want a command at %d", ErrSVG, d, sc.i)
		}
		rel := cmd >= 'a'
		at := func(x, y float64) pt {
			if rel {
				return pt{p.cur.x + x, p.cur.y + y}
			}
			return pt{x, y}
		}
		var err error
		nums := func(n int) []float64 {
			if err != nil {
				return nil
			}
			out := make([]float64, n)
			for i := range out {
				if out[i], err = sc.number(); err != nil {
					return nil
				}
			}
			return out
		}
		wasCubic, wasQuad := false, false
		switch cmd {
		case 'Z', 'z':
			p.close()
			p.cubicCtrl, p.quadCtrl = false, false
			continue
		case 'M', 'm':
			a := nums(2)
			if err == nil {
				p.move(at(a[0], a[1]))
				// Further pairs are line-tos.
				cmd = map[bool]byte{true: 'l', false: 'L'}[rel]
			}
		case 'L', 'l':
			if a := nums(2); err == nil {
				p.line(at(a[0], a[1]))
			}
		case 'H', 'h':
			if a := nums(1); err == nil {
				x := a[0]
				if rel {
					x += p.cur.x
				}
				p.line(pt{x, p.cur.y})
			}
		case 'V', 'v':
			if a := nums(1); err == nil {
				y := a[0]
				if rel {
					y += p.cur.y
				}
				p.line(pt{p.cur.x, y})
			}
		case 'C', 'c':
			if a := nums(6); err == nil {
				c1, c2, to := at(a[0], a[1]), at(a[2], a[3]), at(a[4], a[5])
				p.cubic(c1, c2, to)
				p.ctrl, wasCubic = c2, true
			}
		case 'S', 's':
			if a := nums(4); err == nil {
				c1 := p.cur
				if p.cubicCtrl {
					c1 = pt{2*p.cur.x - p.ctrl.x, 2*p.cur.y - p.ctrl.y}
				}
				c2, to := at(a[0], a[1]), at(a[2], a[3])
				p.cubic(c1, c2, to)
				p.ctrl, wasCubic = c2, true
			}
		case 'Q', 'q':
			if a := nums(4); err == nil {
				q, to := at(a[0], a[1]), at(a[2], a[3])
				p.quad(q, to)
				p.quadCtrlPt, wasQuad = q, true
			}
		case 'T', 't':
			if a := nums(2); err == nil {
				q := p.cur
				if p.quadCtrl {
					q = pt{2*p.cur.x - p.quadCtrlPt.x, 2*p.cur.y - p.quadCtrlPt.y}
				}
				to := at(a[0], a[1])
				p.quad(q, to)
				p.quadCtrlPt, wasQuad = q, true
			}
		case 'A', 'a':
			var a []float64
			var large, sweep bool
			if a = nums(3); err == nil {
				if large, err = sc.flag(); err == nil {
					if sweep, err = sc.flag(); err == nil {
						if b := nums(2); err == nil {
							p.arc(a[0], a[1], a[2], large, sweep, at(b[0], b[1]))
						}
					}
				}
			}
		}
		if err != nil {
			return fmt.Errorf("%w: path data %q: %w", ErrSVG, d, err)
		}
		p.cubicCtrl, p.quadCtrl = wasCubic, wasQuad
	}
}

// pathScanner reads the numbers and flags of path data.
type pathScanner struct {
	s string
	i int
}

func (sc *pathScanner) skip() {
	for sc.i < len(sc.s) && strings.IndexByte(" \t\n\r,", sc.s[sc.i]) >= 0 {
		sc.i++
	}
}

func (sc *pathScanner) done() bool { return sc.i >= len(sc.s) }

var errNumber = errors.New("want a number")

// number reads a number: sign, digits, a point and digits, an exponent ("-.5e3");
// ".5.5" is two numbers.
func (sc *pathScanner) number() (float64, error) {
	sc.skip()
	start, s := sc.i, sc.s
	i := sc.i
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i, digits = i+1, digits+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return 0, fmt.Errorf("%w at %d", errNumber, start)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			i = j
		}
	}
	sc.i = i
	return strconv.ParseFloat(s[start:i], 64)
}

// flag reads an arc flag, a lone 0 or 1 ("a1 1 0 00 1 1" has flags 0 and 0).
func (sc *pathScanner) flag() (bool, error) {
	sc.skip()
	if sc.i < len(sc.s) && (sc.s[sc.i] == '0' || sc.s[sc.i] == '1') {
		sc.i++
		return sc.s[sc.i-1] == '1', nil
	}
	return false, fmt.Errorf("want an arc flag (0 or 1) at %d", sc.i)
}
