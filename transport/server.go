package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/internal/debugpage"
	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/ticksys"
)

// refuseGrace is how long a server that refused a client waits for the
// client to read the server hello and close the connection itself, before
// closing it: closing at once could discard the hello still in flight.
const refuseGrace = time.Second

// ServerStats are running counts of a Server.
type ServerStats struct {
	Clients                        int    // connected now (handshake done)
	StreamClients                  int    // of them, pinging over the stream fallback
	Accepted, Refused              int64  // handshakes; refused: version, tick rate, server full
	AdmissionRefused               int64  // attempts refused before the TLS handshake (per Initial packet: one may count twice)
	AddressValidations             int64  // attempts asked to prove their address first (a QUIC Retry)
	Connections                    int    // admitted and not ended (handshaking or connected)
	Failed                         int64  // connections dropped before a valid hello (timeout, malformed, closed)
	ALPNMismatches                 int64  // TLS handshakes failed on ALPN
	Pings, Malformed               int64  // pings answered; datagrams and frames dropped as malformed
	MessagesReceived, MessagesSent int64  // game messages, both kinds
	MessagesDropped                int64  // received, not delivered: no OnMessage, or unreliable ones faster than it returns
	BytesSent, BytesReceived       uint64 // UDP payloads of every client served, from quic-go
}

// Server is a session's authority: it owns the server clock and tick system.
type Server struct {
	cfg     ServerConfig
	log     *slog.Logger
	tr      *quic.Transport
	ownTr   bool // created by NewServer; closed by Close
	ln      *quic.Listener
	ownConn net.PacketConn // created by Listen; closed by Close
	adm     *admission
	version uint16 // the protocol version spoken
	sys     *ticksys.System
	epoch   uint64
	origin  atomic.Pointer[time.Time] // the server clock's zero; nil before Serve

	msgSubs   atomic.Pointer[[]*msgSub] // written under subMu
	subMu     sync.Mutex
	recording atomic.Bool // DebugHandler was called: keep each client's history

	mu        sync.Mutex
	conns     map[*quic.Conn]struct{} // connections being served
	byID      map[ClientID]*serverClient
	lastID    ClientID
	bytesSent uint64 // of clients gone
	bytesRecv uint64
	clients   int
	streamers int
	serving   bool
	shutdown  bool // no new connections are tracked
	closed    bool
	cancel    context.CancelFunc // stops Serve
	serveDone chan struct{}      // closed when Serve returns
	closeOnce sync.Once
	closeErr  error

	accepted, refused, failed, alpn, pings, malformed atomic.Int64
	msgsRecv, msgsSent, msgsDropped                   atomic.Int64
}

// Listen returns a Server on a UDP socket bound to addr ("host:port"; port
// 0 picks one), which Close closes.
func Listen(addr string, cfg ServerConfig) (*Server, error) {
	return listen(addr, cfg, serverHooks{})
}

// serverHooks are settings only tests change.
type serverHooks struct {
	version        uint16               // the protocol version spoken; 0 = wire.ProtocolVersion
	admissionClock func() time.Duration // the rate limiter's clock; nil = monotonic
}

func listen(addr string, cfg ServerConfig, hooks serverHooks) (*Server, error) {
	conn, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("transport: listen: %w", err)
	}
	s, err := newServer(&quic.Transport{Conn: conn, ConnectionIDLength: serverConnIDLen}, true, cfg, hooks)
	if err != nil {
		conn.Close()
		return nil, err
	}
	s.ownConn = conn
	return s, nil
}

// NewServer returns a Server on conn, which it must be the only user of
// (Close does not close it).
func NewServer(conn net.PacketConn, cfg ServerConfig) (*Server, error) {
	return newServer(&quic.Transport{Conn: conn, ConnectionIDLength: serverConnIDLen}, true, cfg, serverHooks{})
}

// serverConnIDLen is the length of the connection IDs the server issues:
// the ID leads every packet a client sends. quic-go answers with a
// stateless reset only packets longer than 42 bytes, and a ping with
// quic-go's default 4-byte ID is about 40: with 16 bytes every ping can
// draw the reset that tells a client its server restarted.
const serverConnIDLen = 16

// NewServerTransport returns a Server on tr, an unused quic.Transport, for
// settings NewServer lacks. Give tr a ConnectionIDLength of at least 12 (for
// stateless resets); its own ConnContext and VerifySourceAddress run after
// the server's admission. Close does not close tr.
func NewServerTransport(tr *quic.Transport, cfg ServerConfig) (*Server, error) {
	return newServer(tr, false, cfg, serverHooks{})
}

