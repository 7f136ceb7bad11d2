package capi

/*
#include <stdbool.h>
#include <stdint.h>
*/
import "C"

import (
	"encoding/json"
	"fmt"

	"github.com/batonrl/baton/internal/fastlane"
)

// recorder is a vector that records its steps: a Single or a Multi.
type recorder interface {
	Record(rec fastlane.Recording) error
	CloseLog() error
}

// recording is baton_record's JSON.
type recording struct {
	Dir      string            `json:"dir"`
	Run      string            `json:"run"`
	Policies map[string]string `json:"policies"`
}

//export baton_record
func baton_record(h C.int64_t, spec *C.char, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	var r recording
	if err := json.Unmarshal([]byte(C.GoString(spec)), &r); err != nil {
		return fail(fmt.Errorf("%w: recording: %w", fastlane.ErrArgument, err), nil, errbuf, errlen)
	}
	err := handles.Do(int64(h), func(v fastlane.Vector) error {
		rv, ok := v.(recorder)
		if !ok {
			return fmt.Errorf("%w: handle %d is a vector that does not record (asynchronous, view or turns)", fastlane.ErrConfig, h)
		}
		return rv.Record(fastlane.Recording{Dir: r.Dir, Run: r.Run, Policies: r.Policies})
	})
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	return 0
}

//export baton_record_close
func baton_record_close(h C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	err := handles.Do(int64(h), func(v fastlane.Vector) error {
		if rv, ok := v.(recorder); ok {
			return rv.CloseLog()
		}
		return nil
	})
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	return 0
}
