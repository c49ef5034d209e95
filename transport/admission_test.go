package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/quic-go/quic-go"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ now atomic.Int64 }

func (c *fakeClock) read() time.Duration     { return time.Duration(c.now.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.now.Add(int64(d)) }

func TestTokenBucket(t *testing.T) {
	type step struct {
		advance time.Duration
		allow   int // allow calls made after advancing
	}
	for _, tc := range []struct {
		name        string
		rate, burst int
		steps       []step
		want        []int // allowed per step
	}{
		{"burst then empty", 10, 3, []step{{0, 5}}, []int{3}},
		{"refills at the rate", 10, 3, []step{{0, 3}, {100 * time.Millisecond, 3}, {250 * time.Millisecond, 3}}, []int{3, 1, 2}},
		{"refill capped at the burst", 10, 3, []step{{0, 3}, {time.Hour, 10}}, []int{3, 3}},
		{"fractions add up", 1, 1, []step{{0, 1}, {400 * time.Millisecond, 1}, {400 * time.Millisecond, 1}, {200 * time.Millisecond, 1}}, []int{1, 0, 0, 1}},
		{"clock going back earns nothing", 10, 2, []step{{0, 2}, {-time.Second, 2}, {50 * time.Millisecond, 2}}, []int{2, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var clk fakeClock
			clk.advance(time.Hour)
			b := newTokenBucket(float64(tc.rate), tc.burst, clk.read)
			var got []int
			for _, s := range tc.steps {
				clk.advance(s.advance)
				n := 0
				for range s.allow {
					if b.allow() {
						n++
					}
				}
				got = append(got, n)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("allowed per step (-want +got):\n%s", d)
			}
		})
	}
}

func udpAddr(ip string, port int) net.Addr { return &net.UDPAddr{IP: net.ParseIP(ip), Port: port} }

// TestAdmissionLimits drives the admission counts directly: per source,
// handshakes in flight, connections in all, rate, hook, and the release of
// what ends.
func TestAdmissionLimits(t *testing.T) {
	var clk fakeClock
	var hooked []AdmissionRequest
	a := newAdmission(ServerConfig{MaxClients: 3, MaxClientsPerSource: 2, HandshakeRate: 16, Logger: discardLogger(),
		Admit: func(r AdmissionRequest) error {
			hooked = append(hooked, r)
			if r.Remote.String() == "10.0.0.9:1" {
				return errors.New("banned")
			}
			return nil
		}}, clk.read)
	admit := func(ip string, port int) (*admitted, error) {
		return a.admit(&quic.ClientInfo{RemoteAddr: udpAddr(ip, port)})
	}
	var recs []*admitted
	for port := 1; port <= 2; port++ {
		r, err := admit("10.0.0.1", port)
		if err != nil {
			t.Fatalf("attempt %d from 10.0.0.1: %v", port, err)
		}
		recs = append(recs, r)
	}
	if _, err := admit("10.0.0.1", 3); !errors.Is(err, errTooManyFromSource) {
		t.Errorf("third from one address: %v, want errTooManyFromSource", err)
	}
	if _, err := admit("10.0.0.9", 1); err == nil || len(hooked) != 3 {
		t.Errorf("hook: %v after %d calls, want its refusal", err, len(hooked))
	}
	if live, _ := a.counts(); live != 2 {
		t.Errorf("%d live after the hook's refusal, want 2", live)
	}
	recs[0].release()
	recs[0].release() // idempotent
	if live, pending := a.counts(); live != 1 || pending != 1 {
		t.Errorf("after a release: %d live, %d pending, want 1, 1", live, pending)
	}
	if _, err := admit("10.0.0.1", 4); err != nil {
		t.Errorf("a slot freed by a release: %v", err)
	}

	// maxLive is MaxClients + maxPending (16): 3 + 16 = 19. The rate
	// bucket (16) runs out first with the clock frozen.
	n := 0
	var err error
	for port := 0; port < 40; port++ {
		if _, err = admit(fmt.Sprintf("10.0.1.%d", port), 1); err != nil {
			break
		}
		n++
	}
	if live, _ := a.counts(); !errors.Is(err, errCapacity) && !errors.Is(err, errHandshakeRate) || live > 19 {
		t.Errorf("after %d more: %v with %d live", n, err, live)
	}
	clk.advance(time.Hour) // the bucket refills; capacity still binds
	for port := 100; port < 140; port++ {
		if _, err = admit(fmt.Sprintf("10.0.2.%d", port), 1); err != nil {
			break
		}
	}
	if live, pending := a.counts(); !errors.Is(err, errCapacity) || live > 19 || pending > 16 {
		t.Errorf("refilled: %v with %d live, %d pending; want errCapacity within 19 and 16", err, live, pending)
	}
}

// TestPerSourceLimit: beyond MaxClientsPerSource connections from one
// address, Dial fails with ErrRefused; a slot is free again once a client
// leaves.
func TestPerSourceLimit(t *testing.T) {
	srv := startServer(t, ServerConfig{MaxClientsPerSource: 2, HandshakeRate: -1})
	var clients []*Client
	for i := range 2 {
		c, err := dialTest(t, srv, ClientConfig{})
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		clients = append(clients, c)
	}
	_, err := dialTest(t, srv, ClientConfig{})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("third client: %v, want ErrRefused", err)
	}
	if st := srv.Stats(); st.AdmissionRefused < 1 || st.Clients != 2 || st.Connections != 2 {
		t.Errorf("stats %+v", st)
	}
	clients[0].Close()
	eventually(t, 5*time.Second, "the slot to be released", func() bool { return srv.Stats().Connections == 1 })
	if _, err := dialTest(t, srv, ClientConfig{}); err != nil {
		t.Errorf("after one left: %v", err)
	}
}

