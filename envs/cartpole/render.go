package cartpole

import (
	"fmt"
	"math"
	"strings"

	"github.com/batonrl/baton/env"
)

// Scene is the cart-pole's state as data for a page to draw: the Scene of the
// env.Frame that Env.Render returns.
type Scene struct {
	// Kind is "cartpole".
	Kind string `json:"kind"`
	State
	// Steps counts the episode's steps so far.
	Steps int `json:"steps"`
	// XThreshold and ThetaThreshold are the limits beyond which the episode
	// terminates: the track's half-width (m) and the pole's largest angle (rad).
	XThreshold     float64 `json:"x_threshold"`
	ThetaThreshold float64 `json:"theta_threshold"`
}

// Render draws the current state (Env implements env.Renderer): as text, a sketch of
// the cart on its track with the pole, then the numbers; as a Scene; and as an SVG
// picture. Before the first reset it draws nothing.
func (e *Env) Render() env.Frame {
	if !e.started {
		return env.Frame{}
	}
	s := e.sl.state
	return env.Frame{
		Text:  sketch(s, e.sl.steps),
		Scene: Scene{Kind: "cartpole", State: s, Steps: e.sl.steps, XThreshold: XThreshold, ThetaThreshold: ThetaThreshold},
		SVG:   picture(s),
	}
}

// track is the width of the text sketch's track in characters, for 2·XThreshold.
const track = 49

// poleRows is the height of the text sketch's pole in lines.
const poleRows = 4

func sketch(s State, steps int) string {
	// The column of the cart's centre: the track runs over columns 1 to track, inside
	// its end stops.
	c := int(math.Round((s.X + XThreshold) / (2 * XThreshold) * float64(track-1)))
	centre := 1 + min(max(c, 0), track-1)
	lines := make([][]byte, poleRows+1)
	for i := range lines {
		lines[i] = []byte(strings.Repeat(" ", track+2))
	}
	pole := byte('|')
	switch {
	case s.Theta > 0.02:
		pole = '/'
	case s.Theta < -0.02:
		pole = '\\'
	}
	for k := 1; k <= poleRows; k++ { // k lines above the cart; a character is about twice as high as wide
		dx := int(math.Round(2 * float64(k) * math.Tan(s.Theta)))
		if c := centre + dx; c >= 0 && c < track+2 {
			lines[poleRows-k][c] = pole
		}
	}
	copy(lines[poleRows][centre-1:], "[#]")
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.TrimRight(string(l), " ") + "\n")
	}
	b.WriteString("|" + strings.Repeat("=", track) + "|\n")
	fmt.Fprintf(&b, "step %d  x %+.3f m  x_dot %+.3f m/s  theta %+.3f rad (%+.1f°)  theta_dot %+.3f rad/s\n",
		steps, s.X, s.XDot, s.Theta, s.Theta*180/math.Pi, s.ThetaDot)
	return b.String()
}

// The SVG picture's size in pixels, and the scale of the track, as Gymnasium draws it.
const (
	svgWidth  = 600
	svgHeight = 400
	svgScale  = svgWidth / (2 * XThreshold)
	svgTrackY = 300
)

func picture(s State) string {
	cx := s.X*svgScale + svgWidth/2
	poleLen := svgScale * 2 * Length
	tipX := cx + poleLen*math.Sin(s.Theta)
	tipY := svgTrackY - 15 - poleLen*math.Cos(s.Theta)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", svgWidth, svgHeight, svgWidth, svgHeight)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", svgWidth, svgHeight)
	fmt.Fprintf(&b, `<line x1="0" y1="%d" x2="%d" y2="%d" stroke="#000000"/>`+"\n", svgTrackY, svgWidth, svgTrackY)
	fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="50" height="30" fill="#000000"/>`+"\n", cx-25, svgTrackY-30)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#ca9865" stroke-width="10" stroke-linecap="round"/>`+"\n", cx, svgTrackY-15, tipX, tipY)
	fmt.Fprintf(&b, `<circle cx="%.1f" cy="%d" r="5" fill="#8184cb"/>`+"\n", cx, svgTrackY-15)
	b.WriteString("</svg>\n")
	return b.String()
}