// newServer returns a Server on tr; own: tr is the server's to close.
func newServer(tr *quic.Transport, own bool, cfg ServerConfig, hooks serverHooks) (*Server, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	sys, err := ticksys.New(ticksys.Config{TickRate: cfg.TickRate, Provider: provider.Constant{},
		Start: cfg.Start, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	s := &Server{cfg: cfg, log: cfg.Logger, sys: sys, tr: tr, ownTr: own, conns: make(map[*quic.Conn]struct{}),
		byID: make(map[ClientID]*serverClient)}
	for s.epoch == 0 { // 0 reads as "no epoch"
		s.epoch = rand.Uint64()
	}
	s.version = wireVersion(hooks.version)
	clock := hooks.admissionClock
	if clock == nil {
		start := time.Now()
		clock = func() time.Duration { return time.Since(start) }
	}
	s.adm = newAdmission(cfg, clock)
	if tr.StatelessResetKey == nil {
		key, stable := resetKey(cfg.StatelessResetKey, cfg.TLSConfig)
		tr.StatelessResetKey = key
		if !stable {
			s.log.Warn("netclock: no stable stateless reset key (set ServerConfig.StatelessResetKey): " +
				"clients of a restarted server notice only at their idle timeout")
		}
	}
	tr.ConnContext = s.adm.connContext(tr.ConnContext)
	if user := tr.VerifySourceAddress; user != nil {
		tr.VerifySourceAddress = func(a net.Addr) bool { return user(a) || s.adm.underLoad(a) }
	} else if cfg.HandshakeRate > 0 {
		tr.VerifySourceAddress = s.adm.underLoad
	}
	s.ln, err = tr.Listen(s.tlsConfig(), serverQUICConfig(cfg.QUICConfig))
	if err != nil {
		if own {
			tr.Close()
		}
		return nil, fmt.Errorf("transport: listen: %w", err)
	}
	return s, nil
}

// tlsConfig returns the user's TLS config restricted to ALPN, with a hook
// that reports clients offering another protocol: the TLS stack refuses
// them with no_application_protocol before quic-go would tell us.
func (s *Server) tlsConfig() *tls.Config {
	c := s.cfg.TLSConfig.Clone()
	c.NextProtos = []string{ALPN}
	user := c.GetConfigForClient
	c.GetConfigForClient = func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
		if !slices.Contains(hi.SupportedProtos, ALPN) {
			s.alpn.Add(1)
			remote := ""
			if hi.Conn != nil {
				remote = hi.Conn.RemoteAddr().String()
			}
			s.log.Warn("netclock: TLS handshake refused: client does not offer ALPN "+ALPN,
				"remote", remote, "offered", hi.SupportedProtos)
		}
		if user == nil {
			return nil, nil
		}
		uc, err := user(hi)
		if uc != nil {
			uc = uc.Clone()
			uc.NextProtos = []string{ALPN}
		}
		return uc, err
	}
	return c
}

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// System returns the server's tick system, which Serve drives: subscribe
// to its events, never call its Advance.
func (s *Server) System() *ticksys.System { return s.sys }

// TickRate returns the session's tick rate, in ticks per second.
func (s *Server) TickRate() uint32 { return s.cfg.TickRate }

// Epoch returns the server's session epoch, random per run.
func (s *Server) Epoch() uint64 { return s.epoch }

// SharedTime returns the server clock now (since tick 0): what clients'
// SharedTime estimates. It is ServerConfig.Start until Serve starts it.
func (s *Server) SharedTime() time.Duration {
	o := s.origin.Load()
	if o == nil {
		return s.cfg.Start
	}
	return time.Since(*o) + s.cfg.Start
}

// Stats returns the running counts.
func (s *Server) Stats() ServerStats {
	s.mu.Lock()
	st := ServerStats{Clients: s.clients, StreamClients: s.streamers,
		BytesSent: s.bytesSent, BytesReceived: s.bytesRecv}
	for _, sc := range s.byID {
		qs := sc.conn.ConnectionStats()
		st.BytesSent += qs.BytesSent
		st.BytesReceived += qs.BytesReceived
	}
	s.mu.Unlock()
	st.Accepted, st.Refused, st.Failed = s.accepted.Load(), s.refused.Load(), s.failed.Load()
	st.AdmissionRefused, st.AddressValidations = s.adm.refused.Load(), s.adm.retries.Load()
	st.Connections, _ = s.adm.counts()
	st.ALPNMismatches, st.Pings, st.Malformed = s.alpn.Load(), s.pings.Load(), s.malformed.Load()
	st.MessagesReceived, st.MessagesSent, st.MessagesDropped = s.msgsRecv.Load(), s.msgsSent.Load(), s.msgsDropped.Load()
	return st
}

// originClock is the clock of the server's tick driver: its first reading
// is the server clock's origin, so ticks and pong timestamps share a zero
// exactly. ticksys.Run reads it from one goroutine.
type originClock struct {
	ticksys.SystemClock // its waits
	origin              time.Time
	started             bool
}

func (c *originClock) Now() time.Time {
	if !c.started {
		c.started = true
		return c.origin
	}
	return time.Now()
}

// Serve starts the server clock and tick system and serves clients until ctx
// ends or Close, returning ctx.Err() or ErrServerClosed once every
// connection and goroutine ended. It runs once.
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrServerClosed
	case s.serving:
		s.mu.Unlock()
		return errors.New("transport: Serve called twice")
	}
	s.serving = true
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	s.serveDone = make(chan struct{})
	origin := time.Now()
	s.origin.Store(&origin)
	s.mu.Unlock()
	defer close(s.serveDone)
	defer cancel()
	s.log.Info("netclock: server serving", "addr", s.Addr().String(), "tick_rate", s.cfg.TickRate,
		"epoch", s.epoch)

	var wg sync.WaitGroup
	wg.Go(func() {
		s.sys.Run(ctx, ticksys.DriverConfig{Clock: &originClock{origin: origin}, MaxSpin: s.cfg.MaxSpin})
	})
	var err error
	for {
		// Accept hands each connection to its own goroutine at once:
		// quic-go refuses handshakes that finish while its 32-slot
		// accept queue is full.
		conn, aerr := s.ln.Accept(ctx)
		if aerr != nil {
			err = aerr
			break
		}
		s.adm.handshakeDone(conn)
		if !s.track(conn) {
			conn.CloseWithError(CodeGoingAway, "server shutting down")
			continue
		}
		wg.Go(func() {
			defer s.untrack(conn)
			s.handle(ctx, conn)
		})
	}
	cancel()
	s.stopConns()
	wg.Wait()

	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return ErrServerClosed
	case parent.Err() != nil:
		return parent.Err()
	}
	return fmt.Errorf("transport: accept: %w", err)
}

