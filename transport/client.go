package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/internal/debugpage"
	"github.com/netclock/netclock/internal/pingspread"
	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/provider/clocksync"
	"github.com/netclock/netclock/ticksys"
)

// Session is what the handshake agreed.
type Session struct {
	TickRate  uint32        // the server's, in ticks per second: the System's
	Epoch     uint64        // the server's run: a new one after a restart
	HelloTime time.Duration // the server clock (SharedTime) at its hello
	Mode      Mode          // how pings travel
}

// ClientStats describe a Client's synchronization. Counts are since Dial.
type ClientStats struct {
	Mode Mode // how pings travel
	// The estimate: round trip, server minus client clock, the bound on
	// the offset's error (path asymmetry excluded), RTT jitter, drift.
	RTT, Offset, ErrorBound, Jitter time.Duration
	DriftPPM                        float64
	PredictedScale, ServerScale     float64 // the timelines' speed in the last frame (1: nominal)
	Resets                          int64   // the System's reset events
	Quality                         Quality // as of the last ping (Poor while not connected)
	LossRate                        float64 // of the last 100 pings, 0 to 1
	// Pings sent, answered, lost; pongs ignored; samples rejected as
	// impossible; clock jumps and path changes the estimator detected.
	PingsSent, PongsReceived, Lost         int64
	Duplicates, Stale, Malformed, Rejected int64
	ClockJumps, PathChanges                int64
	QUICMinRTT, QUICSmoothedRTT            time.Duration // quic-go's, from ACKs
	BytesSent, BytesReceived               uint64        // UDP payloads, all connections
	// Stalled counts the pongs not taken as samples because their pings
	// were sent before a silence (no pong for a second, or ten ping
	// intervals) ended: they waited out a stall of the server or the path,
	// and their round trips say nothing about the clocks.
	Stalled int64
	// Synchronized: SharedTime is valid: connected, estimating the
	// current server, a pong heard in the last second (or ten pings).
	Connected, Synchronized         bool
	ServerResets                    int64 // connections ended by a stateless reset (the server restarted or forgot us)
	Reconnects, ReconnectFailures   int64 // redials that worked, and failed
	EpochChanges, Reinitializations int64 // restarted servers found; the System reinitializations after them
	DriftAlarm                      bool  // |DriftPPM| is over ClientConfig.DriftAlarmPPM
	DriftAlarms                     int64 // times DriftAlarm was raised
	// Game messages; unreliable ones dropped (the reader fell behind).
	MessagesSent, MessagesReceived, MessagesDropped, MalformedMessages int64
}

// Client is a connection to a netclock server: its clock estimate and, once
// synced, a tick system in step with it, advanced by your game loop or by
// Run.
type Client struct {
	cfg     ClientConfig
	version uint16 // the protocol version spoken
	log     *slog.Logger
	clock   func() time.Duration // the client clock: T1, T4 and the provider's
	pc      *restartable
	tr      *quic.Transport
	addr    net.Addr
	tlsConf *tls.Config
	qconf   *quic.Config
	ownConn net.PacketConn // created by Dial; closed by Close
	rate    uint32         // the session's tick rate; a reconnect must find it again

	link      atomic.Pointer[link] // the current connection, or the last one while reconnecting
	sys       atomic.Pointer[ticksys.System]
	synced    chan struct{}
	msgs      chan Message // Messages; closed when the client stops
	ctx       context.Context
	cancel    context.CancelCauseFunc // stops the client for good, with why
	wg        sync.WaitGroup
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error

	mu          sync.Mutex // guards the estimator and everything below
	est         *clocksync.Estimator
	seq         seqTracker
	syncFrom    time.Duration // T1 of the first ping of this (re)sync
	syncFromSet bool
	syncBase    int64         // estimator samples when this (re)sync started
	heardAt     time.Duration // client clock at the last pong, or when the link came up
	resumedAt   time.Duration // client clock at the first pong after the last silence (see silentAfter)
	resumed     bool          // resumedAt is set
	resyncing   bool          // a new epoch: waiting for a fresh burst to reinitialize
	sent        int64
	pongs       int64
	dups        int64
	stalled     int64 // pongs of pings that waited out a silence: not samples
	stale       int64
	malformed   int64
	reconnects  int64
	resets      int64 // connections ended by a stateless reset
	failures    int64
	epochs      int64
	driftAlarm  bool
	driftAlarms int64
	msgsSent    int64
	msgsRecv    int64
	msgsDropped int64
	msgsBad     int64
	bytesSent   uint64 // of connections that ended
	bytesRecv   uint64

	// The connection quality, the sync report and the live view's
	// history (see client_report.go).
	meter      qualityMeter
	quality    Quality
	nextReport time.Duration // client clock of the next report
	reported   bool          // a report was sent
	seen       seenCounts    // what the events were last computed from
	history    debugpage.History
	events     debugpage.Events
	started    time.Time
}

