// Package raster draws an environment's env.Frame as pixels, in pure Go: the
// picture an environment draws of itself (Frame.SVG), or, for one that draws text
// only, its Text as a terminal shows it. It is what gives a baton environment
// Gymnasium's render_mode "rgb_array" (Python's baton.make(..., render_mode=
// "rgb_array") asks the fast lane for a frame, which Go draws here) without a system
// library or a browser.
//
// What you touch here: call Frame (or SVG and Text) and RGB; implement nothing: an
// environment is drawn through its env.Frame.
//
//	f := e.Render()              // an env.Renderer's frame
//	img, err := raster.Frame(f)  // *image.RGBA, the SVG's size
//	rgb := raster.RGB(img, nil)  // rows of R, G, B bytes, as numpy's HxWx3 uint8
//
// # The SVG it draws
//
// An environment's picture is a small SVG document that the environment writes
// itself, so SVG draws the part of SVG 1.1 such pictures use, with Go's vector
// rasteriser (golang.org/x/image/vector, anti-aliased) and Go's fonts:
//
//   - the root svg's width and height (in pixels; "px" allowed) and viewBox;
//   - the shapes rect (with rx and ry), circle, ellipse, line, polyline, polygon and
//     path (every command of path data: M L H V C S Q T A Z, absolute and relative);
//   - text, drawn in Go Regular at its font-size, placed by x, y and text-anchor
//     (start, middle, end); only the translation and scale of its transform apply;
//   - g groups, whose presentation attributes and transform their children inherit;
//   - the presentation attributes fill, stroke (a colour or "none"), stroke-width,
//     stroke-linecap (butt, round, square), opacity, fill-opacity and
//     stroke-opacity, as attributes or in a style attribute ("fill: #fff; ...");
//   - colours as #rgb, #rrggbb, rgb(r, g, b) and the CSS named colours of
//     CSS 1 and 2 (black, white, red, ..., orange), plus transparent;
//   - transform lists of matrix, translate, scale, rotate (with its centre), skewX
//     and skewY.
//
// Lines join round. Elements it does not know that hold no drawing (title, desc,
// metadata, defs and what they hold) are skipped; anything else (a gradient fill,
// an image, a clip path, an unknown element or attribute value) is an error
// wrapping ErrUnsupported that names it, rather than a picture drawn wrong.
//
// # Limits
//
// A picture is at most MaxSide pixels wide and high (ErrTooLarge otherwise), so that
// a frame cannot ask for unbounded memory.
//
// # Concurrency
//
// The functions are safe for concurrent use; each call draws into an image of its
// own, which the caller owns.
package raster
