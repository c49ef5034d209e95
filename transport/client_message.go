package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/nettime"
)

// Messages returns the channel the server's messages arrive on, in order
// per kind (reliable ones in send order; unreliable ones as they came),
// unless ClientConfig.OnMessage takes them. It is closed when the client
// stops. Read it promptly: see ClientConfig.MessageBuffer.
func (c *Client) Messages() <-chan Message { return c.msgs }

// SendReliable sends payload to the server over the connection's reliable
// stream (in order, retransmitted until delivered, at most
// MaxReliablePayload bytes), stamped with the System's predicted time:
// inside a tick callback, the start of that tick; the zero Time before
// sync. See SendReliableAt.
func (c *Client) SendReliable(ctx context.Context, payload []byte) error {
	return c.SendReliableAt(ctx, c.stampNow(), payload)
}

// SendReliableAt is SendReliable with the caller's stamp. It blocks while
// another reliable message is being written or QUIC's flow control holds
// the stream; ctx bounds that wait, but a message partly handed to QUIC is
// finished regardless, so the stream never carries half a frame. It
// returns an error wrapping ErrTooLarge for a payload over
// MaxReliablePayload, ErrNotConnected while the client reconnects (the
// message is not queued for later), ErrClosed after Close. A message sent
// is delivered unless the connection is lost first.
func (c *Client) SendReliableAt(ctx context.Context, stamp nettime.Time, payload []byte) error {
	if len(payload) > MaxReliablePayload {
		return fmt.Errorf("transport: reliable message of %d bytes (at most %d): %w",
			len(payload), MaxReliablePayload, ErrTooLarge)
	}
	select {
	case c.sendSem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("transport: sending a reliable message: %w", ctx.Err())
	case <-c.ctx.Done():
		return c.stoppedErr()
	}
	defer func() { <-c.sendSem }()
	l, err := c.liveLink()
	if err != nil {
		return err
	}
	if l.out == nil {
		str, err := l.conn.OpenUniStreamSync(ctx)
		if err != nil {
			return fmt.Errorf("transport: opening the message stream: %w", err)
		}
		l.out = str
	}
	frame := wire.AppendMessageFrame(nil, wire.Message{Stamp: stamp, Payload: payload})
	if err := writeFrame(ctx, l.out, frame); err != nil {
		if cerr := ctx.Err(); cerr == nil || !errors.Is(err, cerr) {
			// The stream failed: the next message opens another.
			l.out.CancelWrite(0)
			l.out = nil
		}
		return fmt.Errorf("transport: sending a reliable message: %w", err)
	}
	c.mu.Lock()
	c.msgsSent++
	c.mu.Unlock()
	return nil
}

// writeFrame writes frame to str, giving up at the end of ctx unless part
// of it is written: the rest is then written regardless. On ctx's end
// with nothing written it returns ctx.Err(), and str stays usable.
func writeFrame(ctx context.Context, str *quic.SendStream, frame []byte) error {
	var fired sync.WaitGroup
	fired.Add(1)
	stop := context.AfterFunc(ctx, func() {
		defer fired.Done()
		str.SetWriteDeadline(time.Now())
	})
	n, err := str.Write(frame)
	if stop() {
		fired.Done()
	}
	fired.Wait()
	str.SetWriteDeadline(time.Time{})
	if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	if n == 0 {
		return ctx.Err()
	}
	_, err = str.Write(frame[n:]) // half a frame would break the stream
	return err
}

// SendUnreliable sends payload to the server as a QUIC datagram (it may be
// lost, duplicated or reordered; at most MaxUnreliablePayload bytes),
// stamped like SendReliable. See SendUnreliableAt.
func (c *Client) SendUnreliable(payload []byte) error {
	return c.SendUnreliableAt(c.stampNow(), payload)
}

// SendUnreliableAt is SendUnreliable with the caller's stamp. It does not
// wait for the network (QUIC may briefly hold it when its datagram queue is
// full). A payload over MaxUnreliablePayload, or a datagram QUIC cannot fit
// in a packet on this path, is an error wrapping ErrTooLarge; the other
// errors are SendReliableAt's. In ModeStream (no datagrams) the message
// travels on the reliable stream and arrives with Reliable set; if that
// would block, it is not sent and the error wraps ErrBackpressure.
func (c *Client) SendUnreliableAt(stamp nettime.Time, payload []byte) error {
	if len(payload) > MaxUnreliablePayload {
		return fmt.Errorf("transport: unreliable message of %d bytes (at most %d): %w",
			len(payload), MaxUnreliablePayload, ErrTooLarge)
	}
	l, err := c.liveLink()
	if err != nil {
		return err
	}
	m := wire.Message{Stamp: stamp, Payload: payload}
	if l.session.Mode == ModeStream {
		if err := c.sendNoWait(l, m); err != nil {
			return err
		}
	} else if err := l.conn.SendDatagram(wire.AppendMessage(nil, m)); err != nil {
		var tl *quic.DatagramTooLargeError
		if errors.As(err, &tl) {
			return fmt.Errorf("transport: unreliable message of %d bytes: %w: %w", len(payload), ErrTooLarge, err)
		}
		return fmt.Errorf("transport: sending an unreliable message: %w", err)
	}
	c.mu.Lock()
	c.msgsSent++
	c.mu.Unlock()
	return nil
}