// link is one QUIC connection of a Client and what its handshake agreed.
type link struct {
	conn    *quic.Conn
	session Session
	pingStr *quic.Stream // ModeStream only
	out     sender       // reliable messages
	ended   bool         // its bytes were added to the totals; guarded by Client.mu
}

// Dial connects to the server at addr ("host:port") over a new UDP socket
// and returns after the handshake, before sync. ctx bounds both.
func Dial(ctx context.Context, addr string, cfg ClientConfig) (*Client, error) {
	return dialAddr(ctx, addr, cfg, 0)
}

// dialAddr is Dial speaking protocol version (0: wire.ProtocolVersion).
func dialAddr(ctx context.Context, addr string, cfg ClientConfig, version uint16) (*Client, error) {
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
	c, err := dial(ctx, pconn, raddr, cfg, host, version)
	if err != nil {
		pconn.Close()
		return nil, err
	}
	c.ownConn = pconn
	return c, nil
}

// DialConn is Dial over conn, which the client must be the only user of
// (reconnects reuse it; Close does not close it).
func DialConn(ctx context.Context, conn net.PacketConn, addr net.Addr, cfg ClientConfig) (*Client, error) {
	return dial(ctx, conn, addr, cfg, "", 0)
}

func dial(ctx context.Context, pconn net.PacketConn, addr net.Addr, cfg ClientConfig, host string, version uint16) (*Client, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	steered, err := provider.NewSteered(cfg.Provider)
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
	qconf := quicConfig(cfg.QUICConfig, clientMaxBidiStreams, clientMaxUniStreams)
	qconf.EnableDatagrams = !cfg.DisableDatagrams

	log := cfg.Logger.With("server", addr.String())
	c := &Client{cfg: cfg, version: wireVersion(version), log: log, clock: steered.Config().Clock,
		pc: &restartable{Steered: steered, log: log}, tr: &quic.Transport{Conn: pconn}, addr: addr, tlsConf: tlsConf, qconf: qconf, est: est,
		synced: make(chan struct{}), msgs: make(chan Message, cfg.MessageBuffer), started: time.Now()}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	want := cfg.TickRate
	if cfg.AcceptServerRate {
		want = 0
	}
	l, err := c.connect(ctx, want)
	if err != nil {
		c.cancel(err)
		c.tr.Close()
		return nil, err
	}
	if cfg.TickRate != 0 && l.session.TickRate != cfg.TickRate {
		c.log.Warn("netclock: using the server's tick rate", "server_rate", l.session.TickRate,
			"wanted_rate", cfg.TickRate)
	}
	c.rate = l.session.TickRate
	c.heardAt = c.clock()
	c.link.Store(l)
	c.log.Info("netclock: connected", "tick_rate", l.session.TickRate, "epoch", l.session.Epoch,
		"mode", l.session.Mode.String())
	c.wg.Go(func() { c.supervise(l) })
	return c, nil
}

// connect dials the server and performs the handshake, asking for tick
// rate want (0: any). On failure nothing is left open.
func (c *Client) connect(ctx context.Context, want uint32) (*link, error) {
	conn, err := c.tr.Dial(ctx, c.addr, c.tlsConf, c.qconf)
	if err != nil {
		switch {
		case isALPNError(err):
			return nil, fmt.Errorf("transport: dial %s: %w: %w", c.addr, ErrALPN, err)
		case isRefused(err):
			return nil, fmt.Errorf("transport: dial %s: %w: %w", c.addr, ErrRefused, err)
		case c.tlsConf.RootCAs != nil && isUnknownAuthority(err):
			return nil, fmt.Errorf("transport: dial %s: %w: %w", c.addr, ErrCertificateMismatch, err)
		}
		return nil, fmt.Errorf("transport: dial %s: %w", c.addr, err)
	}
	sess, err := c.handshake(ctx, conn, want)
	if err != nil {
		return nil, fmt.Errorf("transport: handshake with %s: %w", c.addr, err)
	}
	l := &link{conn: conn, session: sess}
	if sess.Mode == ModeStream {
		if l.pingStr, err = conn.OpenStreamSync(ctx); err != nil {
			conn.CloseWithError(codeNoError, "")
			return nil, fmt.Errorf("transport: opening the ping stream to %s: %w", c.addr, err)
		}
	}
	return l, nil
}

