package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/provider/clocksync"
	"github.com/netclock/netclock/ticksys"
)

// Session is what the handshake agreed.
type Session struct {
	// TickRate is the server's tick rate, in ticks per second: the rate of
	// the client's System.
	TickRate uint32
	// Epoch identifies the server's run: after a reconnect, another epoch
	// means the server restarted and its clock with it.
	Epoch uint64
	// ServerTime is the server clock when it wrote its hello.
	ServerTime time.Duration
	// Mode is how pings travel.
	Mode Mode
}

// ClientStats describe a Client's synchronization.
type ClientStats struct {
	// Mode is how pings travel: ModeDatagram, or ModeStream if the peers
	// did not both enable datagrams.
	Mode Mode

	// From the estimate (zero before the first sample):
	// RTT is the estimated round trip, Uplink + Downlink.
	RTT time.Duration
	// Offset is the server clock minus the client clock.
	Offset time.Duration
	// ErrorBound bounds the offset's error, excluding path asymmetry.
	ErrorBound time.Duration
	// Jitter is the typical variation of the round trip.
	Jitter time.Duration
	// DriftPPM is how much faster the server clock runs, in ppm.
	DriftPPM float64

	// From the provider after the last frame: how fast predicted and
	// server time advanced relative to real time (1 is nominal).
	PredictedScale, ServerScale float64
	// Resets counts the System's reset events (hard resets, stalls); 0
	// before sync.
	Resets int64

	// PingsSent counts pings sent.
	PingsSent int64
	// PongsReceived counts pongs matched to a ping (not duplicates).
	PongsReceived int64
	// Lost counts pings older than the newest answered one that have no
	// pong (yet): a pong arriving late, reordered, is taken back out.
	Lost int64
	// Duplicates counts pongs for a ping already answered (ignored).
	Duplicates int64
	// Stale counts pongs for pings never sent or too old to remember
	// (ignored).
	Stale int64
	// Malformed counts datagrams that were not a valid pong, or whose T1
	// echo did not match the ping (ignored).
	Malformed int64
	// Rejected counts samples the estimator rejected as impossible.
	Rejected int64
	// ClockJumps and PathChanges count what the estimator detected.
	ClockJumps, PathChanges int64

	// QUICMinRTT and QUICSmoothedRTT are quic-go's own RTT estimates
	// (from ACKs, which include the peer's ACK delay).
	QUICMinRTT, QUICSmoothedRTT time.Duration
}

// Client is a connection to a netclock server that keeps a clock estimate
// of it and, once synced, a tick system in step with it.
//
// Nothing advances the client's System on its own: the game loop calls
// System().Advance(frameTime) every frame, or a headless client calls Run,
// which runs ticksys' driver loop. Not both.
type Client struct {
	cfg     ClientConfig
	log     *slog.Logger
	clock   func() time.Duration // the client clock: T1, T4 and the provider's
	pc      *provider.Client
	tr      *quic.Transport
	conn    *quic.Conn
	ownConn net.PacketConn // created by Dial; closed by Close
	session Session
	pingStr *quic.Stream // ModeStream only

	sys       atomic.Pointer[ticksys.System]
	synced    chan struct{}
	ctx       context.Context // ends at Close or when the connection ends
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error

	mu        sync.Mutex // guards the estimator and the counts below
	est       *clocksync.Estimator
	seq       seqTracker
	firstPing time.Duration
	sent      int64
	pongs     int64
	dups      int64
	stale     int64
	malformed int64
}

// Dial connects to the netclock server at addr ("host:port") over a new
// UDP socket, performs the handshake and starts pinging. It returns once
// the handshake is done, before the client is synced (see Synced). ctx
// bounds the dial and the handshake.
func Dial(ctx context.Context, addr string, cfg ClientConfig) (*Client, error) {
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("transport: dial %s: %w", addr, err)
	}
	network := "udp"
	if raddr.IP.To4() != nil {
		network = "udp4"
	} else if raddr.IP != nil {
		network = "udp6"
	}
	pconn, err := net.ListenUDP(network, nil)
	if err != nil {
		return nil, fmt.Errorf("transport: dial %s: %w", addr, err)
	}
	host, _, _ := net.SplitHostPort(addr)
	c, err := dial(ctx, pconn, raddr, cfg, host)
	if err != nil {
		pconn.Close()
		return nil, err
	}
	c.ownConn = pconn
	return c, nil
}

// DialConn is Dial over conn, which the client must be the only user of;
// Close does not close it.
func DialConn(ctx context.Context, conn net.PacketConn, addr net.Addr, cfg ClientConfig) (*Client, error) {
	return dial(ctx, conn, addr, cfg, "")
}

