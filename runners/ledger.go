package runners

import (
	"fmt"
	"github.com/batonrl/baton/event"
	"slices"
)

// ledger keeps a trial's reward accounting: each agent's latest report in the episode,
// the sub-episodes ended in it, the rewards waiting for a live agent id's next step
// (pending), the sources of the reward of the step being settled, the retroactive
// rewards received, every agent's return in every episode (or in those of a window,
// see forget), and every agent's return summed over all episodes.
//
// Agents are known by their index in the trial (join order); an agent id "<name>_<k>"
// names its agent by name. The trial settles each report with settle, after begin has
// opened its episode; actors and the controller address rewards with address and
// feedback. A ledger is reused from trial to trial (start keeps its buffers) and is not
// safe for concurrent use.
type ledger struct {
	accounts []account
	episode  int // the episode begun last; -1 before the first
	// ends lists the sub-episodes ended in the episode, for retroactive rewards.
	ends    []idTick
	pending []pendingReward
	// sources holds the sources of the step settled last; envOnly those of one
	// that the environment alone rewards, the common case.
	sources []event.RewardSource
	envOnly [1]event.RewardSource
	// unsent holds the retroactive rewards received and not yet sent to the sinks;
	// received every retroactive reward of the trial, in arrival order.
	unsent   []event.RetroReward
	received []event.RetroReward
	// flat holds the returns of every episode from base on, episode-major; ret those
	// of the episode begun last.
	flat, ret []float64
	base      int
	// sums holds each agent's return summed over every episode.
	sums []float64
}

// account is one agent's place in the ledger.
type account struct {
	name string
	// cur is the id of the agent's latest report in this episode ("" before one),
	// live whether its sub-episode goes on, lastTick the tick of that report.
	cur      string
	live     bool
	lastTick int
}

type idTick struct {
	id    string
	tick  int
	agent int
}

type pendingReward struct {
	id     string
	source string
	value  float64
}

// start empties the ledger for a new trial, keeping its buffers; join then adds the
// trial's agents. The returns and the retroactive rewards of the previous trial are
// left to it: they are not reused.
func (l *ledger) start() {
	*l = ledger{
		accounts: l.accounts[:0], episode: -1, ends: l.ends[:0], pending: l.pending[:0],
		sources: l.sources[:0], unsent: l.unsent[:0], sums: l.sums[:0],
	}
}

// join adds an agent; its index is the number of agents joined before it.
func (l *ledger) join(name string) {
	l.accounts = append(l.accounts, account{name: name})
	l.sums = append(l.sums, 0)
}

// begin opens episode e, the next one: no agent reported, nothing pending, every
// return 0.
func (l *ledger) begin(e int) {
	l.episode = e
	for i := range l.accounts {
		a := &l.accounts[i]
		a.cur, a.live, a.lastTick = "", false, 0
	}
	l.ends = l.ends[:0]
	l.pending = l.pending[:0]
	for range l.accounts {
		l.flat = append(l.flat, 0)
	}
	l.ret = l.returns(e)
}

// returns returns the returns of episode e (base or later), by agent index, in a
// slice that cannot grow. It shares the ledger's storage until the next begin or
// forget, which may move it: take the final figures after the trial's last reward.
func (l *ledger) returns(e int) []float64 {
	n := len(l.accounts)
	k := (e - l.base) * n
	return l.flat[k : k+n : k+n]
}

// forget drops the returns of the episodes before first, and the retroactive rewards
// received for them, so that a trial of many episodes holds those of a window: a
// retroactive reward for a forgotten episode is still sent and summed, not kept.
func (l *ledger) forget(first int) {
	k := (first - l.base) * len(l.accounts)
	if k <= 0 {
		return
	}
	l.flat = l.flat[:copy(l.flat, l.flat[k:])]
	l.base = first
	l.ret = l.returns(l.episode)
	l.received = slices.DeleteFunc(l.received, func(r event.RetroReward) bool { return r.Episode < first })
}

// totals returns each agent's return summed over every episode, in a new slice.
func (l *ledger) totals() []float64 { return slices.Clone(l.sums) }

// settle accounts for a report of agent i, id id, at tick, with the environment's
// reward: the rewards pending for id are added to it, and done ends the id's
// sub-episode. It returns the step's total reward and its sources, the environment's
// first; the sources are valid until the next settle.
func (l *ledger) settle(i int, id string, reward float64, tick int, done bool) (float64, []event.RewardSource) {
	if len(l.pending) > 0 || done {
		return l.settleAny(i, id, reward, tick, done)
	}
	// A live sub-episode that only the environment rewards: the trial settles most
	// steps here, so this path is kept short.
	l.envOnly[0] = event.RewardSource{Source: event.SourceEnv, Value: reward}
	a := &l.accounts[i]
	a.cur, a.live, a.lastTick = id, true, tick
	l.ret[i] += reward
	l.sums[i] += reward
	return reward, l.envOnly[:]
}