// handshake exchanges the hellos. On failure it closes the connection.
func (c *Client) handshake(ctx context.Context, conn *quic.Conn, want uint32) (sess Session, err error) {
	defer func() {
		if err != nil {
			conn.CloseWithError(codeNoError, "")
		}
	}()
	if p := conn.ConnectionState().TLS.NegotiatedProtocol; p != ALPN {
		return Session{}, fmt.Errorf("%w: negotiated %q", ErrALPN, p)
	}
	str, err := conn.OpenStreamSync(ctx)
	if err != nil {
		return Session{}, peerError(err)
	}
	deadline := time.Now().Add(c.cfg.HelloTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	str.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { str.SetDeadline(time.Now()) })
	defer stop()

	version := c.version
	if _, err := str.Write(wire.AppendClientHello(nil, wire.ClientHello{Version: version, TickRate: want})); err != nil {
		return Session{}, peerError(err)
	}
	h, err := wire.ReadServerHello(str)
	switch {
	case errors.Is(err, wire.ErrVersion):
		conn.CloseWithError(codeVersionMismatch, "protocol version mismatch")
		return Session{}, fmt.Errorf("%w: server speaks version %d, client %d", ErrVersionMismatch, h.Version, version)
	case errors.Is(err, wire.ErrMalformed):
		conn.CloseWithError(codeProtocolViolation, "malformed server hello")
		return Session{}, fmt.Errorf("%w: %w", ErrProtocol, err)
	case err != nil:
		return Session{}, peerError(err)
	}
	str.Close() // phase 1 sends nothing more on the control stream

	var refusal error
	switch {
	case h.Status == wire.StatusVersionMismatch || h.Version != version:
		refusal = fmt.Errorf("%w: server speaks version %d, client %d", ErrVersionMismatch, h.Version, version)
	case h.Status == wire.StatusTickRateMismatch || h.Status == wire.StatusOK && want != 0 && h.TickRate != want:
		refusal = fmt.Errorf("%w: server ticks at %d Hz, client wants %d Hz", ErrTickRateMismatch, h.TickRate, want)
	case h.Status == wire.StatusServerFull:
		refusal = ErrServerFull
	}
	if refusal != nil {
		status := h.Status
		if status == wire.StatusOK { // refused by us, not the server
			status = wire.StatusTickRateMismatch
			if h.Version != version {
				status = wire.StatusVersionMismatch
			}
		}
		conn.CloseWithError(statusCode(status), refusal.Error())
		return Session{}, refusal
	}
	if err := nettime.ValidateRate(h.TickRate); err != nil {
		conn.CloseWithError(codeProtocolViolation, "invalid tick rate")
		return Session{}, fmt.Errorf("%w: server hello: %w", ErrProtocol, err)
	}
	return Session{TickRate: h.TickRate, Epoch: h.Epoch, HelloTime: h.ServerTime, Mode: modeOf(conn)}, nil
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

// serveLink runs the goroutines of one connection until it ends, then
// adds its byte counts to the totals.
func (c *Client) serveLink(l *link) {
	var wg sync.WaitGroup
	ctx := l.conn.Context()
	d := newDispatcher(ctx, &wg, c.deliver)
	wg.Go(func() { c.sendLoop(l) })
	wg.Go(func() { c.receiveLoop(l, d) })
	wg.Go(func() { c.acceptStreams(l, &wg) })
	wg.Wait()
	qs := l.conn.ConnectionStats()
	c.mu.Lock()
	c.bytesSent += qs.BytesSent
	c.bytesRecv += qs.BytesReceived
	l.ended = true
	c.mu.Unlock()
}

// sendLoop sends the start burst, then pings at the steady rate, until the
// connection ends.
func (c *Client) sendLoop(l *link) {
	t := time.NewTimer(0)
	defer t.Stop()
	ctx := l.conn.Context()
	buf := make([]byte, 0, wire.PingReportLen+2)
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := c.sendPing(l, &buf); err != nil {
			if ctx.Err() != nil {
				return
			}
			c.log.Warn("netclock: ping not sent", "err", err)
		}
		next := c.cfg.PingInterval
		next += pingspread.Offset(uint64(n), c.cfg.PingSpread)
		if n+1 < c.cfg.BurstPings {
			next = c.cfg.BurstInterval
		}
		t.Reset(next)
	}
}

