package transport

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/netclock/netclock/netsim"
	"github.com/netclock/netclock/provider"
)

// sharedTimeError reads the server clock and the client's shared time back
// to back, and returns the client's error: shared time minus the server
// clock at the same instant (the middle of two server readings). Of a few
// readings it keeps the tightest, to shed scheduling noise.
func sharedTimeError(t *testing.T, srv *Server, c *Client) time.Duration {
	t.Helper()
	best, window := time.Duration(0), time.Duration(-1)
	awaitSynchronized(t, c)
	for range 5 {
		s1 := srv.SharedTime()
		shared, ok := c.SharedTime()
		s2 := srv.SharedTime()
		if !ok {
			t.Fatal("no shared time")
		}
		if w := s2 - s1; window < 0 || w < window {
			best, window = shared-(s1+(s2-s1)/2), w
		}
	}
	return best
}

// TestWallClockEmulated runs a client behind the wall-clock link emulator
// (netsim.Conn) with a profile's client clock (offset and drift), against a
// real server over loopback, and checks its true error after a few seconds
// of steady pings. Real time passes: skipped with -short.
func TestWallClockEmulated(t *testing.T) {
	if testing.Short() {
		t.Skip("wall-clock test: takes seconds of real time")
	}
	t.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true") // a wrapped socket, on purpose
	for _, tc := range []struct {
		profile string
		bound   time.Duration // generous: wall-clock noise on a loaded machine
	}{
		{"fiber", 5 * time.Millisecond},
		{"broadband", 10 * time.Millisecond},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			p, ok := netsim.ProfileByName(tc.profile)
			if !ok {
				t.Fatalf("no profile %q", tc.profile)
			}
			srv := startServer(t, ServerConfig{Start: 30 * time.Second})
			udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			nc, err := netsim.NewConn(udp, p, 1) // owns udp
			if err != nil {
				udp.Close()
				t.Fatal(err)
			}
			defer nc.Close()
			clock, err := netsim.NewWallClockAt(p.Client, nc.Start())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			c, err := DialConn(ctx, nc, srv.Addr(), ClientConfig{TLSConfig: testCert(t).ClientTLS(),
				Provider: provider.SteeredConfig{Clock: clock}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			await(t, c.Synced(), 10*time.Second, "sync")
			t.Logf("synced %v after dialing; error %v", time.Since(start), sharedTimeError(t, srv, c))
			runClient(t, c)

			time.Sleep(3 * time.Second) // steady pings accumulate: real time is the point here
			errOff := sharedTimeError(t, srv, c)
			st, ns := c.Stats(), nc.Stats()
			t.Logf("after 3s: true error %v (bound %v); estimate RTT %v, error bound %v, drift %.1f ppm "+
				"(client clock %+.0f ppm); pongs %d/%d; emulator dropped %d up, %d down; ticks %d",
				errOff, tc.bound, st.RTT, st.ErrorBound, st.DriftPPM, p.Client.DriftPPM, st.PongsReceived,
				st.PingsSent, ns.Up.Dropped(), ns.Down.Dropped(), c.System().Stats().Ticks)
			if abs(errOff) > tc.bound {
				t.Errorf("true error %v, want within %v", errOff, tc.bound)
			}
			if ticks := c.System().Stats().Ticks; ticks < 60 {
				t.Errorf("%d ticks in over 3s at 60 Hz", ticks)
			}
			// The emulated path's floor binds from below whatever the load;
			// from above, a loaded machine (-race, other work on 2 cores)
			// delays the emulator's goroutines both ways, so the slack is
			// wide: it catches gross errors, not scheduling noise.
			wantRTT := p.Up.Base + p.Down.Base
			if st.RTT < wantRTT || st.RTT > wantRTT+p.Up.Jitter.Spread+p.Down.Jitter.Spread+15*time.Millisecond {
				t.Errorf("estimated RTT %v, want about the path's %v..%v", st.RTT, wantRTT,
					wantRTT+p.Up.Jitter.Spread+p.Down.Jitter.Spread)
			}
		})
	}
}
