package transport

import (
	"context"
	"errors"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go/testutils/simnet"

	"github.com/netclock/netclock/provider"
)

// TestSimnetAsymmetricPath runs server and client over quic-go's simulated
// network in a synctest bubble, where time is virtual and delays are
// exact: 30 ms client→server, 10 ms server→client. No ping can observe
// the asymmetry, so the offset estimate must be off by exactly half of it,
// (30−10)/2 = 10 ms — and by nothing more.
func TestSimnetAsymmetricPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const up, down = 30 * time.Millisecond, 10 * time.Millisecond
		// The client clock: an arbitrary, large offset from the server's.
		epoch := time.Now()
		clock := func() time.Duration { return time.Since(epoch) + 1000*time.Second }
		p := newSimPair(t, &simnet.PerfectRouter{}, up, down, ServerConfig{Start: 5 * time.Second}, clock)
		c, srv := p.c, p.srv
		<-c.Synced()

		check := func(when string) {
			t.Helper()
			e := c.Estimate()
			now := clock() // virtual time stands still while we read
			errOff := e.ServerTime(now) - srv.SharedTime()
			t.Logf("%s: offset error %v (want %v), uplink %v, downlink %v, error bound %v, samples %d",
				when, errOff, (up-down)/2, e.Uplink, e.Downlink, e.ErrorBound, c.Stats().PongsReceived)
			if d := errOff - (up-down)/2; d < -time.Millisecond || d > time.Millisecond {
				t.Errorf("%s: offset error %v, want %v within 1ms", when, errOff, (up-down)/2)
			}
			if rtt := e.RTT(); rtt < up+down || rtt > up+down+time.Millisecond {
				t.Errorf("%s: RTT %v, want %v", when, rtt, up+down)
			}
		}
		check("after sync")
		// Sleeping in the bubble advances virtual time: steady pings.
		time.Sleep(10 * time.Second)
		check("after 10s")
		time.Sleep(50 * time.Second)
		check("after 60s")
		if st := c.Stats(); st.Lost != 0 || st.Rejected != 0 || st.PongsReceived < 600 {
			t.Errorf("stats %+v", st)
		}

		p.close(t)
	})
}

// outageRouter drops every packet, both ways, for the first dropFor of each
// period of virtual time (from epoch). What it drops depends on virtual
// time only, never on the order goroutines happen to send in, so a run's
// losses are the same every time.
type outageRouter struct {
	simnet.PerfectRouter
	epoch           time.Time
	period, dropFor time.Duration
}

func (r *outageRouter) SendPacket(p simnet.Packet) error {
	if time.Since(r.epoch)%r.period < r.dropFor {
		return nil
	}
	return r.PerfectRouter.SendPacket(p)
}

// TestSimnetLoss loses every packet for 200 ms of each second, both ways:
// the client still syncs (on SyncTimeout if the burst is short of pongs),
// counts the losses as sequence gaps, and the estimate stays exact.
func TestSimnetLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 15 * time.Millisecond
		const period, dropFor = time.Second, 200 * time.Millisecond
		epoch := time.Now()
		clock := func() time.Duration { return time.Since(epoch) - 42*time.Second }
		router := &outageRouter{epoch: epoch, period: period, dropFor: dropFor}
		p := newSimPair(t, router, delay, delay, ServerConfig{}, clock)
		c, srv := p.c, p.srv
		start := time.Now()
		<-c.Synced()
		t.Logf("synced after %v", time.Since(start))
		// Read the stats 950 ms into a period: the pings since the outage
		// ended have been answered, but for one in flight.
		time.Sleep(20*period - time.Since(epoch)%period + 950*time.Millisecond) // virtual
		st := c.Stats()
		t.Logf("stats: sent %d, pongs %d, lost %d, duplicates %d, stale %d",
			st.PingsSent, st.PongsReceived, st.Lost, st.Duplicates, st.Stale)
		// Of the ten pings a period, two or three are sent, or answered,
		// within an outage: 70 to 80% are answered (the burst aside).
		if frac := float64(st.PongsReceived) / float64(st.PingsSent); frac < 0.68 || frac > 0.85 {
			t.Errorf("%.1f%% of pings answered, want 70 to 80%% (more with the burst)", 100*frac)
		}
		// Every unanswered ping but the one in flight is counted lost.
		if missing := st.PingsSent - st.PongsReceived; st.Lost < missing-1 || st.Lost > missing {
			t.Errorf("lost %d, want %d or %d", st.Lost, missing-1, missing)
		}
		if st.Duplicates != 0 || st.Stale != 0 || st.Malformed != 0 {
			t.Errorf("stats %+v", st)
		}
		if errOff := c.Estimate().ServerTime(clock()) - srv.SharedTime(); abs(errOff) > time.Millisecond {
			t.Errorf("offset error %v on a symmetric lossy path", errOff)
		}
		p.close(t)
	})
}

// Fixed addresses of the simulated peers.
var (
	simClientAddr = &net.UDPAddr{IP: net.ParseIP("10.0.0.1"), Port: 9001}
	simServerAddr = &net.UDPAddr{IP: net.ParseIP("10.0.0.2"), Port: 9002}
)

// simPair is a server and a client over quic-go's simnet, for use inside a
// synctest bubble (where time is virtual).
type simPair struct {
	net      *simnet.Simnet
	cconn    *simnet.SimConn
	sconn    *simnet.SimConn
	srv      *Server
	c        *Client
	serveErr chan error
}

// newSimPair starts a server and dials a client through router. A node's
// Latency delays the packets it receives, so up is set on the server's
// node and down on the client's. Certificates are made here, inside the
// bubble: its clock starts in 2000, and TLS checks validity against it.
func newSimPair(t *testing.T, router simnet.Router, up, down time.Duration, scfg ServerConfig, clock func() time.Duration) *simPair {
	t.Helper()
	return newSimPairWith(t, router, up, down, scfg, ClientConfig{Provider: provider.SteeredConfig{Clock: clock}})
}

// newSimPairWith is newSimPair with a client config of its own (its
// TLSConfig is set here).
func newSimPairWith(t *testing.T, router simnet.Router, up, down time.Duration, scfg ServerConfig, ccfg ClientConfig) *simPair {
	t.Helper()
	p := &simPair{net: &simnet.Simnet{Router: router}, serveErr: make(chan error, 1)}
	p.cconn = p.net.NewEndpoint(simClientAddr, simnet.NodeBiDiLinkSettings{Latency: down})
	p.sconn = p.net.NewEndpoint(simServerAddr, simnet.NodeBiDiLinkSettings{Latency: up})
	if err := p.net.Start(); err != nil {
		t.Fatal(err)
	}
	cert, err := DevCertificate("netclock.test")
	if err != nil {
		t.Fatal(err)
	}
	scfg.TLSConfig = cert.ServerTLS()
	if p.srv, err = NewServer(p.sconn, scfg); err != nil {
		t.Fatal(err)
	}
	go func() { p.serveErr <- p.srv.Serve(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ccfg.TLSConfig = cert.ClientTLS()
	p.c, err = DialConn(ctx, p.cconn, simServerAddr, ccfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// close shuts everything down and reports how Serve ended; synctest.Test
// itself fails if any goroutine is left behind.
func (p *simPair) close(t *testing.T) {
	t.Helper()
	p.c.Close()
	p.srv.Close()
	if err := <-p.serveErr; !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve = %v", err)
	}
	p.cconn.Close()
	p.sconn.Close()
	p.net.Close()
}
