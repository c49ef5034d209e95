package transport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/nettime"
)

// Message is a game message, the same on both ends. Sends never wait for the
// network, so a slow peer never stalls a tick loop: a reliable message its
// flow control cannot take whole fails with ErrBackpressure (resend it, or
// drop it or the peer).
type Message struct {
	// Stamp is the network time the message belongs to. Zero on send means
	// now: the System's PredictedTime on a client (zero before sync), its
	// ServerTime on the server; inside a tick callback, that tick.
	Stamp    nettime.Time
	Payload  []byte        // at most MaxReliablePayload or MaxUnreliablePayload bytes; Send does not keep it
	Reliable bool          // ordered, retransmitted, on a stream; else a QUIC datagram: unordered, maybe lost, never late
	Received time.Duration // the receiver's clock at arrival (Server.SharedTime or Client.Clock); not sent
}

// Payload limits, in bytes. An unreliable message with its header fits a
// QUIC datagram in a 1200-byte packet, which every QUIC path carries.
const (
	MaxReliablePayload   = 64 << 10
	MaxUnreliablePayload = 1085
)

// sender sends one connection's messages without waiting for the network.
type sender struct {
	mu  sync.Mutex       // guards out
	out *quic.SendStream // reliable messages; opened lazily
}

// send sends m, reliably or not, over conn in mode. Errors wrap
// ErrTooLarge, ErrBackpressure, or quic-go's.
func (s *sender) send(conn *quic.Conn, mode Mode, reliable bool, m wire.Message) error {
	if err := checkPayload(reliable, len(m.Payload)); err != nil {
		return err
	}
	if !reliable && mode == ModeDatagram {
		if err := conn.SendDatagram(wire.AppendMessage(nil, m)); err != nil {
			var tl *quic.DatagramTooLargeError
			if errors.As(err, &tl) {
				return fmt.Errorf("%w: %w", ErrTooLarge, err)
			}
			return err
		}
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out == nil {
		str, err := conn.OpenUniStream()
		if err != nil {
			var sl quic.StreamLimitReachedError
			if errors.As(err, &sl) { // a failed stream's slot is not freed yet
				return fmt.Errorf("%w: %w", ErrBackpressure, err)
			}
			return fmt.Errorf("opening the message stream: %w", err)
		}
		s.out = str
	}
	if err := s.out.TryWriteAll(wire.AppendMessageFrame(nil, m)); err != nil {
		if errors.Is(err, quic.ErrWouldBlock) {
			return fmt.Errorf("%w: %w", ErrBackpressure, err)
		}
		s.out.CancelWrite(0)
		s.out = nil // the stream failed: the next message opens another
		return err
	}
	return nil
}

// checkPayload bounds a payload's size by its kind.
func checkPayload(reliable bool, n int) error {
	switch {
	case reliable && n > MaxReliablePayload:
		return fmt.Errorf("reliable message of %d bytes (at most %d): %w", n, MaxReliablePayload, ErrTooLarge)
	case !reliable && n > MaxUnreliablePayload:
		return fmt.Errorf("unreliable message of %d bytes (at most %d): %w", n, MaxUnreliablePayload, ErrTooLarge)
	}
	return nil
}

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
