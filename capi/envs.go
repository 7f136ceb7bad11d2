package capi

/*
#include <stdbool.h>
#include <stdint.h>
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"unsafe"

	"github.com/batonrl/baton/internal/fastlane"
	"github.com/batonrl/baton/registry"
)

// listing is what baton_envs writes: the environments of the library's registry, in
// the order they were registered.
type listing struct {
	Envs []envInfo `json:"envs"`
}

// envInfo is one environment of a listing, with its default configuration's layout
// (fastlane.Layout's JSON: "kind" and the agents' lengths and spaces), or Error when
// the fast lane cannot step it (its actions are not Discrete, say).
type envInfo struct {
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Kind        fastlane.Kind `json:"kind,omitempty"`
	Agents      []agentInfo   `json:"agents"`
	Error       string        `json:"error,omitempty"`
}

// agentInfo is one agent of an envInfo: its layout, with the names of the policies
// the registry gives it (sorted) and the one it plays by default.
type agentInfo struct {
	fastlane.AgentLayout
	Policies      []string `json:"policies"`
	DefaultPolicy string   `json:"default_policy,omitempty"`
}

// describeAll lists the environments of reg as baton_envs does.
func describeAll(reg *registry.Registry) listing {
	c := listing{Envs: []envInfo{}}
	for e := range reg.All() {
		info := envInfo{Name: e.Name, Description: e.Description, Agents: []agentInfo{}}
		l, err := fastlane.Describe(reg, e.Name, nil)
		if err != nil {
			info.Error = err.Error()
			c.Envs = append(c.Envs, info)
			continue
		}
		info.Kind = l.Kind
		for _, a := range l.Agents {
			ai := agentInfo{AgentLayout: a, Policies: []string{}}
			if ae, err := e.Agent(a.Name); err == nil {
				ai.Policies = ae.PolicyNames()
				ai.DefaultPolicy = ae.Default
				if ai.DefaultPolicy == "" && len(ae.Policies) > 0 {
					ai.DefaultPolicy = ae.Policies[0].Name
				}
			}
			info.Agents = append(info.Agents, ai)
		}
		c.Envs = append(c.Envs, info)
	}
	return c
}

// baton_envs writes the library's listing as JSON into out (outlen bytes, NUL
// included) and its length (without the NUL) into *needed, which the caller may
// read to call again with a buffer large enough (code 2 when out is too small).
//
//export baton_envs
func baton_envs(out *C.char, outlen C.int64_t, needed *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	reg, err := lib.get()
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	b, err := json.Marshal(describeAll(reg))
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	if needed != nil {
		*needed = C.int64_t(len(b))
	}
	if len(b) >= int(outlen) {
		return fail(fmt.Errorf("%w: the listing takes %d bytes; the buffer has %d", fastlane.ErrArgument, len(b)+1, outlen), nil, errbuf, errlen)
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(out)), int(outlen))
	dst[copy(dst, b)] = 0
	return 0
}
