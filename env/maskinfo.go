package env

import (
	"slices"

	"github.com/batonrl/baton/agent"
)

// InfoKeyActionMask is the Info key of the current action mask, the Gymnasium and
// PettingZoo convention.
const InfoKeyActionMask = "action_mask"

// ActionMaskInfo puts the current action mask into Info under InfoKeyActionMask, for
// consumers that read masks from the info dict rather than from Step.Mask: after Reset
// or Step, Info returns the inner Info (see InfoKeyEnv) with a copy of the latest Step's
// Mask, or the inner Info unchanged when that Mask is nil. Reset and Step pass through,
// with e's error semantics (a failed Step leaves the mask as it was), and allocate
// nothing; Info allocates.
//
// The returned Env is not safe for concurrent use; its Unwrap method returns e.
func ActionMaskInfo(e Env) Env {
	return &maskInfo{e: e}
}

type maskInfo struct {
	e    Env
	mask []bool // the inner environment's, valid until its next Reset or Step
}

// Unwrap returns the inner environment.
func (m *maskInfo) Unwrap() Env { return m.e }

func (m *maskInfo) Spec() Spec { return m.e.Spec() }

func (m *maskInfo) Reset(seed uint64) (Step, error) {
	st, err := m.e.Reset(seed)
	if err == nil {
		m.mask = st.Mask
	}
	return st, err
}

func (m *maskInfo) Step(a agent.RawAction) (Step, error) {
	st, err := m.e.Step(a)
	if err == nil {
		m.mask = st.Mask
	}
	return st, err
}

func (m *maskInfo) Info() any {
	inner := m.e.Info()
	if m.mask == nil {
		return inner
	}
	info := infoMap(inner)
	info[InfoKeyActionMask] = slices.Clone(m.mask)
	return info
}
