package transport

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/quic-go/quic-go"
)

// supervise serves the client's connections until the client stops: the
// first one, then, with Reconnect, every one it re-establishes.
func (c *Client) supervise(l *link) {
	defer close(c.msgs) // every sender has returned
	for {
		c.serveLink(l)
		if c.ctx.Err() != nil {
			return // closed
		}
		c.connectionLost()
		cause := context.Cause(l.conn.Context())
		if sr := (*quic.StatelessResetError)(nil); errors.As(cause, &sr) {
			c.mu.Lock()
			c.resets++
			c.mu.Unlock()
		}
		if !c.cfg.Reconnect {
			c.log.Info("netclock: disconnected", "err", cause)
			c.cancel(cause)
			return
		}
		c.log.Warn("netclock: connection lost; reconnecting", "err", cause)
		if l = c.reconnect(); l == nil {
			return
		}
	}
}

// reconnect redials with backoff until it has a connection, the client is
// closed, or an error no retry can fix stops the client. It returns the
// new connection, adopted, or nil.
func (c *Client) reconnect() *link {
	for attempt := 0; ; attempt++ {
		wait := backoff(attempt, c.cfg.ReconnectMin, c.cfg.ReconnectMax, rand.Float64())
		c.log.Info("netclock: reconnecting", "attempt", attempt+1, "backoff", wait)
		t := time.NewTimer(wait)
		select {
		case <-c.ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		c.log.Debug("netclock: redialing", "attempt", attempt+1)
		l, err := c.connect(c.ctx, c.rate)
		if err == nil {
			if !c.adopt(l, attempt+1) {
				return nil
			}
			return l
		}
		if c.ctx.Err() != nil {
			return nil
		}
		c.mu.Lock()
		c.failures++
		c.mu.Unlock()
		if permanent(err) {
			c.log.Error("netclock: reconnecting failed for good", "attempt", attempt+1, "err", err)
			c.cancel(err)
			return nil
		}
		c.log.Info("netclock: reconnect attempt failed", "attempt", attempt+1, "err", err)
	}
}

// adopt makes l the client's connection. If the server's epoch changed,
// the server restarted and its clock with it: the estimator restarts, and
// a fresh burst will resync and reinitialize the System. It returns false,
// having closed l, if the client was closed meanwhile.
func (c *Client) adopt(l *link, attempts int) bool {
	old := c.link.Load().session
	restarted := l.session.Epoch != old.Epoch
	c.mu.Lock()
	c.reconnects++
	c.heardAt = c.clock()
	if restarted {
		c.epochs++
		c.est.Reset()
		c.syncBase = c.est.Stats().Samples
		c.syncFromSet = false
		c.resyncing = c.sys.Load() != nil
	}
	c.mu.Unlock()
	c.link.Store(l)
	if c.ctx.Err() != nil { // Close may have missed l
		l.conn.CloseWithError(codeNoError, "client closing")
		return false
	}
	c.log.Info("netclock: reconnected", "attempts", attempts, "epoch", l.session.Epoch,
		"server_restarted", restarted, "mode", l.session.Mode.String())
	return true
}

// backoff returns the wait before reconnect attempt n (from 0): min·2ⁿ
// capped at max, scaled by a jitter factor in [0.5, 1] from u in [0, 1).
func backoff(n int, lo, hi time.Duration, u float64) time.Duration {
	b := lo
	for range n {
		if b >= hi/2 {
			b = hi
			break
		}
		b *= 2
	}
	b = min(b, hi)
	return b/2 + time.Duration(u*float64(b/2))
}

// permanent reports whether a failed reconnect cannot succeed by retrying:
// the server speaks another protocol version, runs at another tick rate
// (the client's System cannot change its rate), does not speak netclock,
// or presents a certificate the client does not trust. Timeouts, refused
// connections, a full server and a server going away are retried.
func permanent(err error) bool {
	if errors.Is(err, ErrVersionMismatch) || errors.Is(err, ErrTickRateMismatch) || errors.Is(err, ErrALPN) {
		return true
	}
	var te *quic.TransportError
	return errors.As(err, &te) && te.ErrorCode.IsCryptoError()
}