// TestHandshakeRateAndRetry: with the rate limiter's clock frozen, the
// burst admits HandshakeRate attempts; from half of it on, attempts must
// prove their address (a Retry) and then get through; beyond it they are
// refused with ErrRefused.
func TestHandshakeRateAndRetry(t *testing.T) {
	var clk fakeClock
	var mu sync.Mutex
	var verified []bool
	srv := startServerHooks(t, ServerConfig{HandshakeRate: 4,
		Admit: func(r AdmissionRequest) error {
			mu.Lock()
			verified = append(verified, r.AddrVerified)
			mu.Unlock()
			return nil
		}}, serverHooks{admissionClock: clk.read})
	for i := range 4 {
		if _, err := dialTest(t, srv, ClientConfig{}); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	_, err := dialTest(t, srv, ClientConfig{})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("fifth client: %v, want ErrRefused", err)
	}
	mu.Lock()
	got := verified
	mu.Unlock()
	// The bucket is more than half full for the first two (no Retry);
	// from the third, at most half of it is left, so the address is
	// validated first. The refused fifth never reaches the hook.
	if d := cmp.Diff([]bool{false, false, true, true}, got); d != "" {
		t.Errorf("AddrVerified per attempt (-want +got):\n%s", d)
	}
	// Counted per Initial packet: a client hello may span two.
	if st := srv.Stats(); st.AddressValidations < 3 || st.AdmissionRefused < 1 {
		t.Errorf("stats %+v", st)
	}
	clk.advance(time.Second) // the bucket refills
	if _, err := dialTest(t, srv, ClientConfig{}); err != nil {
		t.Errorf("after a second: %v", err)
	}
}

// TestAdmitHook: the user's hook refuses before the handshake, and the
// client says so.
func TestAdmitHook(t *testing.T) {
	var seen atomic.Pointer[AdmissionRequest]
	srv := startServer(t, ServerConfig{Admit: func(r AdmissionRequest) error {
		seen.Store(&r)
		return errors.New("not today")
	}})
	_, err := dialTest(t, srv, ClientConfig{})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("Dial = %v, want ErrRefused", err)
	}
	if r := seen.Load(); r == nil || sourceKey(r.Remote) != "127.0.0.1" {
		t.Errorf("hook saw %+v", r)
	}
}

// TestManyConnectionsOneSource replays a flood of connections from one
// UDP socket: the server admits MaxClientsPerSource of them, refuses the
// rest before their handshake, and counts nothing left after they close.
func TestManyConnectionsOneSource(t *testing.T) {
	const limit, attempts = 8, 100
	// The held connections never say hello: a long HelloTimeout keeps the
	// server from freeing their slots while the flood goes on.
	srv := startServer(t, ServerConfig{MaxClientsPerSource: limit, HandshakeRate: -1, HelloTimeout: time.Minute})
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tr := &quic.Transport{Conn: conn}
	defer tr.Close()
	tlsConf := testCert(t).ClientTLS()
	tlsConf.NextProtos = []string{ALPN}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var conns []*quic.Conn
	refused := 0
	for i := range attempts {
		c, err := tr.Dial(ctx, srv.Addr(), tlsConf, &quic.Config{EnableDatagrams: true})
		switch {
		case err == nil:
			conns = append(conns, c)
		case isRefused(err):
			refused++
		default:
			t.Fatalf("attempt %d: %v", i, err)
		}
		if n := srv.Stats().Connections; n > limit {
			t.Fatalf("attempt %d: %d connections admitted, limit %d", i, n, limit)
		}
	}
	if len(conns) != limit || refused != attempts-limit {
		t.Errorf("%d connected, %d refused; want %d, %d", len(conns), refused, limit, attempts-limit)
	}
	for _, c := range conns {
		c.CloseWithError(0, "")
	}
	eventually(t, 10*time.Second, "every connection counted out", func() bool {
		return srv.Stats().Connections == 0
	})
}

// TestNewServerTransport: a server on the caller's quic.Transport runs
// the caller's ConnContext after its own admission, and Close leaves the
// transport to the caller.
func TestNewServerTransport(t *testing.T) {
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	var userCalls atomic.Int64
	tr := &quic.Transport{Conn: udp, ConnectionIDLength: 16,
		ConnContext: func(ctx context.Context, _ *quic.ClientInfo) (context.Context, error) {
			userCalls.Add(1)
			return ctx, nil
		}}
	srv, err := NewServerTransport(tr, ServerConfig{TLSConfig: testCert(t).ServerTLS(), MaxClientsPerSource: 1})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	if _, err := dialTest(t, srv, ClientConfig{}); err != nil {
		t.Fatal(err)
	}
	// Refused by the server's own limit: the user's hook is not asked.
	if _, err := dialTest(t, srv, ClientConfig{}); !errors.Is(err, ErrRefused) {
		t.Errorf("second client: %v, want ErrRefused", err)
	}
	if n := userCalls.Load(); n != 1 {
		t.Errorf("the transport's ConnContext ran %d times, want 1", n)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := <-done; !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve = %v", err)
	}
	// The transport is still the caller's: it can dial (nobody answers;
	// the dial times out rather than fail on a closed transport).
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	tlsConf := testCert(t).ClientTLS()
	tlsConf.NextProtos = []string{ALPN}
	if _, err := tr.Dial(ctx, srv.Addr(), tlsConf, nil); err == nil || errors.Is(err, quic.ErrTransportClosed) {
		t.Errorf("dialing the closed server over the caller's transport: %v, want a timeout, not a closed transport", err)
	}
	tr.Close()
}