func (c *Client) sendPing(l *link, buf *[]byte) error {
	report := c.observe(l) // before T1: its cost must not sit between stamp and send
	c.mu.Lock()
	t1 := c.clock() // T1: stamped, recorded, sent; nothing slow in between
	seq := c.notePingLocked(t1)
	c.mu.Unlock()
	b := wire.AppendPing((*buf)[:0], wire.Ping{Seq: seq, ClientSend: t1, Report: report})
	if l.session.Mode == ModeStream {
		var frame [wire.PingReportLen + 2]byte
		_, err := l.pingStr.Write(wire.AppendFrame(frame[:0], b))
		return err
	}
	return l.conn.SendDatagram(b)
}

// notePingLocked records a ping sent at t1 and returns its sequence number.
func (c *Client) notePingLocked(t1 time.Duration) uint32 {
	seq := c.seq.send(t1)
	if !c.syncFromSet {
		c.syncFrom, c.syncFromSet = t1, true
	}
	c.sent++
	return seq
}

// receiveLoop reads pongs, and the server's unreliable messages, until the
// connection ends.
func (c *Client) receiveLoop(l *link, d *dispatcher) {
	buf := make([]byte, wire.MaxFrameLen+2)
	ctx := l.conn.Context()
	for {
		var b []byte
		var err error
		if l.session.Mode == ModeStream {
			b, err = wire.ReadFrame(l.pingStr, buf)
		} else {
			b, err = l.conn.ReceiveDatagram(ctx)
		}
		t4 := c.clock() // T4 first: nothing may sit between arrival and stamp
		if err != nil {
			if errors.Is(err, wire.ErrMalformed) {
				c.mu.Lock()
				c.malformed++
				c.mu.Unlock()
				l.conn.CloseWithError(codeProtocolViolation, err.Error())
			}
			return
		}
		if wire.IsMessage(b) {
			c.receiveDatagram(b, t4, d)
			continue
		}
		c.handlePong(b, t4)
	}
}

