package transport

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/ticksys"
)

// serveAt listens on addr and serves; stop closes the server (also at the
// end of the test) and checks how Serve ended.
func serveAt(t *testing.T, addr string, cfg ServerConfig) (srv *Server, stop func()) {
	t.Helper()
	if cfg.TLSConfig == nil {
		cfg.TLSConfig = testCert(t).ServerTLS()
	}
	srv, err := Listen(addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			srv.Close()
			if err := <-done; !errors.Is(err, ErrServerClosed) {
				t.Errorf("Serve = %v, want ErrServerClosed", err)
			}
		})
	}
	t.Cleanup(stop)
	return srv, stop
}

// reconnectConfig reconnects fast: short backoff, and a dead server
// noticed within 300 ms of each attempt.
func reconnectConfig(logs *logBuffer) ClientConfig {
	return ClientConfig{
		TLSConfig:    testCertShared.ClientTLS(),
		Reconnect:    true,
		ReconnectMin: 20 * time.Millisecond,
		ReconnectMax: 200 * time.Millisecond,
		QUICConfig:   &quic.Config{HandshakeIdleTimeout: 300 * time.Millisecond},
		Logger:       logs.logger(),
	}
}

var testCertShared DevCert

// runClient runs c's driver loop until the test's end.
func runClient(t *testing.T, c *Client) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// driveClient advances c's System until the test's end, the way driver
// says: "Client.Run", "System.Run" (the driver on the system clock), or
// "game loop" (System.Advance from a loop of the caller's). stop ends
// the driver (also at the test's end).
func driveClient(t *testing.T, c *Client, driver string) (stop func()) {
	t.Helper()
	if driver == "Client.Run" {
		runClient(t, c) // c.Close ends it
		return func() {}
	}
	sys := c.System()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	switch driver {
	case "System.Run":
		go func() { done <- sys.Run(ctx, ticksys.DriverConfig{}) }()
	case "game loop":
		go func() {
			tk := time.NewTicker(5 * time.Millisecond)
			defer tk.Stop()
			last := time.Now()
			for {
				select {
				case <-ctx.Done():
					done <- ctx.Err()
					return
				case now := <-tk.C:
					sys.Advance(now.Sub(last))
					last = now
				}
			}
		}()
	default:
		t.Fatalf("unknown driver %q", driver)
	}
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// resetRecorder collects a System's reset events.
type resetRecorder struct {
	mu     sync.Mutex
	events []ticksys.ResetEvent
	ch     chan ticksys.ResetEvent
}

func recordResets(sys *ticksys.System) *resetRecorder {
	r := &resetRecorder{ch: make(chan ticksys.ResetEvent, 64)}
	sys.OnReset(func(ev ticksys.ResetEvent) {
		r.mu.Lock()
		r.events = append(r.events, ev)
		r.mu.Unlock()
		r.ch <- ev
	})
	return r
}

// reasons returns the reasons of the resets but stalls, which only say
// that the machine was too busy to run a frame for 250 ms.
func (r *resetRecorder) reasons() []ticksys.Reason {
	r.mu.Lock()
	defer r.mu.Unlock()
	var rs []ticksys.Reason
	for _, ev := range r.events {
		if ev.Reason != ticksys.ReasonStall {
			rs = append(rs, ev.Reason)
		}
	}
	return rs
}

// checkConverged waits for the client's offset error against srv to be
// under 5 ms, and its System's predicted time to lead srv's clock by
// about its buffers (within [-1, +4] ticks).
func checkConverged(t *testing.T, srv *Server, c *Client) {
	t.Helper()
	var errOff time.Duration
	eventually(t, 5*time.Second, "the offset to converge", func() bool {
		errOff, _ = offsetError(srv, c)
		return abs(errOff) < 5*time.Millisecond
	})
	tick := time.Second / time.Duration(srv.TickRate())
	var lead time.Duration
	eventually(t, 5*time.Second, "the System to follow the server", func() bool {
		lead = c.System().PredictedTime().Duration() - srv.SharedTime()
		return lead > -tick && lead < 4*tick
	})
	t.Logf("offset error %v, predicted lead %v", errOff, lead)
}

// TestReconnectServerRestart restarts the server on the same port with a
// new epoch and another clock (Start), at once or after a while: the
// client redials with backoff, reports one reinitialize reset, and
// converges on the new clock; its System and subscriptions survive. The
// same events whatever advances the System: Client.Run, System.Run, or a
// game loop calling System.Advance.
func TestReconnectServerRestart(t *testing.T) {
	testCertShared = testCert(t)
	for _, tc := range []struct {
		name      string
		failuresB int64  // failed redials before the new server starts
		driver    string // see driveClient
	}{
		{"restart at once", 0, "Client.Run"},
		{"down for a while", 3, "Client.Run"},
		{"restart at once, System.Run", 0, "System.Run"},
		{"restart at once, game loop", 0, "game loop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks := goroutineBaseline(t)
			var logs logBuffer
			srv1, stop1 := serveAt(t, "127.0.0.1:0", ServerConfig{Start: 10 * time.Second})
			addr := srv1.Addr().String()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := Dial(ctx, addr, reconnectConfig(&logs))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			await(t, c.Synced(), 5*time.Second, "sync")
			sys := c.System()
			resets := recordResets(sys)
			stopDriver := driveClient(t, c, tc.driver)
			checkConverged(t, srv1, c)
			epoch1 := c.Session().Epoch

			stop1()
			if tc.failuresB > 0 {
				eventually(t, 10*time.Second, "failed redials", func() bool {
					return c.Stats().ReconnectFailures >= tc.failuresB
				})
				st := c.Stats()
				if st.Connected || st.Synchronized || c.Err() != nil {
					t.Fatalf("while the server is down: connected %v, synchronized %v, Err %v",
						st.Connected, st.Synchronized, c.Err())
				}
				if _, ok := c.SharedTime(); ok {
					t.Error("SharedTime valid while the server is down")
				}
				if err := c.Send(Message{Payload: []byte("x")}); !errors.Is(err, ErrNotConnected) {
					t.Errorf("send while down = %v, want ErrNotConnected", err)
				}
				select {
				case <-c.Done():
					t.Fatal("client stopped while reconnecting")
				default:
				}
			}
			srv2, stop2 := serveAt(t, addr, ServerConfig{Start: 1000 * time.Second})
			got := make(chan Message, 8)
			srv2.OnMessage(func(_ ClientID, m Message) { got <- m })

			// A stall (the machine too busy to run a frame for 250 ms) is
			// no part of the restart: skip it.
			ev := await(t, resets.ch, 10*time.Second, "the reinitialize reset")
			for ev.Reason == ticksys.ReasonStall {
				ev = await(t, resets.ch, 10*time.Second, "the reinitialize reset")
			}
			if ev.Reason != ticksys.ReasonReinitialize {
				t.Fatalf("reset %+v, want ReasonReinitialize", ev)
			}
			t.Logf("reset: server time %v → %v, %d ticks", ev.OldServer, ev.NewServer, ev.Skipped)
			if d := ev.NewServer.Duration() - srv2.SharedTime(); d > 0 || d < -time.Second {
				t.Errorf("new server time %v, want just behind the new server's %v", ev.NewServer, srv2.SharedTime())
			}
			checkConverged(t, srv2, c)
			if c.System() != sys {
				t.Error("the System changed")
			}
			st := c.Stats()
			t.Logf("stats: reconnects %d, failures %d, epoch changes %d, reinitializations %d",
				st.Reconnects, st.ReconnectFailures, st.EpochChanges, st.Reinitializations)
			type counts struct{ Reconnects, EpochChanges, Reinitializations int64 }
			if d := cmp.Diff(counts{1, 1, 1}, counts{st.Reconnects, st.EpochChanges, st.Reinitializations}); d != "" {
				t.Errorf("stats (-want +got):\n%s", d)
			}
			if st.ReconnectFailures < tc.failuresB || !st.Connected {
				t.Errorf("failures %d (want ≥ %d), connected %v", st.ReconnectFailures, tc.failuresB, st.Connected)
			}
			if s := c.Session(); s.Epoch != srv2.Epoch() || s.Epoch == epoch1 {
				t.Errorf("session epoch %d, want the new server's %d", s.Epoch, srv2.Epoch())
			}
			if d := cmp.Diff([]ticksys.Reason{ticksys.ReasonReinitialize}, resets.reasons()); d != "" {
				t.Errorf("resets (-want +got):\n%s", d)
			}
			// Messages flow on the new connection.
			if err := c.Send(Message{Stamp: nettime.New(60, time.Second), Payload: []byte("again"), Reliable: true}); err != nil {
				t.Fatal(err)
			}
			if m := await(t, got, 5*time.Second, "a message on the new connection"); string(m.Payload) != "again" {
				t.Errorf("got %q", m.Payload)
			}
			for _, want := range []string{"connection lost; reconnecting", "netclock: reconnected", "server_restarted=true",
				"resynced with the restarted server", "reinitializing the system"} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("log lacks %q:\n%s", want, logs.String())
				}
			}
			stopDriver()
			c.Close()
			stop2()
			checkLeaks()
		})
	}
}