func dial(ctx context.Context, pconn net.PacketConn, addr net.Addr, cfg ClientConfig, host string) (*Client, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	pc, err := provider.NewClient(cfg.Provider)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	est, err := clocksync.New(cfg.Estimator)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	tlsConf := &tls.Config{}
	if cfg.TLSConfig != nil {
		tlsConf = cfg.TLSConfig.Clone()
	}
	tlsConf.NextProtos = []string{ALPN}
	if tlsConf.ServerName == "" {
		tlsConf.ServerName = host // empty: quic-go uses the IP
	}
	qconf := &quic.Config{}
	if cfg.QUICConfig != nil {
		qconf = cfg.QUICConfig.Clone()
	}
	qconf.EnableDatagrams = !cfg.DisableDatagrams

	tr := &quic.Transport{Conn: pconn}
	conn, err := tr.Dial(ctx, addr, tlsConf, qconf)
	if err != nil {
		tr.Close()
		if isALPNError(err) {
			return nil, fmt.Errorf("transport: dial %s: %w: %w", addr, ErrALPN, err)
		}
		return nil, fmt.Errorf("transport: dial %s: %w", addr, err)
	}
	c := &Client{cfg: cfg, log: cfg.Logger.With("server", addr.String()), clock: pc.Config().Clock,
		pc: pc, tr: tr, conn: conn, est: est, synced: make(chan struct{})}
	if err := c.handshake(ctx); err != nil {
		tr.Close()
		return nil, fmt.Errorf("transport: handshake with %s: %w", addr, err)
	}
	c.ctx, c.cancel = context.WithCancel(conn.Context())
	if c.session.Mode == ModeStream {
		if c.pingStr, err = conn.OpenStreamSync(ctx); err != nil {
			conn.CloseWithError(CodeNoError, "")
			tr.Close()
			return nil, fmt.Errorf("transport: opening the ping stream to %s: %w", addr, err)
		}
	}
	c.log.Info("netclock: connected", "tick_rate", c.session.TickRate, "epoch", c.session.Epoch,
		"mode", c.session.Mode.String())
	c.wg.Go(c.sendLoop)
	c.wg.Go(c.receiveLoop)
	return c, nil
}

// handshake exchanges the hellos. On failure it closes the connection.
func (c *Client) handshake(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			c.conn.CloseWithError(CodeNoError, "")
		}
	}()
	if p := c.conn.ConnectionState().TLS.NegotiatedProtocol; p != ALPN {
		return fmt.Errorf("%w: negotiated %q", ErrALPN, p)
	}
	str, err := c.conn.OpenStreamSync(ctx)
	if err != nil {
		return peerError(err)
	}
	deadline := time.Now().Add(c.cfg.HelloTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	str.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { str.SetDeadline(time.Now()) })
	defer stop()

	want := c.cfg.TickRate
	if c.cfg.AcceptServerRate {
		want = 0
	}
	version := wireVersion(c.cfg.protocolVersion)
	if _, err := str.Write(AppendClientHello(nil, ClientHello{Version: version, TickRate: want})); err != nil {
		return peerError(err)
	}
	h, err := readServerHello(str)
	switch {
	case errors.Is(err, ErrVersion):
		c.conn.CloseWithError(CodeVersionMismatch, "protocol version mismatch")
		return fmt.Errorf("%w: server speaks version %d, client %d", ErrVersionMismatch, h.Version, version)
	case errors.Is(err, ErrMalformed):
		c.conn.CloseWithError(CodeProtocolViolation, "malformed server hello")
		return fmt.Errorf("%w: %w", ErrProtocol, err)
	case err != nil:
		return peerError(err)
	}
	str.Close() // phase 1 sends nothing more on the control stream

	var refusal error
	switch {
	case h.Status == StatusVersionMismatch || h.Version != version:
		refusal = fmt.Errorf("%w: server speaks version %d, client %d", ErrVersionMismatch, h.Version, version)
	case h.Status == StatusTickRateMismatch || h.Status == StatusOK && want != 0 && h.TickRate != want:
		refusal = fmt.Errorf("%w: server ticks at %d Hz, client wants %d Hz", ErrTickRateMismatch, h.TickRate, want)
	case h.Status == StatusServerFull:
		refusal = ErrServerFull
	}
	if refusal != nil {
		status := h.Status
		if status == StatusOK { // refused by us, not the server
			status = StatusTickRateMismatch
			if h.Version != version {
				status = StatusVersionMismatch
			}
		}
		c.conn.CloseWithError(statusCode(status), refusal.Error())
		return refusal
	}
	if err := nettime.ValidateRate(h.TickRate); err != nil {
		c.conn.CloseWithError(CodeProtocolViolation, "invalid tick rate")
		return fmt.Errorf("%w: server hello: %w", ErrProtocol, err)
	}
	if c.cfg.TickRate != 0 && h.TickRate != c.cfg.TickRate {
		c.log.Warn("netclock: using the server's tick rate", "server_rate", h.TickRate, "wanted_rate", c.cfg.TickRate)
	}
	c.session = Session{TickRate: h.TickRate, Epoch: h.Epoch, ServerTime: h.ServerTime, Mode: modeOf(c.conn)}
	return nil
}

