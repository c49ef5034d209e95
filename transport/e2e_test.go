package transport

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/ticksys"
)

// offsetError returns the estimate's error against the true offset,
// measured in this process: the server clock minus the client clock, the
// client clock read on both sides of the server clock.
func offsetError(srv *Server, c *Client) (errOff, trueOff time.Duration) {
	a := c.Clock()
	s := srv.SharedTime()
	b := c.Clock()
	mid := a + (b-a)/2
	return c.Estimate().ServerTime(mid) - s, s - mid
}

func TestEndToEnd(t *testing.T) {
	checkLeaks := goroutineBaseline(t)
	var logs logBuffer
	cert := testCert(t)
	const start = 10 * time.Second
	srv, err := Listen("127.0.0.1:0", ServerConfig{TLSConfig: cert.ServerTLS(), TickRate: 60, Start: start,
		Logger: logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	serverTicks := make(chan ticksys.TickEvent, 256)
	srv.System().OnNetworkTick(func(ev ticksys.TickEvent) {
		select {
		case serverTicks <- ev:
		default:
		}
	})
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(context.Background()) }()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, srv.Addr().String(), ClientConfig{TLSConfig: cert.ClientTLS(), Logger: logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	sess := c.Session()
	if sess.TickRate != 60 || sess.Epoch != srv.Epoch() || sess.Epoch == 0 || sess.Mode != ModeDatagram {
		t.Errorf("session %+v, want 60 Hz, epoch %d, datagram mode", sess, srv.Epoch())
	}
	if sess.HelloTime < start {
		t.Errorf("hello server time %v before the server's start %v", sess.HelloTime, start)
	}
	if c.System() != nil {
		select {
		case <-c.Synced():
		default:
			t.Error("System exists before Synced closed")
		}
	}
	await(t, c.Synced(), 5*time.Second, "sync")
	if c.System() == nil || c.System().TickRate() != 60 {
		t.Fatalf("synced System %v, want one at 60 Hz", c.System())
	}

	errOff, trueOff := offsetError(srv, c)
	e := c.Estimate()
	t.Logf("after sync: true offset %v, estimate error %v, RTT %v, error bound %v",
		trueOff, errOff, e.RTT(), e.ErrorBound)
	if abs(errOff) > 5*time.Millisecond {
		t.Errorf("offset error %v after sync, want under 5ms on loopback", errOff)
	}

	// The client ticks in step with the server: a predicted tick starts
	// ahead of the server clock by the uplink plus the server buffer (two
	// ticks), less however late the callback runs.
	leads := make(chan time.Duration, 256)
	c.System().OnNetworkTick(func(ev ticksys.TickEvent) {
		select {
		case leads <- ev.Predicted.Duration() - srv.SharedTime():
		default:
		}
	})
	runCtx, stopRun := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(runCtx) }()
	var got []time.Duration
	for len(got) < 30 {
		got = append(got, await(t, leads, 5*time.Second, "client ticks"))
	}
	slices.Sort(got)
	tick := time.Second / 60
	if med := got[len(got)/2]; med < -tick || med > 4*tick {
		t.Errorf("median predicted lead %v over the server clock, want about 2 ticks (%v)", med, 2*tick)
	}
	t.Logf("predicted lead over the server clock: min %v, median %v, max %v", got[0], got[len(got)/2], got[len(got)-1])
	await(t, serverTicks, 5*time.Second, "server ticks")

	// Still accurate after a few seconds of steady pings.
	eventually(t, 10*time.Second, "30 pongs", func() bool { return c.Stats().PongsReceived >= 30 })
	errOff, _ = offsetError(srv, c)
	st := c.Stats()
	t.Logf("stats: %+v", st)
	t.Logf("offset error %v after %d samples", errOff, st.PongsReceived)
	if abs(errOff) > 5*time.Millisecond {
		t.Errorf("offset error %v, want under 5ms", errOff)
	}
	if st.Mode != ModeDatagram || st.PingsSent < st.PongsReceived || st.Malformed != 0 || st.Stale != 0 ||
		st.QUICMinRTT <= 0 || st.QUICSmoothedRTT <= 0 || st.RTT <= 0 || st.PredictedScale == 0 {
		t.Errorf("implausible stats %+v", st)
	}
	if ss := srv.Stats(); ss.Clients != 1 || ss.Accepted != 1 || ss.Pings < st.PongsReceived || ss.Malformed != 0 {
		t.Errorf("server stats %+v", ss)
	}

	stopRun()
	if err := await(t, runErr, 5*time.Second, "Run to return"); !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}

	// The server shutting down tells the client why.
	if err := srv.Close(); err != nil {
		t.Errorf("server Close: %v", err)
	}
	if err := await(t, serveErr, 5*time.Second, "Serve to return"); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve = %v, want ErrServerClosed", err)
	}
	await(t, c.Done(), 5*time.Second, "client to see the server close")
	var ae *quic.ApplicationError
	if err := c.Err(); !errors.As(err, &ae) || ae.ErrorCode != CodeGoingAway {
		t.Errorf("client Err = %v, want an application error with CodeGoingAway", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("client Close: %v", err)
	}
	if err := c.Err(); !errors.Is(err, ErrClosed) {
		t.Errorf("Err after Close = %v, want ErrClosed", err)
	}
	for _, want := range []string{"netclock: client connected", "netclock: synced", "netclock: server closed"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	checkLeaks()
}

func TestClientCloseLeavesNothing(t *testing.T) {
	checkLeaks := goroutineBaseline(t)
	cert := testCert(t)
	srv, err := Listen("127.0.0.1:0", ServerConfig{TLSConfig: cert.ServerTLS()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ctx) }()
	var clients []*Client
	for range 3 {
		c, err := Dial(context.Background(), srv.Addr().String(), ClientConfig{TLSConfig: cert.ClientTLS()})
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	for _, c := range clients {
		await(t, c.Synced(), 5*time.Second, "sync")
	}
	clients[0].Close()
	eventually(t, 5*time.Second, "the server to drop the closed client", func() bool { return srv.Stats().Clients == 2 })
	// Cancelling Serve's context closes the remaining connections too.
	cancel()
	if err := await(t, serveErr, 5*time.Second, "Serve"); !errors.Is(err, context.Canceled) {
		t.Errorf("Serve = %v, want context.Canceled", err)
	}
	for _, c := range clients[1:] {
		await(t, c.Done(), 5*time.Second, "client to see the server go")
		c.Close()
	}
	srv.Close()
	checkLeaks()
}

func TestStreamFallback(t *testing.T) {
	srv := startServer(t, ServerConfig{})
	c, err := dialTest(t, srv, ClientConfig{DisableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	if m := c.Session().Mode; m != ModeStream {
		t.Fatalf("mode %v, want stream", m)
	}
	await(t, c.Synced(), 5*time.Second, "sync")
	errOff, _ := offsetError(srv, c)
	t.Logf("stream mode: offset error %v, RTT %v", errOff, c.Estimate().RTT())
	if abs(errOff) > 5*time.Millisecond {
		t.Errorf("offset error %v, want under 5ms", errOff)
	}
	if st := c.Stats(); st.Mode != ModeStream || st.PongsReceived < defaultBurstPings {
		t.Errorf("client stats %+v", st)
	}
	if ss := srv.Stats(); ss.StreamClients != 1 || ss.Clients != 1 {
		t.Errorf("server stats %+v, want one stream client", ss)
	}
}

func TestTickRateMismatch(t *testing.T) {
	srv := startServer(t, ServerConfig{TickRate: 60})
	_, err := dialTest(t, srv, ClientConfig{TickRate: 128})
	if !errors.Is(err, ErrTickRateMismatch) {
		t.Fatalf("Dial = %v, want ErrTickRateMismatch", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "60 Hz") || !strings.Contains(msg, "128 Hz") {
		t.Errorf("error %q does not name both rates", msg)
	}
	t.Logf("error: %v", err)
	eventually(t, 5*time.Second, "the refusal in the server's stats", func() bool { return srv.Stats().Refused == 1 })

	// AcceptServerRate takes the server's rate instead.
	c, err := dialTest(t, srv, ClientConfig{TickRate: 128, AcceptServerRate: true})
	if err != nil {
		t.Fatalf("Dial with AcceptServerRate: %v", err)
	}
	await(t, c.Synced(), 5*time.Second, "sync")
	if r := c.System().TickRate(); r != 60 || c.Session().TickRate != 60 {
		t.Errorf("client runs at %d Hz, want the server's 60", r)
	}
	// Asking for the server's own rate is fine.
	if _, err := dialTest(t, srv, ClientConfig{TickRate: 60}); err != nil {
		t.Errorf("Dial at the server's rate: %v", err)
	}
}

func TestVersionMismatch(t *testing.T) {
	t.Run("client newer", func(t *testing.T) {
		srv := startServer(t, ServerConfig{})
		_, err := dialTestVersion(t, srv, ClientConfig{}, 2)
		if !errors.Is(err, ErrVersionMismatch) {
			t.Fatalf("Dial = %v, want ErrVersionMismatch", err)
		}
		t.Logf("error: %v", err)
		eventually(t, 5*time.Second, "the refusal in the server's stats", func() bool { return srv.Stats().Refused == 1 })
	})
	t.Run("server newer", func(t *testing.T) {
		srv := startServerHooks(t, ServerConfig{}, serverHooks{version: 2})
		_, err := dialTest(t, srv, ClientConfig{})
		if !errors.Is(err, ErrVersionMismatch) {
			t.Fatalf("Dial = %v, want ErrVersionMismatch", err)
		}
		t.Logf("error: %v", err)
	})
}

func TestServerFull(t *testing.T) {
	srv := startServer(t, ServerConfig{MaxClients: 1})
	if _, err := dialTest(t, srv, ClientConfig{}); err != nil {
		t.Fatal(err)
	}
	_, err := dialTest(t, srv, ClientConfig{})
	if !errors.Is(err, ErrServerFull) {
		t.Fatalf("second Dial = %v, want ErrServerFull", err)
	}
}

func TestWrongALPN(t *testing.T) {
	t.Run("foreign client", func(t *testing.T) {
		var logs logBuffer
		srv := startServer(t, ServerConfig{Logger: logs.logger()})
		tlsConf := testCert(t).ClientTLS()
		tlsConf.NextProtos = []string{"h3"}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := quic.DialAddr(ctx, srv.Addr().String(), tlsConf, nil)
		if err == nil {
			conn.CloseWithError(0, "")
			t.Fatal("a client offering only h3 connected")
		}
		t.Logf("foreign client's error: %v", err)
		if !isALPNError(err) || !strings.Contains(err.Error(), "no application protocol") {
			t.Errorf("error %v, want a TLS no_application_protocol alert", err)
		}
		eventually(t, 5*time.Second, "the mismatch in the server's stats", func() bool {
			return srv.Stats().ALPNMismatches == 1
		})
		if !strings.Contains(logs.String(), `client does not offer ALPN netclock/1" remote=127.0.0.1`) ||
			!strings.Contains(logs.String(), "offered=[h3]") {
			t.Errorf("server log lacks the ALPN refusal:\n%s", logs.String())
		}
	})
	t.Run("foreign server", func(t *testing.T) {
		tlsConf := testCert(t).ServerTLS()
		tlsConf.NextProtos = []string{"h3"}
		ln, err := quic.ListenAddr("127.0.0.1:0", tlsConf, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = Dial(ctx, ln.Addr().String(), ClientConfig{TLSConfig: testCert(t).ClientTLS()})
		if !errors.Is(err, ErrALPN) {
			t.Fatalf("Dial = %v, want ErrALPN", err)
		}
		t.Logf("client's error: %v", err)
	})
}

// TestMalformedDatagrams sends garbage from a raw QUIC connection that did
// the handshake; the server counts and drops it, keeps answering that
// connection, and another client never notices.
func TestMalformedDatagrams(t *testing.T) {
	srv := startServer(t, ServerConfig{})
	good, err := dialTest(t, srv, ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	await(t, good.Synced(), 5*time.Second, "sync")

	raw := rawClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	ping := wire.AppendPing(nil, wire.Ping{Seq: 1, ClientSend: 5})
	garbage := [][]byte{
		{},
		{0xff},
		ping[:wire.PingLen-1],
		append(ping[:wire.PingLen:wire.PingLen], 0),
		{2, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5}, // a pong's type
		{1, 9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5}, // version 9
		wire.AppendPong(nil, wire.Pong{}),
		[]byte(strings.Repeat("x", 1000)),
	}
	before := good.Stats().PongsReceived
	for _, g := range garbage {
		if err := raw.SendDatagram(g); err != nil {
			t.Fatalf("sending %d bytes: %v", len(g), err)
		}
	}
	eventually(t, 5*time.Second, "the server to count the garbage", func() bool {
		return srv.Stats().Malformed == int64(len(garbage))
	})
	// The raw connection still gets pongs for valid pings (datagrams can
	// be lost, so retry).
	var pong wire.Pong
	for attempt := 0; ; attempt++ {
		if err := raw.SendDatagram(ping); err != nil {
			t.Fatal(err)
		}
		rctx, rcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		b, err := raw.ReceiveDatagram(rctx)
		rcancel()
		if err == nil {
			if pong, err = wire.ParsePong(b); err != nil {
				t.Fatal(err)
			}
			break
		}
		if attempt == 5 {
			t.Fatalf("no pong after the garbage: %v", err)
		}
	}
	if pong.Seq != 1 || pong.ClientSend != 5 || pong.ServerSend < pong.ServerReceive {
		t.Errorf("pong %+v", pong)
	}
	// The other client kept syncing, and saw none of it.
	eventually(t, 5*time.Second, "the good client's pongs", func() bool {
		return good.Stats().PongsReceived >= before+5
	})
	if st := good.Stats(); st.Malformed != 0 || st.Stale != 0 || st.Rejected != 0 {
		t.Errorf("good client disturbed: %+v", st)
	}
	if errOff, _ := offsetError(srv, good); abs(errOff) > 5*time.Millisecond {
		t.Errorf("good client's offset error %v", errOff)
	}
}

func TestHelloTimeout(t *testing.T) {
	srv := startServer(t, ServerConfig{HelloTimeout: 100 * time.Millisecond})
	tlsConf := testCert(t).ClientTLS()
	tlsConf.NextProtos = []string{ALPN}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := quic.DialAddr(ctx, srv.Addr().String(), tlsConf, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Say nothing: the server gives up and says why.
	await(t, raw.Context().Done(), 5*time.Second, "the server to close the silent connection")
	var ae *quic.ApplicationError
	if err := context.Cause(raw.Context()); !errors.As(err, &ae) || ae.ErrorCode != codeProtocolViolation {
		t.Errorf("connection closed with %v, want codeProtocolViolation", err)
	}
	if ss := srv.Stats(); ss.Failed != 1 {
		t.Errorf("server stats %+v, want one failed", ss)
	}
}

func TestConfigErrors(t *testing.T) {
	if _, err := Listen("127.0.0.1:0", ServerConfig{}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Listen without TLS = %v, want ErrInvalidConfig", err)
	}
	cert := testCert(t)
	if _, err := Listen("127.0.0.1:0", ServerConfig{TLSConfig: cert.ServerTLS(), TickRate: 2_000_000}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Listen at 2 MHz = %v, want ErrInvalidConfig", err)
	}
	ctx := context.Background()
	if _, err := Dial(ctx, "127.0.0.1:1", ClientConfig{PingInterval: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Dial with negative interval = %v, want ErrInvalidConfig", err)
	}
	if _, err := Dial(ctx, "127.0.0.1:1", ClientConfig{Provider: provider.SteeredConfig{MaxScaleDeviation: 0.9}}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Dial with a bad provider config = %v, want ErrInvalidConfig", err)
	}
}

func TestDevCertificatePins(t *testing.T) {
	a, b := testCert(t), mustDevCert(t)
	srv := startServer(t, ServerConfig{TLSConfig: b.ServerTLS()})
	// A client pinning another certificate refuses the server.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := Dial(ctx, srv.Addr().String(), ClientConfig{TLSConfig: a.ClientTLS()})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("Dial pinning another certificate = %v, want a certificate error", err)
	}
	// Without a TLS config the system roots don't know it either.
	if _, err := Dial(ctx, srv.Addr().String(), ClientConfig{}); err == nil {
		t.Fatal("Dial with the system roots accepted a self-signed certificate")
	}
	c, err := Dial(ctx, srv.Addr().String(), ClientConfig{TLSConfig: b.ClientTLS()})
	if err != nil {
		t.Fatalf("Dial pinning the server's certificate: %v", err)
	}
	c.Close()
}

func mustDevCert(t *testing.T) DevCert {
	t.Helper()
	c, err := DevCertificate("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return c
}
