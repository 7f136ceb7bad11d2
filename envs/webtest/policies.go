package webtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/agent"
)

// Heuristic is the strategy policy that tests the least-covered target first. It
// scores every target the mask allows by its coverage (0 or 1 for a link or a
// button, the share of probes tried for a form) plus one half for a link or button
// into a page already visited, and picks the lowest score, drawing uniformly among
// ties; with no target left it navigates back, and with no history either it
// finishes. Exploring this way is a depth-first search of the site in which the
// browser history is the stack. It reads only the observation and the mask, so it
// serves any site. Act allocates nothing. Not safe for concurrent use: it draws from
// its generator.
type Heuristic struct {
	rng *rand.Rand
}

// NewHeuristic returns the heuristic strategy policy drawing ties from rng.
func NewHeuristic(rng *rand.Rand) (*Heuristic, error) {
	if rng == nil {
		return nil, errors.New("webtest: heuristic policy: nil *rand.Rand")
	}
	return &Heuristic{rng: rng}, nil
}

// Act picks the next decision. A nil mask is read as the strategy's own mask would be
// (the targets present and not covered, back when possible, finish).
func (h *Heuristic) Act(_ context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
	if len(obs) != StrategyObsSize {
		return agent.RawAction{}, fmt.Errorf("webtest: heuristic policy: observation has %d values; want %d", len(obs), StrategyObsSize)
	}
	if mask != nil && len(mask) != StrategyActions {
		return agent.RawAction{}, fmt.Errorf("webtest: heuristic policy: mask has %d entries; want %d", len(mask), StrategyActions)
	}
	choice, ties := -1, 0
	best := float32(0)
	for k := range MaxTargets {
		d := obs[k*slotWidth : (k+1)*slotWidth]
		allowed := d[0] == 1 && d[4] < 1
		if mask != nil {
			allowed = mask[k]
		}
		if !allowed {
			continue
		}
		score := d[4]
		if d[3] == 0 && d[5] == 1 { // a link or button into a visited page
			score += 0.5
		}
		switch {
		case choice < 0 || score < best:
			choice, best, ties = k, score, 1
		case score == best:
			ties++
			if h.rng.IntN(ties) == 0 {
				choice = k
			}
		}
	}
	if choice >= 0 {
		return agent.Discrete(int64(choice)), nil
	}
	canBack := obs[MaxTargets*slotWidth+6+2] == 1
	if mask != nil {
		canBack = mask[StrategyBack]
	}
	if canBack {
		return agent.Discrete(StrategyBack), nil
	}
	return agent.Discrete(StrategyFinish), nil
}

// Monkey is the random strategy policy, monkey testing: it draws uniformly among the
// targets the mask allows and back (when there is a history), and finishes only when
// none of them is left. Act allocates nothing. Not safe for concurrent use: it draws
// from its generator.
type Monkey struct {
	rng *rand.Rand
}

// NewMonkey returns the random strategy policy drawing from rng.
func NewMonkey(rng *rand.Rand) (*Monkey, error) {
	if rng == nil {
		return nil, errors.New("webtest: monkey policy: nil *rand.Rand")
	}
	return &Monkey{rng: rng}, nil
}

// Act draws the next decision. A nil mask is read as for Heuristic.
func (m *Monkey) Act(_ context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
	if len(obs) != StrategyObsSize {
		return agent.RawAction{}, fmt.Errorf("webtest: monkey policy: observation has %d values; want %d", len(obs), StrategyObsSize)
	}
	if mask != nil && len(mask) != StrategyActions {
		return agent.RawAction{}, fmt.Errorf("webtest: monkey policy: mask has %d entries; want %d", len(mask), StrategyActions)
	}
	choice, n := StrategyFinish, 0
	for k := range StrategyBack + 1 {
		var allowed bool
		switch {
		case mask != nil:
			allowed = mask[k]
		case k == StrategyBack:
			allowed = obs[MaxTargets*slotWidth+6+2] == 1
		default:
			allowed = obs[k*slotWidth] == 1 && obs[k*slotWidth+4] < 1
		}
		if allowed {
			n++
			if m.rng.IntN(n) == 0 {
				choice = k
			}
		}
	}
	return agent.Discrete(int64(choice)), nil
}