// handlePong matches a pong to its ping, feeds the sample to the
// estimator, hands the estimate to the provider, and syncs when ready.
func (c *Client) handlePong(b []byte, t4 time.Duration) {
	p, err := wire.ParsePong(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && !pongTimesInRange(p) {
		err = fmt.Errorf("%w: pong server times %d, %d out of range", wire.ErrMalformed, p.ServerReceive, p.ServerSend)
	}
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
	if t4-c.heardAt > c.silentAfter() && c.est.Estimate().Valid {
		c.resumedAt, c.resumed = t4, true
	}
	c.heardAt = t4
	if p.HasFeedback {
		c.pc.ObserveFeedback(feedbackFromWire(p.Feedback))
	}
	if c.resumed && p.ClientSend < c.resumedAt {
		// Sent before a silence ended, answered after it: the ping
		// waited out a stall (a paused or overloaded server, a frozen
		// path, this process descheduled), and its round trip measures
		// the stall, not the path. A queue of them answered at once
		// passes the estimator's stall gate for a slower path once it
		// spans 3 s of sample midpoints (a pause of about 6 s, less if
		// the server drains the queue slowly): its delays then lifted
		// the uplink estimate, and predicted time with it, by up to
		// half a second, a hard reset, held for the estimator's window.
		c.stalled++
		return
	}
	before := c.est.Stats()
	s := provider.Sample{ClientSend: p.ClientSend, ServerReceive: p.ServerReceive,
		ServerSend: p.ServerSend, ClientReceive: t4}
	if err := c.est.Observe(s); err != nil {
		c.log.Debug("netclock: sample rejected", "err", err)
		return
	}
	after := c.est.Stats()
	e := c.est.Estimate()
	c.pc.ObserveSample(s, e)
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
	c.checkDriftLocked(e)

	ready := e.Valid &&
		(after.Samples-c.syncBase >= int64(c.cfg.BurstPings) || t4-c.syncFrom >= c.cfg.SyncTimeout)
	switch {
	case c.sys.Load() == nil:
		c.pc.setEstimate(e)
		if !ready {
			return
		}
		sys, err := ticksys.New(ticksys.Config{TickRate: c.rate, Provider: c.pc, Logger: c.log})
		if err != nil { // the rate was validated in the handshake
			c.log.Error("netclock: creating the tick system", "err", err)
			return
		}
		c.sys.Store(sys)
		close(c.synced)
		c.log.Info("netclock: synced", "samples", after.Samples-c.syncBase, "offset", e.Offset, "rtt", e.RTT(),
			"error_bound", e.ErrorBound)
	case c.resyncing:
		// The System keeps the old server's timeline until the fresh
		// burst is in; then it is reinitialized on the new one.
		if !ready {
			return
		}
		c.resyncing = false
		c.log.Info("netclock: resynced with the restarted server", "samples", after.Samples-c.syncBase,
			"offset", e.Offset, "rtt", e.RTT(), "error_bound", e.ErrorBound)
		c.pc.restart(e)
		c.sys.Load().RequestReinitialize()
	default:
		c.pc.setEstimate(e)
	}
}

// driftClearRatio is the hysteresis of the drift alarm: it clears below
// this fraction of the threshold, so noise around the threshold does not
// flood the log.
const driftClearRatio = 0.9

// checkDriftLocked raises or clears the drift alarm for estimate e.
func (c *Client) checkDriftLocked(e provider.Estimate) {
	limit := c.cfg.DriftAlarmPPM
	if limit <= 0 || !e.Valid {
		return
	}
	d := math.Abs(e.DriftPPM)
	var epoch uint64
	if l := c.link.Load(); l != nil {
		epoch = l.session.Epoch
	}
	switch {
	case !c.driftAlarm && d > limit:
		c.driftAlarm = true
		c.driftAlarms++
		c.log.Warn("netclock: drift alarm: the clocks drift apart faster than the threshold",
			"epoch", epoch, "offset", e.Offset, "drift_ppm", e.DriftPPM, "threshold_ppm", limit)
	case c.driftAlarm && d < limit*driftClearRatio:
		c.driftAlarm = false
		c.log.Info("netclock: drift back below the alarm threshold",
			"epoch", epoch, "offset", e.Offset, "drift_ppm", e.DriftPPM, "threshold_ppm", limit)
	}
}

// Session returns what the current (or last) connection's handshake agreed.
func (c *Client) Session() Session {
	if l := c.link.Load(); l != nil {
		return l.session
	}
	return Session{}
}

// Synced returns a channel closed once the client is synced (the start
// burst observed, or SyncTimeout after the first ping), for good.
func (c *Client) Synced() <-chan struct{} { return c.synced }

// WaitSynced waits until the client is synced and returns its System (at
// once if it is). The error wraps ctx's, or is Err's if the client stops.
func (c *Client) WaitSynced(ctx context.Context) (*ticksys.System, error) {
	select {
	case <-c.synced:
		return c.sys.Load(), nil
	default:
	}
	select {
	case <-c.synced:
		return c.sys.Load(), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("transport: waiting for sync: %w", ctx.Err())
	case <-c.ctx.Done():
		return nil, c.Err()
	}
}

// System returns the client's tick system, nil until synced (see
// WaitSynced): the same System across reconnects.
func (c *Client) System() *ticksys.System { return c.sys.Load() }

// Provider returns the provider steering the System.
func (c *Client) Provider() *provider.Steered { return c.pc.Steered }

// Estimate returns the clock estimate, Valid once the current server
// answered.
func (c *Client) Estimate() provider.Estimate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.est.Estimate()
}

// Clock returns the client's own, unsynchronized clock (Message.Received's
// and ClientConfig.Provider's); NGO's LocalTime is the System's
// PredictedTime.
func (c *Client) Clock() time.Duration { return c.clock() }

// SharedTime returns the estimated server clock now (since tick 0), or
// false while not ClientStats.Synchronized. The System keeps ticking
// meanwhile.
func (c *Client) SharedTime() (time.Duration, bool) {
	if !c.linkUp() || c.silent() {
		return 0, false
	}
	e := c.Estimate()
	if !e.Valid {
		return 0, false
	}
	return e.ServerTime(c.clock()), true
}

// silentAfter is how long without a pong makes a connected client not
// synchronized: ten ping intervals, at least a second. Its server is dead
// or paused, or the path cut: the estimate no longer follows its clock.
func (c *Client) silentAfter() time.Duration { return max(time.Second, 10*c.cfg.PingInterval) }

// silent reports whether no pong came for silentAfter.
func (c *Client) silent() bool {
	c.mu.Lock()
	heard := c.heardAt
	c.mu.Unlock()
	return c.clock()-heard > c.silentAfter()
}

