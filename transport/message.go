package transport

import (
	"context"
	"time"

	"github.com/netclock/netclock/nettime"
)

// Message is a user message carried over a netclock connection.
type Message struct {
	// Stamp is the network time the message belongs to, as its sender
	// stamped it: for a client's message by default its System's
	// predicted time (the tick the server should apply it in). The zero
	// Time means unstamped.
	Stamp nettime.Time
	// Payload is the message. Received messages own their payload.
	Payload []byte
	// Reliable reports that the message came over the reliable stream
	// (in order, never lost) rather than as a datagram. Not sent on the
	// wire: set by the receiver.
	Reliable bool
	// Received is the receiver's local clock when the message arrived: the
	// server clock (Server.Now) on the server, the client clock
	// (Client.LocalTime) on a client. Not sent on the wire.
	Received time.Duration
}

// unreliableQueueLen is how many unreliable messages wait for the message
// handler per connection; more are dropped (and counted), as the network
// could have dropped them. Reliable messages are never dropped: their
// stream waits for the handler instead.
const unreliableQueueLen = 256

// dispatcher hands unreliable messages to a handler on a goroutine of its
// own, so that a slow handler never delays the ping path's timestamps.
type dispatcher struct {
	ch      chan Message
	deliver func(Message)
}

func newDispatcher(deliver func(Message)) *dispatcher {
	return &dispatcher{ch: make(chan Message, unreliableQueueLen), deliver: deliver}
}

// offer queues m without blocking; false if the queue is full.
func (d *dispatcher) offer(m Message) bool {
	select {
	case d.ch <- m:
		return true
	default:
		return false
	}
}

// run delivers queued messages until ctx ends; what is still queued then
// is dropped.
func (d *dispatcher) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-d.ch:
			d.deliver(m)
		}
	}
}

// age returns now − stamp for a stamped message, false for the zero Time.
func age(now time.Duration, stamp nettime.Time) (time.Duration, bool) {
	if stamp.IsZero() {
		return 0, false
	}
	return now - stamp.Duration(), true
}