// sendNoWait queues m on l's reliable stream if it can be done without
// blocking.
func (c *Client) sendNoWait(l *link, m wire.Message) error {
	select {
	case c.sendSem <- struct{}{}:
	default:
		return fmt.Errorf("transport: sending a message: %w: a reliable message is being written", ErrBackpressure)
	}
	defer func() { <-c.sendSem }()
	if l.out == nil {
		str, err := l.conn.OpenUniStream()
		if err != nil {
			return fmt.Errorf("transport: opening the message stream: %w", err)
		}
		l.out = str
	}
	if err := l.out.TryWriteAll(wire.AppendMessageFrame(nil, m)); err != nil {
		if errors.Is(err, quic.ErrWouldBlock) {
			return fmt.Errorf("transport: sending a message: %w: %w", ErrBackpressure, err)
		}
		l.out = nil
		return fmt.Errorf("transport: sending a message: %w", err)
	}
	return nil
}

// stampNow is the default stamp of a client's message: the System's
// predicted time, the zero Time before sync.
func (c *Client) stampNow() nettime.Time {
	if sys := c.sys.Load(); sys != nil {
		return sys.PredictedTime()
	}
	return nettime.Time{}
}

// liveLink returns the current connection, or why there is none.
func (c *Client) liveLink() (*link, error) {
	if c.ctx.Err() != nil {
		return nil, c.stoppedErr()
	}
	l := c.link.Load()
	if l.conn.Context().Err() != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotConnected, context.Cause(l.conn.Context()))
	}
	return l, nil
}

// stoppedErr is the error of a send on a stopped client.
func (c *Client) stoppedErr() error {
	if c.closed.Load() {
		return ErrClosed
	}
	return fmt.Errorf("%w: client stopped: %w", ErrNotConnected, context.Cause(c.ctx))
}

// Age returns how long ago stamp was in shared time: SharedTime now minus
// the stamp, so a message stamped at the server's tick k has the age
// server time now − tick k however long it took to arrive (a projectile
// fired at k has flown that long), saturating at the range of
// time.Duration. ok is false when SharedTime is (not synchronized) and for
// the zero Time. The stamp's tick rate does not matter.
func (c *Client) Age(stamp nettime.Time) (d time.Duration, ok bool) {
	now, ok := c.SharedTime()
	if !ok {
		return 0, false
	}
	return age(now, stamp)
}

// receiveDatagram parses a message datagram and queues it for delivery.
func (c *Client) receiveDatagram(b []byte, at time.Duration, d *dispatcher) {
	wm, err := wire.ParseMessage(b)
	m := fromWire(wm)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.msgsBad++
		c.log.Debug("netclock: dropped malformed message datagram", "len", len(b), "err", err)
		return
	}
	m.Payload = bytes.Clone(m.Payload)
	m.Received = at
	c.msgsRecv++
	if !d.offer(m) {
		c.msgsDropped++
	}
}

// deliver hands an unreliable message to OnMessage or, if there is room,
// to the Messages channel.
func (c *Client) deliver(m Message) {
	if c.cfg.OnMessage != nil {
		c.cfg.OnMessage(m)
		return
	}
	select {
	case c.msgs <- m:
	default:
		c.mu.Lock()
		c.msgsDropped++
		c.mu.Unlock()
	}
}

// acceptStreams accepts the server's message streams and reads each on a
// goroutine of wg, until the connection ends.
func (c *Client) acceptStreams(l *link, wg *sync.WaitGroup) {
	ctx := l.conn.Context()
	for {
		str, err := l.conn.AcceptUniStream(ctx)
		if err != nil {
			return
		}
		wg.Go(func() { c.readStream(ctx, str) })
	}
}

// readStream delivers the reliable messages of one stream, in order, until
// it ends or breaks. A malformed frame is counted and stops the stream.
func (c *Client) readStream(ctx context.Context, str *quic.ReceiveStream) {
	for {
		wm, err := wire.ReadMessageFrame(str)
		m := fromWire(wm)
		if err != nil {
			if errors.Is(err, wire.ErrMalformed) || errors.Is(err, wire.ErrVersion) {
				c.mu.Lock()
				c.msgsBad++
				c.mu.Unlock()
				c.log.Warn("netclock: malformed message frame; stream stopped", "err", err)
				str.CancelRead(streamCodeMalformed)
			}
			return
		}
		m.Reliable, m.Received = true, c.clock()
		c.mu.Lock()
		c.msgsRecv++
		c.mu.Unlock()
		if c.cfg.OnMessage != nil {
			c.cfg.OnMessage(m)
			continue
		}
		select {
		case c.msgs <- m:
		case <-ctx.Done():
			return
		}
	}
}
