package transport

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netclock/netclock/internal/wire"
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

// Sizes of user messages' payloads, in bytes.
const (
	// MaxReliablePayload is the largest payload of a reliable message
	// (64 KiB). It bounds what a peer can make the receiver buffer.
	MaxReliablePayload = wire.MaxReliablePayload
	// MaxUnreliablePayload is the largest payload of an unreliable
	// message (1085 bytes): with its header it fits a QUIC datagram in a
	// 1200-byte packet, the size every QUIC path carries.
	MaxUnreliablePayload = wire.MaxUnreliablePayload
)

// fromWire returns the user message of a decoded one.
func fromWire(m wire.Message) Message { return Message{Stamp: m.Stamp, Payload: m.Payload} }

// unreliableQueueLen and unreliableQueueBytes bound the unreliable
// messages waiting for the message handler per connection: count and
// payload bytes. More are dropped (and counted), as the network could have
// dropped them, so a slow handler costs at most 64 KiB per connection.
// Reliable messages are never dropped: their stream waits for the handler
// instead.
const (
	unreliableQueueLen   = 256
	unreliableQueueBytes = 64 << 10
)

// dispatcher hands unreliable messages to a handler on a goroutine of its
// own, so a slow handler never delays the receive loop (and its ping
// stamps). The queue and the goroutine start with the first message: most
// connections carry pings only, and an idle one should cost no more.
type dispatcher struct {
	ctx     context.Context
	wg      *sync.WaitGroup
	deliver func(Message)
	ch      chan Message // nil until the first message
	bytes   atomic.Int64 // payload bytes queued
}

// newDispatcher returns a dispatcher whose goroutine, once started, joins
// wg and ends with ctx.
func newDispatcher(ctx context.Context, wg *sync.WaitGroup, deliver func(Message)) *dispatcher {
	return &dispatcher{ctx: ctx, wg: wg, deliver: deliver}
}

// offer queues m without blocking; false if the queue is full. It is
// called from one goroutine only (the connection's receive loop), which is
// itself counted in wg, so starting the goroutine here is safe.
func (d *dispatcher) offer(m Message) bool {
	if d.ch == nil {
		d.ch = make(chan Message, unreliableQueueLen)
		d.wg.Go(d.run)
	}
	n := int64(len(m.Payload))
	if d.bytes.Add(n) > unreliableQueueBytes {
		d.bytes.Add(-n)
		return false
	}
	select {
	case d.ch <- m:
		return true
	default:
		d.bytes.Add(-n)
		return false
	}
}

// run delivers queued messages until the context ends; what is still
// queued then is dropped.
func (d *dispatcher) run() {
	for {
		select {
		case <-d.ctx.Done():
			return
		case m := <-d.ch:
			d.bytes.Add(-int64(len(m.Payload)))
			d.deliver(m)
		}
	}
}

// age returns now − stamp for a stamped message, saturating at the range
// of time.Duration; false for the zero Time.
func age(now time.Duration, stamp nettime.Time) (time.Duration, bool) {
	if stamp.IsZero() {
		return 0, false
	}
	return subSat(now, stamp.Duration()), true
}
