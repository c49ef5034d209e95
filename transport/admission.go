package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
)

// Admission control: which connection attempts a Server lets start a TLS
// handshake. It runs in quic-go's ConnContext hook, on the first Initial
// packet of an attempt, so a refused attempt costs no crypto and no
// connection state: quic-go answers CONNECTION_REFUSED (QUIC cannot carry an
// application error code before the handshake), which the client reports as
// ErrRefused. What is admitted is counted until the connection ends.

// Defaults of the admission limits, where ServerConfig leaves them zero.
const (
	// defaultMaxClientsPerCPU sizes the default MaxClients: this many per
	// CPU the process may use (runtime.GOMAXPROCS). Measured on a 2-core
	// machine, 1000 clients at 10 Hz take about 0.7 core and 76 KiB each.
	defaultMaxClientsPerCPU = 500
	// defaultMaxClientsPerSource is the default MaxClientsPerSource.
	defaultMaxClientsPerSource = 32
	// defaultHandshakeRatePerCPU sizes the default HandshakeRate: this
	// many new connections a second per CPU. A TLS handshake costs the
	// server well under a millisecond of CPU.
	defaultHandshakeRatePerCPU = 100
)

// AdmissionRequest is a connection attempt, for ServerConfig.Admit.
type AdmissionRequest struct {
	Remote       net.Addr // may be spoofed unless AddrVerified
	AddrVerified bool     // the client proved it receives at Remote (Retry)
}

// errAdmission is why admission refused an attempt (server side, for logs
// and tests; the client sees only CONNECTION_REFUSED).
var (
	errTooManyFromSource = errors.New("too many connections from this address")
	errHandshakeRate     = errors.New("handshake rate limit")
	errCapacity          = errors.New("server at capacity (clients and handshakes)")
)

// admission counts connections from admission to their end, per source
// and in all, and rate-limits handshakes.
type admission struct {
	perSource  int          // 0: no limit
	maxPending int          // handshakes in flight; 0: no limit
	maxLive    int          // connections in all; 0: no limit
	verifyAt   int          // pending handshakes from which Retry is asked
	bucket     *tokenBucket // nil: no rate limit
	hook       func(AdmissionRequest) error
	log        func(msg string, args ...any)

	mu      sync.Mutex
	sources map[string]int
	pending int // admitted, handshake not done
	live    int // admitted, not ended

	refused, retries atomic.Int64
}

// admitted is one admitted connection's share of the counts.
type admitted struct {
	a       *admission
	source  string
	once    sync.Once
	pending atomic.Bool
}

type admittedKey struct{}

func newAdmission(cfg ServerConfig, clock func() time.Duration) *admission {
	a := &admission{hook: cfg.Admit, sources: make(map[string]int),
		log: func(msg string, args ...any) { cfg.Logger.Debug(msg, args...) }}
	if cfg.MaxClientsPerSource > 0 {
		a.perSource = cfg.MaxClientsPerSource
	}
	pendingForVerify := 256
	if cfg.HandshakeRate > 0 {
		a.bucket = newTokenBucket(float64(cfg.HandshakeRate), cfg.HandshakeRate, clock)
		a.maxPending = max(16, cfg.HandshakeRate)
		pendingForVerify = a.maxPending
	}
	a.verifyAt = max(8, pendingForVerify/4)
	if cfg.MaxClients > 0 && a.maxPending > 0 {
		a.maxLive = cfg.MaxClients + a.maxPending
	}
	return a
}

// sourceKey is the IP address of addr (its port dropped).
func sourceKey(addr net.Addr) string {
	if u, ok := addr.(*net.UDPAddr); ok {
		return u.IP.String()
	}
	if host, _, err := net.SplitHostPort(addr.String()); err == nil {
		return host
	}
	return addr.String()
}

// underLoad reports whether new attempts should prove their address first
// (quic-go's Transport.VerifySourceAddress): many handshakes in flight, or
// the rate limiter half drained. It costs the client one round trip.
func (a *admission) underLoad(net.Addr) bool {
	a.mu.Lock()
	load := a.pending >= a.verifyAt || (a.bucket != nil && a.bucket.fill() <= 0.5)
	a.mu.Unlock()
	if load {
		a.retries.Add(1)
	}
	return load
}

// connContext is the server's quic-go ConnContext: it admits or refuses
// an attempt, then chains next (a user transport's own hook), if any.
func (a *admission) connContext(next func(context.Context, *quic.ClientInfo) (context.Context, error)) func(context.Context, *quic.ClientInfo) (context.Context, error) {
	return func(ctx context.Context, info *quic.ClientInfo) (context.Context, error) {
		rec, err := a.admit(info)
		if err != nil {
			a.refused.Add(1)
			a.log("netclock: connection attempt refused", "remote", info.RemoteAddr.String(), "reason", err)
			return nil, err
		}
		// quic-go cancels ctx when the connection ends or its handshake
		// fails, whatever next returns.
		context.AfterFunc(ctx, rec.release)
		out := ctx
		if next != nil {
			if out, err = next(ctx, info); err != nil {
				a.refused.Add(1)
				return nil, err
			}
		}
		return context.WithValue(out, admittedKey{}, rec), nil
	}
}

// admit checks an attempt against the limits and counts it in, then asks
// the hook, if any.
func (a *admission) admit(info *quic.ClientInfo) (*admitted, error) {
	src := sourceKey(info.RemoteAddr)
	a.mu.Lock()
	switch {
	case a.perSource > 0 && a.sources[src] >= a.perSource:
		a.mu.Unlock()
		return nil, errTooManyFromSource
	case a.maxPending > 0 && a.pending >= a.maxPending, a.maxLive > 0 && a.live >= a.maxLive:
		a.mu.Unlock()
		return nil, errCapacity
	case a.bucket != nil && !a.bucket.allow():
		a.mu.Unlock()
		return nil, errHandshakeRate
	}
	a.sources[src]++
	a.pending++
	a.live++
	a.mu.Unlock()
	rec := &admitted{a: a, source: src}
	rec.pending.Store(true)
	if a.hook != nil {
		if err := a.hook(AdmissionRequest{Remote: info.RemoteAddr, AddrVerified: info.AddrVerified}); err != nil {
			rec.release()
			return nil, fmt.Errorf("admission hook: %w", err)
		}
	}
	return rec, nil
}

// handshakeDone marks conn's handshake as finished: it no longer counts
// against the handshakes in flight.
func (a *admission) handshakeDone(conn *quic.Conn) {
	rec, ok := conn.Context().Value(admittedKey{}).(*admitted)
	if !ok || !rec.pending.CompareAndSwap(true, false) {
		return
	}
	a.mu.Lock()
	a.pending--
	a.mu.Unlock()
}

// release counts a connection out when it ends.
func (r *admitted) release() {
	r.once.Do(func() {
		a := r.a
		a.mu.Lock()
		defer a.mu.Unlock()
		if r.pending.CompareAndSwap(true, false) {
			a.pending--
		}
		a.live--
		if a.sources[r.source]--; a.sources[r.source] <= 0 {
			delete(a.sources, r.source)
		}
	})
}

// counts returns the connections admitted and not ended, and how many of
// them are still handshaking.
func (a *admission) counts() (live, pending int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.live, a.pending
}

// isRefused reports whether err is a server's refusal of the connection
// before its handshake (QUIC's CONNECTION_REFUSED).
func isRefused(err error) bool {
	var te *quic.TransportError
	return errors.As(err, &te) && te.Remote && te.ErrorCode == quic.ConnectionRefused
}