// settleAny is settle in every case.
func (l *ledger) settleAny(i int, id string, reward float64, tick int, done bool) (float64, []event.RewardSource) {
	total := reward
	l.sources = append(l.sources[:0], event.RewardSource{Source: event.SourceEnv, Value: reward})
	if len(l.pending) > 0 {
		total = l.settlePending(id, total)
	}
	a := &l.accounts[i]
	a.cur, a.live, a.lastTick = id, !done, tick
	if done {
		l.ends = append(l.ends, idTick{id: id, tick: tick, agent: i})
	}
	l.ret[i] += total
	l.sums[i] += total
	return total, l.sources
}

// settlePending adds the rewards pending for id to its step's total and sources.
func (l *ledger) settlePending(id string, total float64) float64 {
	kept := l.pending[:0]
	for _, p := range l.pending {
		if p.id != id {
			kept = append(kept, p)
			continue
		}
		total += p.value
		l.sources = append(l.sources, event.RewardSource{Source: p.source, Value: p.value})
	}
	clear(l.pending[len(kept):])
	l.pending = kept
	return total
}

// address gives value from source to the next step of a live agent id, or
// retroactively to the last step of one whose sub-episode has ended in this episode;
// now is the tick it arrives at. It returns an error wrapping ErrReward for an id that
// is not one of the trial's agents or not reported in the episode.
func (l *ledger) address(id, source string, value float64, now int) error {
	i := l.agent(id)
	if i < 0 {
		return fmt.Errorf("%w: %q is not the id of an agent of the trial (agents: %v)", ErrReward, id, l.names())
	}
	a := &l.accounts[i]
	if a.cur == id {
		if a.live {
			l.pending = append(l.pending, pendingReward{id: id, source: source, value: value})
		} else {
			l.retro(l.episode, a.lastTick, id, i, source, value, now)
		}
		return nil
	}
	for _, e := range l.ends {
		if e.id == id {
			l.retro(l.episode, e.tick, id, i, source, value, now)
			return nil
		}
	}
	return fmt.Errorf("%w: agent %s has not been reported in episode %d", ErrReward, id, l.episode)
}

// feedback applies an outside reward, arrived at tick now; the controller has checked
// its address. Tick Now addresses the agent id's next step (an id not reported yet
// has no step to reward: it is dropped); another tick of a begun episode gets a
// retroactive reward. "" is SourceController.
func (l *ledger) feedback(f Feedback, now int) {
	if f.Source == "" {
		f.Source = event.SourceController
	}
	if f.Tick == Now {
		_ = l.address(f.AgentID, f.Source, f.Value, now)
		return
	}
	if i := l.agent(f.AgentID); i >= 0 && f.Episode <= l.episode {
		l.retro(f.Episode, f.Tick, f.AgentID, i, f.Source, f.Value, now)
	}
}

// unpend turns the rewards still pending, at the end of an episode or of the trial at
// tick now, into retroactive rewards for the last step of their agent ids.
func (l *ledger) unpend(now int) {
	for _, p := range l.pending {
		if i := l.agent(p.id); i >= 0 {
			l.retro(l.episode, l.accounts[i].lastTick, p.id, i, p.source, p.value, now)
		}
	}
	clear(l.pending)
	l.pending = l.pending[:0]
}

// retro records a retroactive reward for the step at tick of episode, agent i, id id,
// to be sent, and adds it to the agent's sum and, while the ledger holds the episode,
// to the episode's return and the rewards received.
func (l *ledger) retro(episode, tick int, id string, i int, source string, value float64, now int) {
	r := event.RetroReward{Episode: episode, Tick: tick, AgentID: id, Agent: l.accounts[i].name, Source: source, Value: value, ArrivedEpisode: l.episode, ArrivedTick: now}
	if episode >= l.base {
		l.received = append(l.received, r)
		l.flat[(episode-l.base)*len(l.accounts)+i] += value
	}
	l.unsent = append(l.unsent, r)
	l.sums[i] += value
}

// sent forgets the unsent retroactive rewards: they have been sent to the sinks, or
// will not be.
func (l *ledger) sent() {
	clear(l.unsent)
	l.unsent = l.unsent[:0]
}

// agent returns the index of the agent of an id, or -1.
func (l *ledger) agent(id string) int {
	name, ok := agentName(id)
	if !ok {
		return -1
	}
	for i := range l.accounts {
		if l.accounts[i].name == name {
			return i
		}
	}
	return -1
}

func (l *ledger) names() []string {
	names := make([]string, len(l.accounts))
	for i := range l.accounts {
		names[i] = l.accounts[i].name
	}
	return names
}