// track registers a connection for shutdown; false once shutting down.
func (s *Server) track(conn *quic.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown {
		return false
	}
	s.conns[conn] = struct{}{}
	return true
}

func (s *Server) untrack(conn *quic.Conn) {
	s.mu.Lock()
	delete(s.conns, conn)
	s.mu.Unlock()
}

// stopConns closes the listener, closes the connections still in its
// accept queue, and closes every connection being served, which ends their
// goroutines.
func (s *Server) stopConns() {
	s.mu.Lock()
	s.shutdown = true
	conns := make([]*quic.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.ln.Close()
	for {
		c, err := s.ln.Accept(context.Background()) // drains, then fails
		if err != nil {
			break
		}
		c.CloseWithError(CodeGoingAway, "server shutting down")
	}
	for _, c := range conns {
		c.CloseWithError(CodeGoingAway, "server shutting down")
	}
}

// Close stops Serve, closes every connection with CodeGoingAway, and waits
// for the server's goroutines; it closes the socket if Listen made it.
// Idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		cancel, done := s.cancel, s.serveDone
		s.mu.Unlock()
		if cancel != nil {
			cancel()
			<-done
		} else {
			s.stopConns()
		}
		if s.ownTr {
			s.closeErr = s.tr.Close()
		} else {
			s.closeErr = s.ln.Close()
		}
		if s.ownConn != nil {
			if err := s.ownConn.Close(); err != nil && s.closeErr == nil {
				s.closeErr = err
			}
		}
		s.log.Info("netclock: server closed")
	})
	return s.closeErr
}

