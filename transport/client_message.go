package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/nettime"
)

// Messages returns the channel of the server's messages (unless
// ClientConfig.OnMessage takes them), reliable ones in send order. It is
// closed when the client stops. Read it promptly (MessageBuffer).
func (c *Client) Messages() <-chan Message { return c.msgs }

// Send sends m to the server without waiting for the network; errors wrap
// ErrBackpressure, ErrTooLarge, ErrNotConnected or ErrClosed.
func (c *Client) Send(m Message) error {
	if m.Stamp.IsZero() {
		m.Stamp = c.stampNow()
	}
	if err := checkPayload(m.Reliable, len(m.Payload)); err != nil {
		return fmt.Errorf("transport: send: %w", err)
	}
	l, err := c.liveLink()
	if err != nil {
		return err
	}
	if err := l.out.send(l.conn, l.session.Mode, m.Reliable, wire.Message{Stamp: m.Stamp, Payload: m.Payload}); err != nil {
		return fmt.Errorf("transport: send: %w", err)
	}
	c.mu.Lock()
	c.msgsSent++
	c.mu.Unlock()
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

// Age returns how long ago stamp was in shared time (SharedTime minus stamp,
// saturating); ok is false when SharedTime's is, and for the zero Time.
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