// peerError maps the error of a connection the server closed with one of
// netclock's codes to its sentinel, keeping the server's message.
func peerError(err error) error {
	var ae *quic.ApplicationError
	if errors.As(err, &ae) && ae.Remote {
		if s := codeError(ae.ErrorCode); s != nil {
			return fmt.Errorf("%w: %w", s, err)
		}
	}
	return err
}

// sendLoop sends the start burst, then pings at the steady rate, until the
// client stops.
func (c *Client) sendLoop() {
	t := time.NewTimer(0)
	defer t.Stop()
	buf := make([]byte, 0, PingLen+2)
	for n := 0; ; n++ {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		if err := c.sendPing(&buf); err != nil {
			if c.ctx.Err() != nil {
				return
			}
			c.log.Warn("netclock: ping not sent", "err", err)
		}
		next := c.cfg.PingInterval
		if n+1 < c.cfg.BurstPings {
			next = c.cfg.BurstInterval
		}
		t.Reset(next)
	}
}

func (c *Client) sendPing(buf *[]byte) error {
	c.mu.Lock()
	t1 := c.clock() // T1: stamped, recorded, sent; nothing slow in between
	seq := c.seq.send(t1)
	if c.sent == 0 {
		c.firstPing = t1
	}
	c.sent++
	c.mu.Unlock()
	b := AppendPing((*buf)[:0], Ping{Seq: seq, ClientSend: t1})
	if c.session.Mode == ModeStream {
		var frame [PingLen + 2]byte
		_, err := c.pingStr.Write(AppendFrame(frame[:0], b))
		return err
	}
	return c.conn.SendDatagram(b)
}

// receiveLoop reads pongs until the client stops.
func (c *Client) receiveLoop() {
	buf := make([]byte, MaxFrameLen+2)
	for {
		var b []byte
		var err error
		if c.session.Mode == ModeStream {
			b, err = readFrame(c.pingStr, buf)
		} else {
			b, err = c.conn.ReceiveDatagram(c.ctx)
		}
		t4 := c.clock() // T4 first: nothing may sit between arrival and stamp
		if err != nil {
			if errors.Is(err, ErrMalformed) {
				c.mu.Lock()
				c.malformed++
				c.mu.Unlock()
				c.conn.CloseWithError(CodeProtocolViolation, err.Error())
			}
			if !c.closed.Load() {
				c.log.Info("netclock: disconnected", "err", context.Cause(c.conn.Context()))
			}
			return
		}
		c.handlePong(b, t4)
	}
}

// handlePong matches a pong to its ping, feeds the sample to the
// estimator, hands the estimate to the provider, and syncs when ready.
func (c *Client) handlePong(b []byte, t4 time.Duration) {
	p, err := ParsePong(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.malformed++
		c.log.Debug("netclock: dropped malformed pong", "len", len(b), "err", err)
		return
	}
	switch c.seq.answer(p.Seq, p.ClientSend) {
	case pongStale:
		c.stale++
		return
	case pongDuplicate:
		c.dups++
		return
	case pongMismatch:
		c.malformed++
		return
	}
	c.pongs++
	before := c.est.Stats()
	s := provider.Sample{ClientSend: p.ClientSend, ServerReceive: p.ServerReceive,
		ServerSend: p.ServerSend, ClientReceive: t4}
	if err := c.est.Observe(s); err != nil {
		c.log.Debug("netclock: sample rejected", "err", err)
		return
	}
	after := c.est.Stats()
	e := c.est.Estimate()
	// LastEvent outlives the sample that caused it; the counts say whether
	// this sample did.
	if after.Jumps > before.Jumps {
		c.log.Warn("netclock: clock jump detected; estimator restarted",
			"event", c.est.LastEvent().String(), "offset", e.Offset, "error_bound", e.ErrorBound)
	}
	if after.PathChanges > before.PathChanges {
		c.log.Warn("netclock: network path changed; offset held",
			"event", c.est.LastEvent().String(), "uplink", e.Uplink, "downlink", e.Downlink)
	}
	c.pc.SetEstimate(e)

	if c.sys.Load() == nil && e.Valid &&
		(after.Samples >= int64(c.cfg.BurstPings) || t4-c.firstPing >= c.cfg.SyncTimeout) {
		sys, err := ticksys.New(ticksys.Config{TickRate: c.session.TickRate, Provider: c.pc, Logger: c.log})
		if err != nil { // the rate was validated in the handshake
			c.log.Error("netclock: creating the tick system", "err", err)
			return
		}
		c.sys.Store(sys)
		close(c.synced)
		c.log.Info("netclock: synced", "samples", after.Samples, "offset", e.Offset, "rtt", e.RTT(),
			"error_bound", e.ErrorBound)
	}
}

