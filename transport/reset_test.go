package transport

import (
	"context"
	"crypto/rand"
	"net"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/testutils/simnet"

	"github.com/netclock/netclock/ticksys"
)

// TestResetKeyDerivation: the default key is stable for one certificate,
// differs between certificates, and a configured key wins.
func TestResetKeyDerivation(t *testing.T) {
	a, b := testCert(t), mustDevCert(t)
	ka, stable := resetKey(nil, a.ServerTLS())
	ka2, _ := resetKey(nil, a.ServerTLS())
	kb, _ := resetKey(nil, b.ServerTLS())
	if !stable || *ka != *ka2 || *ka == *kb {
		t.Errorf("derived keys: stable %v, same cert equal %v, other cert equal %v", stable, *ka == *ka2, *ka == *kb)
	}
	var mine quic.StatelessResetKey
	rand.Read(mine[:])
	if k, stable := resetKey(&mine, a.ServerTLS()); k != &mine || !stable {
		t.Error("the configured key was not used")
	}
	if _, stable := resetKey(nil, nil); stable {
		t.Error("a random key reported stable")
	}
}

// TestServerKilledAndRestarted kills a server without a word to its
// clients (its socket goes dark, as under kill -9) and starts another on
// the same address with the same reset key: the client's next packet
// draws a stateless reset, so the client knows at once, reports not
// synchronized, reconnects and reinitializes on the new clock.
func TestServerKilledAndRestarted(t *testing.T) {
	t.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true") // a wrapped socket, on purpose
	testCertShared = testCert(t)
	checkLeaks := goroutineBaseline(t)
	var key quic.StatelessResetKey
	rand.Read(key[:])

	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dark := &blackholeConn{PacketConn: udp}
	srv1, err := NewServer(dark, ServerConfig{TLSConfig: testCertShared.ServerTLS(), StatelessResetKey: &key,
		Start: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	go srv1.Serve(context.Background())
	addr := udp.LocalAddr().String()

	var logs logBuffer
	cfg := reconnectConfig(&logs)
	// The idle timeout is far longer than the test: only a reset can end
	// the old connection in time.
	cfg.QUICConfig.MaxIdleTimeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	await(t, c.Synced(), 5*time.Second, "sync")
	resets := recordResets(c.System())
	runClient(t, c)
	if st := c.Stats(); !st.Synchronized {
		t.Fatalf("synced client reports not synchronized: %+v", st)
	}

	// Kill: nothing in or out, then the socket is gone.
	dark.drop.Store(true)
	srv1.Close()
	udp.Close()
	srv2, stop2 := serveAt(t, addr, ServerConfig{StatelessResetKey: &key, Start: 1000 * time.Second})

	defer func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	}()
	ev := await(t, resets.ch, 5*time.Second, "the reinitialize reset")
	if ev.Reason != ticksys.ReasonReinitialize {
		t.Fatalf("reset %+v, want ReasonReinitialize", ev)
	}
	st := c.Stats()
	if st.ServerResets != 1 || st.EpochChanges != 1 || st.Reinitializations != 1 {
		t.Errorf("server resets %d, epoch changes %d, reinitializations %d; want 1 each",
			st.ServerResets, st.EpochChanges, st.Reinitializations)
	}
	checkConverged(t, srv2, c)
	if st := c.Stats(); !st.Synchronized {
		t.Errorf("not synchronized with the new server: %+v", st)
	}
	c.Close()
	stop2()
	checkLeaks()
}

// cutRouter drops every packet while cut is set.
type cutRouter struct {
	simnet.PerfectRouter
	cut atomic.Bool
}

func (r *cutRouter) SendPacket(p simnet.Packet) error {
	if r.cut.Load() {
		return nil
	}
	return r.PerfectRouter.SendPacket(p)
}

// TestSilentServer cuts the path, in virtual time, for less than the idle
// timeout: the client stays connected but says it is not synchronized
// once a second has passed without a pong, and is synchronized again with
// the first pong after the path is back.
func TestSilentServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		router := &cutRouter{}
		epoch := time.Now()
		clock := func() time.Duration { return time.Since(epoch) }
		p := newSimPair(t, router, 10*time.Millisecond, 10*time.Millisecond, ServerConfig{}, clock)
		c := p.c
		<-c.Synced()
		time.Sleep(time.Second)
		state := func() [3]bool {
			st := c.Stats()
			_, ok := c.SharedTime()
			return [3]bool{st.Connected, st.Synchronized, ok}
		}
		if s := state(); s != [3]bool{true, true, true} {
			t.Fatalf("before the cut: connected, synchronized, SharedTime ok = %v", s)
		}
		router.cut.Store(true)
		time.Sleep(900 * time.Millisecond) // virtual: under a second of silence
		if s := state(); s != [3]bool{true, true, true} {
			t.Errorf("0.9 s into the cut: %v, want all true", s)
		}
		time.Sleep(200 * time.Millisecond)
		if s := state(); s != [3]bool{true, false, false} {
			t.Errorf("1.1 s into the cut: connected, synchronized, SharedTime ok = %v; want true, false, false", s)
		}
		router.cut.Store(false)
		time.Sleep(300 * time.Millisecond) // a ping and its pong
		if s := state(); s != [3]bool{true, true, true} {
			t.Errorf("after the cut: %v, want all true", s)
		}
		p.close(t)
	})
}
