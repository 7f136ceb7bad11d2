package runners

import (
	"github.com/batonrl/baton/event"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMailboxDeliver(t *testing.T) {
	msg := func(from, to, payload string, sent int) event.Message {
		return event.Message{From: from, To: to, Payload: []byte(payload), Sent: sent}
	}
	tests := []struct {
		name string
		// ticks lists, per tick, the messages sent during it; a tick's delivery comes
		// before its sends.
		ticks [][]event.Message
		// want lists, per tick, the messages delivered at it.
		want [][]event.Message
	}{
		{
			name:  "nothing sent",
			ticks: [][]event.Message{nil, nil},
			want:  [][]event.Message{nil, nil},
		},
		{
			name:  "delivered at the next tick, in the order sent",
			ticks: [][]event.Message{{msg("a_0", "b", "1", 0), msg(event.EnvAddress, "a", "2", 0)}, nil, nil},
			want:  [][]event.Message{nil, {msg("a_0", "b", "1", 0), msg(event.EnvAddress, "a", "2", 0)}, nil},
		},
		{
			name:  "each tick's own",
			ticks: [][]event.Message{{msg("a_0", "b", "1", 0)}, {msg("b_0", "a", "2", 1)}, {msg("a_0", event.EnvAddress, "3", 2)}, nil},
			want:  [][]event.Message{nil, {msg("a_0", "b", "1", 0)}, {msg("b_0", "a", "2", 1)}, {msg("a_0", event.EnvAddress, "3", 2)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m mailbox
			m.start(2)
			for tick, sends := range tt.ticks {
				got := m.deliver()
				assert.Equal(t, tt.want[tick], got, "tick %d", tick)
				assert.Equal(t, tt.want[tick], m.current(), "tick %d", tick)
				for _, s := range sends {
					m.send(s.From, s.To, s.Payload, s.Sent)
				}
			}
		})
	}
}

func TestMailboxCopiesPayloads(t *testing.T) {
	var m mailbox
	m.start(1)
	p := []byte("hello")
	m.send("a_0", "a", p, 0)
	p[0] = 'j'
	got := m.deliver()
	require.Len(t, got, 1)
	assert.Equal(t, "hello", string(got[0].Payload))
}

func TestMailboxInboxes(t *testing.T) {
	tests := []struct {
		name  string
		posts []int // agent index of each message posted, in order
		empty []int // inboxes emptied afterwards
		want  [][]string
	}{
		{"none", nil, nil, [][]string{nil, nil}},
		{"by agent, in order", []int{1, 0, 1}, nil, [][]string{{"1"}, {"0", "2"}}},
		{"an emptied inbox", []int{1, 0, 1}, []int{1}, [][]string{{"1"}, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m mailbox
			m.start(2)
			for k, i := range tt.posts {
				m.post(i, event.Message{To: "x", Payload: []byte{byte('0' + k)}})
			}
			for _, i := range tt.empty {
				m.empty(i)
			}
			for i, want := range tt.want {
				var got []string
				for _, msg := range m.inbox(i) {
					got = append(got, string(msg.Payload))
				}
				assert.Equal(t, want, got, "agent %d", i)
			}
		})
	}
}

// Messages do not cross episodes or trials.
func TestMailboxBegin(t *testing.T) {
	tests := []struct {
		name  string
		reset func(m *mailbox)
		n     int
	}{
		{"episode", func(m *mailbox) { m.begin() }, 2},
		{"trial of fewer agents", func(m *mailbox) { m.start(1) }, 1},
		{"trial of more agents", func(m *mailbox) { m.start(3) }, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m mailbox
			m.start(2)
			m.send("a_0", "b", []byte("old"), 0)
			m.deliver()
			m.post(1, event.Message{To: "b", Payload: []byte("old")})
			m.send("a_0", "b", []byte("waiting"), 1)

			tt.reset(&m)
			assert.Nil(t, m.current())
			for i := range tt.n {
				assert.Empty(t, m.inbox(i), "agent %d", i)
			}
			assert.Nil(t, m.deliver(), "the waiting message is dropped")
		})
	}
}