// linkUp reports whether the client's connection is up now.
func (c *Client) linkUp() bool {
	l := c.link.Load()
	return l != nil && l.conn != nil && l.conn.Context().Err() == nil
}

// Stats returns the client's synchronization state and counts.
func (c *Client) Stats() ClientStats {
	l := c.link.Load()
	c.mu.Lock()
	es := c.est.Stats()
	e := c.est.Estimate()
	st := ClientStats{
		PingsSent: c.sent, PongsReceived: c.pongs, Lost: c.seq.lost(), Duplicates: c.dups,
		Stale: c.stale, Malformed: c.malformed, Rejected: es.Rejected, Stalled: c.stalled,
		ClockJumps: es.Jumps, PathChanges: es.PathChanges,
		BytesSent: c.bytesSent, BytesReceived: c.bytesRecv,
		Reconnects: c.reconnects, ServerResets: c.resets, ReconnectFailures: c.failures, EpochChanges: c.epochs,
		Reinitializations: c.pc.reinits.Load(), DriftAlarm: c.driftAlarm, DriftAlarms: c.driftAlarms,
		MessagesSent: c.msgsSent, MessagesReceived: c.msgsRecv, MessagesDropped: c.msgsDropped,
		MalformedMessages: c.msgsBad,
	}
	live := l != nil && l.conn != nil && !l.ended // nil conn only in tests
	if live {
		qs := l.conn.ConnectionStats()
		st.BytesSent += qs.BytesSent
		st.BytesReceived += qs.BytesReceived
		st.QUICMinRTT, st.QUICSmoothedRTT = qs.MinRTT, qs.SmoothedRTT
	}
	st.Quality, st.LossRate = c.quality, c.seq.recentLoss()
	c.mu.Unlock()
	if l != nil {
		st.Mode = l.session.Mode
		st.Connected = live && l.conn.Context().Err() == nil
	}
	st.Synchronized = st.Connected && e.Valid && !c.silent()
	if !st.Connected && st.Quality > QualityPoor {
		st.Quality = QualityPoor // lost, not yet graded by connectionLost
	}
	st.RTT, st.Offset, st.ErrorBound, st.Jitter, st.DriftPPM = e.RTT(), e.Offset, e.ErrorBound, e.Jitter, e.DriftPPM
	ps := c.pc.Status()
	st.PredictedScale, st.ServerScale = ps.PredictedScale, ps.ServerScale
	if sys := c.sys.Load(); sys != nil {
		st.Resets = sys.Stats().Resets
	}
	return st
}

// Run waits for sync, then drives the System on the client clock (ticksys'
// driver) until ctx ends or the client stops, returning ctx.Err() or Err. It
// is for a client without a frame loop: never mix it with Advance.
func (c *Client) Run(ctx context.Context) error {
	select {
	case <-c.synced:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return c.Err()
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()
	err := c.sys.Load().Run(runCtx, ticksys.DriverConfig{Clock: clientClock{read: c.clock}, MaxSpin: c.cfg.MaxSpin})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case c.ctx.Err() != nil:
		return c.Err()
	}
	return err
}

// clientClock is the client clock as a ticksys.Clock, waiting with
// ticksys.SystemClock's timers.
type clientClock struct {
	ticksys.SystemClock
	read func() time.Duration
}

func (c clientClock) Now() time.Time { return time.Time{}.Add(c.read()) }

// Done returns a channel closed when the client stops: Close, the
// connection ended (without Reconnect), or reconnecting failed for good.
func (c *Client) Done() <-chan struct{} { return c.ctx.Done() }

// Err returns nil while the client runs (reconnecting included), ErrClosed
// after Close, or why it stopped (a *quic.ApplicationError with
// CodeGoingAway when the server shut down, a *quic.IdleTimeoutError, ...).
func (c *Client) Err() error {
	if c.ctx.Err() == nil {
		return nil
	}
	if c.closed.Load() {
		return ErrClosed
	}
	return context.Cause(c.ctx)
}

// Close closes the connection gracefully (or stops reconnecting), waits for
// the client's goroutines and closes the socket Dial made. Run returns,
// Messages closes; the System stays usable. Idempotent.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.cancel(ErrClosed)
		if l := c.link.Load(); l != nil && l.conn != nil {
			l.conn.CloseWithError(codeNoError, "client closing")
		}
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