// handle runs one connection: the handshake, then the ping loop, on this
// goroutine only, so no client waits for another. The client's messages
// are read and delivered on goroutines of their own.
func (s *Server) handle(ctx context.Context, conn *quic.Conn) {
	log := s.log.With("remote", conn.RemoteAddr().String())
	if err := s.handshake(ctx, conn, log); err != nil {
		return
	}
	sc := s.register(conn, log)
	defer s.unregister(sc)
	sc.log.Info("netclock: client connected", "mode", sc.mode.String())

	var wg sync.WaitGroup
	d := newDispatcher(conn.Context(), &wg, func(m Message) { s.deliver(sc, m) })
	wg.Go(func() { s.acceptStreams(sc, &wg) })
	var err error
	if sc.mode == ModeDatagram {
		wg.Go(func() { s.refuseStreams(sc) })
		err = s.serveDatagrams(sc, d)
	} else {
		err = s.serveStream(ctx, sc, &wg)
	}
	conn.CloseWithError(codeNoError, "")
	wg.Wait()
	sc.log.Info("netclock: client disconnected", "reason", err)
}

// register gives a client that passed the handshake its ID and handle.
func (s *Server) register(conn *quic.Conn, log *slog.Logger) *serverClient {
	sc := &serverClient{conn: conn, mode: modeOf(conn), since: time.Now()}
	sc.events.Add(debugpage.Event{T: s.SharedTime().Seconds(), What: "connected, pings by " + sc.mode.String()})
	s.mu.Lock()
	s.lastID++
	sc.id = s.lastID
	sc.log = log.With("client", uint64(sc.id))
	s.byID[sc.id] = sc
	if sc.mode == ModeStream {
		s.streamers++
	}
	s.mu.Unlock()
	return sc
}

// unregister forgets a client whose connection ended.
func (s *Server) unregister(sc *serverClient) {
	qs := sc.conn.ConnectionStats()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, sc.id)
	s.bytesSent += qs.BytesSent
	s.bytesRecv += qs.BytesReceived
	s.clients--
	if sc.mode == ModeStream {
		s.streamers--
	}
}

// handshake reads the client hello, answers it, and refuses the client on a
// mismatch. On success the client is counted in s.clients.
func (s *Server) handshake(ctx context.Context, conn *quic.Conn, log *slog.Logger) error {
	fail := func(err error) error {
		s.failed.Add(1)
		log.Info("netclock: handshake failed", "err", err)
		conn.CloseWithError(codeProtocolViolation, err.Error())
		return err
	}
	hctx, cancel := context.WithTimeout(ctx, s.cfg.HelloTimeout)
	defer cancel()
	str, err := conn.AcceptStream(hctx)
	if err != nil {
		return fail(fmt.Errorf("%w: no hello stream: %w", ErrProtocol, err))
	}
	str.SetReadDeadline(time.Now().Add(s.cfg.HelloTimeout))
	hello, err := wire.ReadClientHello(str)
	// Nothing follows the hello: what a peer sends after it is discarded
	// at once rather than kept in the stream's buffer.
	str.CancelRead(streamCodeDone)
	version := s.version
	reply := wire.ServerHello{Version: version, TickRate: s.cfg.TickRate, Epoch: s.epoch}
	var why string
	switch {
	case errors.Is(err, wire.ErrVersion) || (err == nil && hello.Version != version):
		reply.Status = wire.StatusVersionMismatch
		why = fmt.Sprintf("protocol version mismatch: server speaks %d, client %d", version, hello.Version)
	case err != nil:
		return fail(fmt.Errorf("%w: reading client hello: %w", ErrProtocol, err))
	case hello.TickRate != 0 && hello.TickRate != s.cfg.TickRate:
		reply.Status = wire.StatusTickRateMismatch
		why = fmt.Sprintf("tick rate mismatch: server ticks at %d Hz, client wants %d Hz",
			s.cfg.TickRate, hello.TickRate)
	case !s.admit():
		reply.Status = wire.StatusServerFull
		why = fmt.Sprintf("server full: %d clients", s.cfg.MaxClients)
	}
	reply.ServerTime = s.SharedTime()
	_, werr := str.Write(wire.AppendServerHello(nil, reply))
	str.Close() // phase 1 sends nothing more on the control stream
	if reply.Status != wire.StatusOK {
		s.refused.Add(1)
		log.Warn("netclock: client refused", "status", reply.Status.String(), "reason", why)
		s.refuse(ctx, conn, statusCode(reply.Status), why)
		return errors.New(why)
	}
	if werr != nil {
		s.mu.Lock()
		s.clients--
		s.mu.Unlock()
		return fail(fmt.Errorf("writing server hello: %w", werr))
	}
	s.accepted.Add(1)
	return nil
}

