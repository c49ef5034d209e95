package transport

import (
	"math"
	"testing"
	"time"

	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/nettime"
)

func TestSubSat(t *testing.T) {
	const maxD, minD = time.Duration(math.MaxInt64), time.Duration(math.MinInt64)
	for _, tc := range []struct{ a, b, want time.Duration }{
		{5, 3, 2},
		{3, 5, -2},
		{0, minD + 1, maxD},
		{0, minD, maxD},
		{-1, minD, maxD},
		{-2, maxD, minD},
		{-1, maxD, minD},
		{0, maxD, -maxD},
		{maxD, -1, maxD},
		{maxD, maxD, 0},
		{minD, minD, 0},
		{minD, 1, minD},
		{time.Minute, -nettime.MaxDuration, maxD},
		{time.Minute, nettime.MaxDuration, time.Minute - nettime.MaxDuration},
		{-time.Minute, -nettime.MaxDuration, nettime.MaxDuration - time.Minute},
	} {
		if got := subSat(tc.a, tc.b); got != tc.want {
			t.Errorf("subSat(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestAgeAtTheExtremes: a stamp at either end of nettime's range has an
// age of the right sign on both sides, saturated rather than wrapped.
func TestAgeAtTheExtremes(t *testing.T) {
	srv := startServer(t, ServerConfig{TickRate: 60, Start: time.Minute})
	c := syncedClient(t, srv, ClientConfig{})
	const maxD = time.Duration(math.MaxInt64)
	for _, rate := range []uint32{1, 60, nettime.MaxTickRate} {
		past, future := nettime.New(rate, -nettime.MaxDuration), nettime.New(rate, nettime.MaxDuration)
		for _, side := range []struct {
			name string
			age  func(nettime.Time) (time.Duration, bool)
		}{{"server", srv.Age}, {"client", c.Age}} {
			awaitSynchronized(t, c)
			if a, ok := side.age(past); !ok || a != maxD {
				t.Errorf("rate %d: %s Age(−MaxDuration) = %v, %v; want %v (saturated)", rate, side.name, a, ok, maxD)
			}
			// Now − MaxDuration: about −292 years, exact, no wrap.
			if a, ok := side.age(future); !ok || a >= -nettime.MaxDuration+2*time.Minute || a < -nettime.MaxDuration {
				t.Errorf("rate %d: %s Age(+MaxDuration) = %v, %v; want just above −MaxDuration", rate, side.name, a, ok)
			}
		}
	}
}

// TestPongTimesOutOfRange: a pong whose server times are far beyond any
// server clock is dropped as malformed before the estimator sees it.
func TestPongTimesOutOfRange(t *testing.T) {
	var logs logBuffer
	now := time.Second
	c := newBareClient(t, &logs, func() time.Duration { return now })
	for i, p := range []wire.Pong{
		{ServerReceive: math.MaxInt64, ServerSend: math.MaxInt64},
		{ServerReceive: math.MinInt64, ServerSend: 0},
		{ServerReceive: 0, ServerSend: maxPongTime + 1},
	} {
		c.mu.Lock()
		p.Seq = c.notePingLocked(now)
		c.mu.Unlock()
		p.ClientSend = now
		c.handlePong(wire.AppendPong(nil, p), now+time.Millisecond)
		if st := c.Stats(); st.Malformed != int64(i+1) || st.PongsReceived != 0 || c.est.Stats().Samples != 0 {
			t.Fatalf("pong %+v: malformed %d, pongs %d, samples %d", p, st.Malformed, st.PongsReceived, c.est.Stats().Samples)
		}
	}
	c.mu.Lock()
	seq := c.notePingLocked(now)
	c.mu.Unlock()
	c.handlePong(wire.AppendPong(nil, wire.Pong{Seq: seq, ClientSend: now, ServerReceive: maxPongTime, ServerSend: maxPongTime}), now)
	if st := c.Stats(); st.PongsReceived != 1 {
		t.Errorf("a pong at the bound was not taken: %+v", st)
	}
}
