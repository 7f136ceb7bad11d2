package runners

import (
	"bytes"

	"github.com/batonrl/baton/event"
)

// mailbox carries a trial's messages. A message sent during a tick (by an actor's
// Interact, or by the environment's Reset or Step) waits in the outbox; deliver, at the
// next tick, makes the waiting messages the delivered ones, which that tick's step
// events carry, and drops those delivered before. The trial routes each delivered
// message: to the environment, or with post to the inbox of an agent, which its
// Interactor reads and empty clears.
//
// Agents are known by their index in the trial. A mailbox is reused from trial to trial
// (start keeps its buffers) and is not safe for concurrent use.
type mailbox struct {
	outbox, delivered []event.Message
	inboxes           [][]event.Message // by agent index
}

// start empties the mailbox for a trial of n agents, keeping its buffers.
func (m *mailbox) start(n int) {
	m.begin()
	for len(m.inboxes) < n {
		m.inboxes = append(m.inboxes, nil)
	}
	m.inboxes = m.inboxes[:n]
}

// begin empties the mailbox for an episode: messages do not cross episodes.
func (m *mailbox) begin() {
	clear(m.outbox)
	m.outbox = m.outbox[:0]
	clear(m.delivered)
	m.delivered = m.delivered[:0]
	for i := range m.inboxes {
		m.empty(i)
	}
}

// send queues a message from one address to another, sent at tick sent, for the next
// delivery. It copies payload.
func (m *mailbox) send(from, to string, payload []byte, sent int) {
	m.outbox = append(m.outbox, event.Message{From: from, To: to, Payload: bytes.Clone(payload), Sent: sent})
}

// deliver makes the messages sent since the previous delivery the delivered ones and
// returns them, in the order they were sent; the messages delivered before are
// dropped. The slice is the mailbox's, valid until the next deliver or begin.
func (m *mailbox) deliver() []event.Message {
	if len(m.outbox) == 0 && len(m.delivered) == 0 {
		return nil
	}
	clear(m.delivered)
	m.delivered, m.outbox = m.outbox, m.delivered[:0]
	return m.delivered
}

// current returns the messages of the latest delivery, nil when there were none. The
// slice is the mailbox's, valid until the next deliver or begin.
func (m *mailbox) current() []event.Message {
	if len(m.delivered) == 0 {
		return nil
	}
	return m.delivered
}

// post puts a delivered message in the inbox of agent i.
func (m *mailbox) post(i int, msg event.Message) { m.inboxes[i] = append(m.inboxes[i], msg) }

// inbox returns the messages posted to agent i since its inbox was last emptied, in
// delivery order. The slice is the mailbox's, valid until empty(i) or begin.
func (m *mailbox) inbox(i int) []event.Message { return m.inboxes[i] }

// empty empties the inbox of agent i: its Interactor has read it.
func (m *mailbox) empty(i int) {
	clear(m.inboxes[i])
	m.inboxes[i] = m.inboxes[i][:0]
}