// Scripted is the motion policy that performs the target sensibly: it clicks a link
// or a button; for a form it plans one submission that tries one probe not tried yet
// (the first, field by field, in the order valid, empty, long, negative, unicode,
// script for a text, the options in order for a select, unchecked then checked for a
// checkbox) with every other field valid (a text's valid value, the first option of a
// select, a checked checkbox), starting with a submission of valid values only; then
// it focuses each field whose value differs from the plan, sets it, and submits. Its
// edge-case submissions are what finds a form's server errors. It reads only the
// observation, so it serves any site; a pure function of the observation, it is safe
// for concurrent use and allocates nothing.
type Scripted struct{}

// Act returns the next UI operation.
func (Scripted) Act(_ context.Context, obs []float32, _ []bool) (agent.RawAction, error) {
	if len(obs) != MotionObsSize {
		return agent.RawAction{}, fmt.Errorf("webtest: scripted policy: observation has %d values; want %d", len(obs), MotionObsSize)
	}
	switch {
	case obs[0] == 1 || obs[1] == 1:
		return agent.Discrete(MotionClick), nil
	case obs[2] != 1:
		return agent.RawAction{}, errors.New("webtest: scripted policy: the observation shows no target")
	}
	var fields [MaxFields]fieldState
	n := 0
	for n < MaxFields {
		if fields[n] = readField(obs, n); fields[n].kind == 0 {
			break
		}
		n++
	}
	// The plan: every field valid, and the first probe not tried yet, unless the
	// all-valid submission is still to come.
	var want [MaxFields]int
	allValid := false
	for j := range n {
		want[j] = fields[j].validValue()
		allValid = allValid || !fields[j].tried[fields[j].validProbe()]
	}
	if !allValid {
	plan:
		for j := range n {
			for p := range fields[j].probes {
				if !fields[j].tried[p] {
					want[j] = fields[j].probeValue(p)
					break plan
				}
			}
		}
	}
	next := false
	for j := range n {
		f := &fields[j]
		if f.value == want[j] {
			continue
		}
		if f.focused {
			switch f.kind {
			case Text:
				return agent.Discrete(MotionType(Value(want[j]))), nil
			case Checkbox:
				return agent.Discrete(MotionToggle), nil
			default:
				return agent.Discrete(MotionChoose), nil
			}
		}
		next = true
	}
	if next {
		return agent.Discrete(MotionFocus), nil
	}
	return agent.Discrete(MotionSubmit), nil
}

// fieldState is a field slot read from the motion observation. value is a Value for
// a text, an option (0 for none) for a select, 0 or 1 for a checkbox.
type fieldState struct {
	kind    Kind
	focused bool
	value   int
	tried   [NumValues]bool
	probes  int
}

func readField(obs []float32, j int) fieldState {
	d := obs[3+j*fieldWidth : 3+(j+1)*fieldWidth]
	var f fieldState
	if d[0] != 1 {
		return f
	}
	switch {
	case d[1] == 1:
		f.kind = Text
	case d[2] == 1:
		f.kind = Select
	default:
		f.kind = Checkbox
	}
	f.focused = d[4] == 1
	for i, x := range d[5 : 5+NumValues] {
		if x == 1 {
			f.value = i
			if f.kind != Checkbox {
				f.value = i + 1
			}
		}
	}
	for i, x := range d[6+NumValues : 6+2*NumValues] {
		f.tried[i] = x == 1
	}
	f.probes = min(int(d[6+2*NumValues]*NumValues+0.5), NumValues)
	return f
}

// validValue is the value the plan gives a field that is not probed.
func (f fieldState) validValue() int {
	if f.kind == Text {
		return int(Valid)
	}
	return 1 // the first option, a checked box
}

// validProbe is the probe of the valid value.
func (f fieldState) validProbe() int {
	if f.kind == Checkbox {
		return 1
	}
	return 0
}

// probeValue is the value that tries probe p.
func (f fieldState) probeValue(p int) int {
	if f.kind == Checkbox {
		return p
	}
	return p + 1
}