// Session returns what the handshake agreed.
func (c *Client) Session() Session { return c.session }

// Synced returns a channel closed once the client has a tick system: when
// the start burst has been observed, or SyncTimeout after the first ping
// if some of it was lost.
func (c *Client) Synced() <-chan struct{} { return c.synced }

// System returns the client's tick system, nil until synced. It runs at
// the server's tick rate with the client's provider.Client. The caller
// advances it (System.Advance from the game loop), or calls Run.
func (c *Client) System() *ticksys.System { return c.sys.Load() }

// Provider returns the provider.Client steering the System; it holds the
// latest estimate and can compute the timelines' targets.
func (c *Client) Provider() *provider.Client { return c.pc }

// Estimate returns the latest clock estimate (Valid is false before the
// first pong).
func (c *Client) Estimate() provider.Estimate { return c.pc.Estimate() }

// LocalTime returns the client clock: the clock the estimate's client
// times refer to.
func (c *Client) LocalTime() time.Duration { return c.clock() }

// SharedTime returns the estimated server clock now (time since tick 0),
// and false before the first estimate.
func (c *Client) SharedTime() (time.Duration, bool) {
	e := c.pc.Estimate()
	if !e.Valid {
		return 0, false
	}
	return e.ServerTime(c.clock()), true
}

// Stats returns the client's synchronization state and counts.
func (c *Client) Stats() ClientStats {
	c.mu.Lock()
	es := c.est.Stats()
	st := ClientStats{
		PingsSent: c.sent, PongsReceived: c.pongs, Lost: c.seq.lost(), Duplicates: c.dups,
		Stale: c.stale, Malformed: c.malformed, Rejected: es.Rejected,
		ClockJumps: es.Jumps, PathChanges: es.PathChanges,
	}
	c.mu.Unlock()
	st.Mode = c.session.Mode
	e := c.pc.Estimate()
	st.RTT, st.Offset, st.ErrorBound, st.Jitter, st.DriftPPM = e.RTT(), e.Offset, e.ErrorBound, e.Jitter, e.DriftPPM
	ps := c.pc.Status()
	st.PredictedScale, st.ServerScale = ps.PredictedScale, ps.ServerScale
	if sys := c.sys.Load(); sys != nil {
		st.Resets = sys.Stats().Resets
	}
	if c.conn != nil { // nil only in tests
		qs := c.conn.ConnectionStats()
		st.QUICMinRTT, st.QUICSmoothedRTT = qs.MinRTT, qs.SmoothedRTT
	}
	return st
}

// Run waits until the client is synced, then advances its System once per
// tick on the client clock (ticksys' driver loop) until ctx ends or the
// client stops. It returns ctx.Err(), or why the client stopped (see Err).
// Use it when no game loop calls System().Advance; never both.
func (c *Client) Run(ctx context.Context) error {
	select {
	case <-c.synced:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return c.Err()
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	err := c.sys.Load().Run(rctx, ticksys.DriverConfig{Clock: driverClock{c.clock}})
	if ctx.Err() == nil && c.ctx.Err() != nil {
		return c.Err()
	}
	return err
}

// driverClock adapts the client clock to ticksys.Clock, so the driver
// measures frames on the clock the estimate is expressed in.
type driverClock struct{ now func() time.Duration }

func (k driverClock) Now() time.Time                       { return time.Unix(0, 0).Add(k.now()) }
func (driverClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Done returns a channel closed when the client stops: Close was called,
// or the connection ended.
func (c *Client) Done() <-chan struct{} { return c.ctx.Done() }

// Err returns nil while the client runs; ErrClosed after Close; otherwise
// why the connection ended (a *quic.ApplicationError with CodeGoingAway
// when the server shut down, a *quic.IdleTimeoutError, ...).
func (c *Client) Err() error {
	if c.ctx.Err() == nil {
		return nil
	}
	if c.closed.Load() {
		return ErrClosed
	}
	return context.Cause(c.conn.Context())
}

// Close closes the connection gracefully (CodeNoError) and waits for the
// client's goroutines. It closes the socket if Dial created it. The System
// stays usable (it just gets no new estimates); Run returns. Close is
// idempotent.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.cancel()
		c.conn.CloseWithError(CodeNoError, "client closing")
		c.wg.Wait()
		c.closeErr = c.tr.Close()
		if c.ownConn != nil {
			if err := c.ownConn.Close(); err != nil && c.closeErr == nil {
				c.closeErr = err
			}
		}
	})
	return c.closeErr
}