// blackholeConn drops every datagram both ways while drop is set.
type blackholeConn struct {
	net.PacketConn // the interface: hides *net.UDPConn's other methods
	drop           atomic.Bool
}

func (b *blackholeConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	if b.drop.Load() {
		return len(p), nil
	}
	return b.PacketConn.WriteTo(p, addr)
}

func (b *blackholeConn) ReadFrom(p []byte) (int, net.Addr, error) {
	for {
		n, addr, err := b.PacketConn.ReadFrom(p)
		if err != nil || !b.drop.Load() {
			return n, addr, err
		}
	}
}

// TestReconnectSameServer cuts the network until the connection idles out:
// the client redials the same server, sees the same epoch, and keeps its
// estimate: no reset, no resync.
func TestReconnectSameServer(t *testing.T) {
	t.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true") // a wrapped socket, on purpose
	testCertShared = testCert(t)
	checkLeaks := goroutineBaseline(t)
	var logs logBuffer
	srv, stop := serveAt(t, "127.0.0.1:0", ServerConfig{Start: time.Minute})
	udp, err := net.ListenUDP("udp4", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	bh := &blackholeConn{PacketConn: udp}
	cfg := reconnectConfig(&logs)
	cfg.QUICConfig.MaxIdleTimeout = 500 * time.Millisecond
	cfg.QUICConfig.KeepAlivePeriod = 100 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := DialConn(ctx, bh, srv.Addr(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	await(t, c.Synced(), 5*time.Second, "sync")
	resets := recordResets(c.System())
	runClient(t, c)
	checkConverged(t, srv, c)
	before := c.Stats()

	bh.drop.Store(true)
	eventually(t, 5*time.Second, "the connection to idle out", func() bool { return !c.Stats().Connected })
	if err := c.Send(Message{Payload: []byte("x"), Reliable: true}); !errors.Is(err, ErrNotConnected) {
		t.Errorf("send while disconnected = %v, want ErrNotConnected", err)
	}
	eventually(t, 5*time.Second, "a failed redial", func() bool { return c.Stats().ReconnectFailures >= 1 })
	if e := c.Estimate(); !e.Valid {
		t.Error("estimate lost while reconnecting to the same server")
	}
	bh.drop.Store(false)
	eventually(t, 5*time.Second, "the reconnect", func() bool { return c.Stats().Connected })
	eventually(t, 5*time.Second, "new pongs", func() bool { return c.Stats().PongsReceived > before.PongsReceived+10 })
	checkConverged(t, srv, c)
	st := c.Stats()
	if st.Reconnects != 1 || st.EpochChanges != 0 || st.Reinitializations != 0 {
		t.Errorf("stats %+v, want one reconnect and no epoch change", st)
	}
	if len(resets.reasons()) != 0 {
		t.Errorf("resets %v, want none", resets.reasons())
	}
	if !strings.Contains(logs.String(), "server_restarted=false") || strings.Contains(logs.String(), "resynced") {
		t.Errorf("log:\n%s", logs.String())
	}
	c.Close()
	stop()
	checkLeaks()
}

// TestReconnectClose closes a reconnecting client in its backoff and in a
// redial that would hang: Close returns at once and leaves nothing behind.
func TestReconnectClose(t *testing.T) {
	testCertShared = testCert(t)
	for _, tc := range []struct {
		name      string
		backoff   time.Duration
		handshake time.Duration // of each redial to the dead server
		waitFor   string        // in the log before closing
	}{
		{"in backoff", time.Hour, time.Second, "netclock: reconnecting"},
		{"while redialing", time.Millisecond, time.Hour, "netclock: redialing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks := goroutineBaseline(t)
			var logs logBuffer
			srv, stop := serveAt(t, "127.0.0.1:0", ServerConfig{})
			cfg := reconnectConfig(&logs)
			cfg.ReconnectMin, cfg.ReconnectMax = tc.backoff, tc.backoff
			cfg.QUICConfig.HandshakeIdleTimeout = tc.handshake
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := Dial(ctx, srv.Addr().String(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			await(t, c.Synced(), 5*time.Second, "sync")
			runErr := make(chan error, 1)
			go func() { runErr <- c.Run(context.Background()) }()
			stop()
			eventually(t, 5*time.Second, tc.waitFor, func() bool { return strings.Contains(logs.String(), tc.waitFor) })

			start := time.Now()
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("Close took %v", d)
			}
			if err := await(t, runErr, time.Second, "Run to return"); !errors.Is(err, ErrClosed) {
				t.Errorf("Run = %v, want ErrClosed", err)
			}
			if err := c.Err(); !errors.Is(err, ErrClosed) {
				t.Errorf("Err = %v, want ErrClosed", err)
			}
			if _, ok := <-c.Messages(); ok {
				t.Error("Messages still open")
			}
			checkLeaks()
		})
	}
}

// TestReconnectPermanentFailure restarts the server at another tick rate:
// the client's System cannot follow, so it stops with the reason.
func TestReconnectPermanentFailure(t *testing.T) {
	testCertShared = testCert(t)
	var logs logBuffer
	srv1, stop1 := serveAt(t, "127.0.0.1:0", ServerConfig{TickRate: 60})
	addr := srv1.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr, reconnectConfig(&logs))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	await(t, c.Synced(), 5*time.Second, "sync")
	stop1()
	serveAt(t, addr, ServerConfig{TickRate: 30})
	await(t, c.Done(), 10*time.Second, "the client to give up")
	if err := c.Err(); !errors.Is(err, ErrTickRateMismatch) {
		t.Errorf("Err = %v, want ErrTickRateMismatch", err)
	}
	if !strings.Contains(logs.String(), "reconnecting failed for good") {
		t.Errorf("log:\n%s", logs.String())
	}
}