// admit counts a client in, unless MaxClients are connected.
func (s *Server) admit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.MaxClients > 0 && s.clients >= s.cfg.MaxClients {
		return false
	}
	s.clients++
	return true
}

// refuse gives the client up to refuseGrace to read the wire.ServerHello and
// close, then closes the connection with code.
func (s *Server) refuse(ctx context.Context, conn *quic.Conn, code quic.ApplicationErrorCode, why string) {
	t := time.NewTimer(refuseGrace)
	defer t.Stop()
	select {
	case <-conn.Context().Done():
	case <-ctx.Done():
	case <-t.C:
	}
	conn.CloseWithError(code, why)
}

// serveDatagrams answers datagram pings, and queues the client's
// unreliable messages on d, until the connection closes.
func (s *Server) serveDatagrams(sc *serverClient, d *dispatcher) error {
	conn, log := sc.conn, sc.log
	out := make([]byte, 0, wire.PongFeedbackLen)
	for {
		b, err := conn.ReceiveDatagram(context.Background())
		t2 := s.SharedTime() // T2 first: nothing may sit between arrival and stamp
		if err != nil {
			return err
		}
		if wire.IsMessage(b) {
			s.receiveDatagram(sc, b, t2, d)
			continue
		}
		ping, err := wire.ParsePing(b)
		if err != nil {
			s.malformed.Add(1)
			log.Debug("netclock: dropped malformed datagram", "len", len(b), "err", err)
			continue
		}
		pong := sc.arrivals.withFeedback(wire.Pong{Seq: ping.Seq, ClientSend: ping.ClientSend, ServerReceive: t2})
		pong.ServerSend = s.SharedTime() // T3 last: right before the send
		out = wire.AppendPong(out[:0], pong)
		if err := conn.SendDatagram(out); err != nil {
			if conn.Context().Err() != nil {
				return err
			}
			log.Debug("netclock: pong not sent", "err", err)
			continue
		}
		s.pings.Add(1)
		sc.pings.Add(1)
		s.notePing(sc, ping, t2)
	}
}

// serveStream answers framed pings on the second stream the client opens,
// the fallback when datagrams were not negotiated. It starts refuseStreams
// on wg once it has that stream.
func (s *Server) serveStream(ctx context.Context, sc *serverClient, wg *sync.WaitGroup) error {
	conn, log := sc.conn, sc.log
	str, err := conn.AcceptStream(ctx)
	if err != nil {
		return err
	}
	wg.Go(func() { s.refuseStreams(sc) })
	buf := make([]byte, wire.MaxFrameLen+2)
	pongBuf := make([]byte, 0, wire.PongFeedbackLen)
	out := make([]byte, 0, wire.PongFeedbackLen+2)
	for {
		payload, err := wire.ReadFrame(str, buf)
		t2 := s.SharedTime()
		if err != nil {
			if errors.Is(err, wire.ErrMalformed) { // the stream is out of step for good
				s.malformed.Add(1)
				conn.CloseWithError(codeProtocolViolation, err.Error())
			}
			return err
		}
		ping, err := wire.ParsePing(payload)
		if err != nil {
			s.malformed.Add(1)
			log.Debug("netclock: dropped malformed frame", "len", len(payload), "err", err)
			continue
		}
		pong := sc.arrivals.withFeedback(wire.Pong{Seq: ping.Seq, ClientSend: ping.ClientSend, ServerReceive: t2})
		pong.ServerSend = s.SharedTime()
		pongBuf = wire.AppendPong(pongBuf[:0], pong)
		out = wire.AppendFrame(out[:0], pongBuf)
		if _, err := str.Write(out); err != nil {
			return err
		}
		s.pings.Add(1)
		sc.pings.Add(1)
		s.notePing(sc, ping, t2)
	}
}

// refuseStreams closes the connection if the client opens a bidirectional
// stream the protocol does not have (any after the hello, in ModeDatagram;
// any after the ping stream, in ModeStream): what a client sent on a stream
// nobody reads would sit in the server's receive window for the life of
// the connection.
func (s *Server) refuseStreams(sc *serverClient) {
	str, err := sc.conn.AcceptStream(sc.conn.Context())
	if err != nil {
		return
	}
	str.CancelRead(streamCodeDone)
	str.CancelWrite(streamCodeDone)
	s.malformed.Add(1)
	sc.log.Warn("netclock: client opened a stream the protocol does not have; connection closed")
	sc.conn.CloseWithError(codeProtocolViolation, "unexpected bidirectional stream")
}
