package capi

/*
#include <stdbool.h>
#include <stdint.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/batonrl/baton/env/raster"
	"github.com/batonrl/baton/internal/fastlane"
)

// holdOption is fastlane.WithHold over the caller's n holds, or nil for a NULL hold.
func holdOption(hold *C.int32_t, n int) fastlane.Option {
	if hold == nil {
		return nil
	}
	return fastlane.WithHold(slice[fastlane.Hold](unsafe.Pointer(hold), n))
}

// baton_render draws copy i of a vector (a single-agent vector, a view, a
// multi-agent vector or turns) as pixels: the environment's frame (its registry
// entry's Look, else its env.Renderer) rasterised by env/raster, its SVG picture or
// else its text, as rows of red, green and blue bytes (H×W×3) into out, of outlen
// bytes. With final, it draws the frame the copy kept of its last state before its
// last auto-reset (baton_final_frames); code 2 when it kept none. It writes the picture's height and width into shape[0] and shape[1]
// whenever it draws one; when out is too small (or NULL) it returns code 2 having
// written them, so that the caller can retry with 3·H·W bytes. A picture that
// env/raster cannot draw is code 1 (configuration), naming what it lacks; a copy
// that draws nothing yet (never reset) is code 5 (state).
//
//export baton_render
func baton_render(h, i C.int64_t, final C.bool, out unsafe.Pointer, outlen C.int64_t, shape *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	err := handles.Do(int64(h), func(v fastlane.Vector) error {
		f, ok := v.(fastlane.Framer)
		if !ok {
			return fmt.Errorf("%w: handle %d is a vector whose copies are not drawn (asynchronous)", fastlane.ErrArgument, h)
		}
		frame, err := f.Frame(int(i))
		if final {
			frame, err = f.FinalFrame(int(i))
		}
		if err != nil {
			return err
		}
		img, err := raster.Frame(frame)
		switch {
		case errors.Is(err, raster.ErrEmpty):
			return fmt.Errorf("%w: copy %d draws nothing yet: reset the vector first", fastlane.ErrCopyState, i)
		case err != nil:
			return fmt.Errorf("%w: copy %d's frame: %w", fastlane.ErrUnsupported, i, err)
		}
		b := img.Bounds()
		dims := slice[int64](unsafe.Pointer(shape), 2)
		dims[0], dims[1] = int64(b.Dy()), int64(b.Dx())
		need := 3 * b.Dx() * b.Dy()
		if out == nil || int(outlen) < need {
			return fmt.Errorf("%w: the frame takes %d bytes (%d×%d×3); the buffer has %d", fastlane.ErrArgument, need, b.Dy(), b.Dx(), outlen)
		}
		raster.RGB(img, slice[byte](out, need))
		return nil
	})
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	return 0
}

// baton_final_frames makes the copies of a vector made with hold flags
// (baton_single_new's or baton_view_new's hold) keep, when on, the frame of their
// state at the end of each episode, before the auto-reset, for baton_render's final;
// off (the default) keeps none. Code 2 for another vector.
//
//export baton_final_frames
func baton_final_frames(h C.int64_t, on C.bool, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	err := handles.Do(int64(h), func(v fastlane.Vector) error {
		s, ok := singleOf(v)
		if !ok {
			return fmt.Errorf("%w: handle %d is not a single-agent vector or a view", fastlane.ErrArgument, h)
		}
		return s.KeepFinalFrames(bool(on))
	})
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	return 0
}

// singleOf returns the Single of a single-agent vector or a view.
func singleOf(v fastlane.Vector) (*fastlane.Single, bool) {
	switch s := v.(type) {
	case *fastlane.Single:
		return s, true
	case *fastlane.View:
		return &s.Single, true
	}
	return nil, false
}
