package transport

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/netclock/netclock/internal/simlink"
	"github.com/netclock/netclock/netsim"
	"github.com/netclock/netclock/provider"
)

// TestPingsSpreadOverAPeriodicUplink: an uplink that sends on a 20 ms
// frame (a satellite's, or a cable grant's) delays each ping to the frame's
// next instant. Pinged every 100 ms exactly, a multiple of the frame, every
// ping waits alike: the floor is never seen, and the wait is an asymmetry
// no two-way measurement can find, outside the bound. Spread pings land
// all over the frame, and some wait nothing.
func TestPingsSpreadOverAPeriodicUplink(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spread time.Duration
		hidden bool // the error is the hidden wait, outside the bound
	}{
		{"spread (the default)", 0, false},
		{"not spread", -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var worst time.Duration
			var covered, total int
			synctest.Test(t, func(t *testing.T) {
				// (The downlink's jitter keeps the client's timer off the
				// frame's instants, where the handshake through the frame
				// would otherwise have put it.)
				up, err := netsim.NewLink(netsim.LinkSpec{Base: 20 * time.Millisecond,
					Periodic: &netsim.PeriodicSpec{Period: 20 * time.Millisecond}}, netsim.DirUp, nil, 1)
				if err != nil {
					t.Fatal(err)
				}
				down, err := netsim.NewLink(netsim.LinkSpec{Base: 20 * time.Millisecond,
					Jitter: netsim.JitterSpec{Kind: netsim.JitterUniform, Spread: 500 * time.Microsecond}}, netsim.DirDown, nil, 2)
				if err != nil {
					t.Fatal(err)
				}
				epoch := time.Now()
				clock := func() time.Duration { return time.Since(epoch) + 3*time.Second }
				p := newSimPairWith(t, simlink.New(simClientAddr, up, down), 0, 0, ServerConfig{},
					ClientConfig{Provider: provider.SteeredConfig{Clock: clock}, PingSpread: tc.spread})
				c, srv := p.c, p.srv
				<-c.Synced()
				for begin := time.Now(); time.Since(begin) < time.Minute; {
					time.Sleep(100 * time.Millisecond) // virtual
					if time.Since(begin) < 20*time.Second {
						continue
					}
					e := c.Estimate()
					now := clock()
					err := e.ServerTime(now) - srv.SharedTime()
					worst = max(worst, abs(err))
					total++
					if abs(err) <= e.BoundAt(now) {
						covered++
					}
				}
				p.close(t)
			})
			t.Logf("worst |error| %v, bound covered %d of %d", worst, covered, total)
			switch {
			case tc.hidden && (worst < 2*time.Millisecond || covered > total/2):
				t.Errorf("pinged in step with the frame: worst |error| %v, covered %d of %d; want the hidden wait (ms), outside the bound", worst, covered, total)
			case !tc.hidden && (worst > time.Millisecond || covered < total*99/100):
				t.Errorf("worst |error| %v, covered %d of %d; want < 1ms, >= 99%%", worst, covered, total)
			}
		})
	}
}
