package clocksync

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestStepInsideABloatLeavesNoSplitBeyondTheRoundTrip: the client's clock
// steps forward 60ms while a 150ms uplink bloat is up. The uplink's fall
// hides in the bloat and the downlink's rise reads as the path's; when the
// bloat drains, the uplink's fall past its old floor is taken for the path
// too, and A ends at −120ms on a 40ms round trip. The clamp held the
// offset at the interval's edge, 20ms off; the reading dropped, A is half
// the round trip on the side it said, 10ms off (limit.go). Without the
// step nothing is dropped.
func TestStepInsideABloatLeavesNoSplitBeyondTheRoundTrip(t *testing.T) {
	const (
		base    = 20 * ms
		bloatAt = 2 * time.Minute
		stepAt  = bloatAt + 20*time.Second
		drainAt = 5 * time.Minute
		bloat   = 150 * ms
	)
	for _, tc := range []struct {
		name       string
		step       time.Duration
		wantResets int64
		wantWorst  time.Duration // after the drain
	}{
		{"a 60ms step in the bloat", 60 * ms, 1, 11 * ms},
		{"no step", 0, 0, time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				p := &path{rng: rand.New(rand.NewPCG(seed, 1069)), offset: 3 * time.Second, driftPPM: 9,
					up: base, down: base, jitUp: uniform(400 * time.Microsecond), jitDn: uniform(400 * time.Microsecond)}
				if tc.step != 0 {
					p.jumpAt, p.jumpBy = stepAt, tc.step
				}
				shape := func(now time.Duration) {
					p.up = base
					switch {
					case now >= drainAt:
						p.up += time.Duration(float64(bloat) * max(0, 1-float64(now-drainAt)/float64(20*time.Second)))
					case now >= bloatAt:
						p.up += time.Duration(float64(bloat) * min(1, float64(now-bloatAt)/float64(10*time.Second)))
					}
				}
				e := newEst(t)
				feed(t, e, p, 0, drainAt+time.Minute, 0, shape)
				worst, covered, total := feed(t, e, p, drainAt+time.Minute, drainAt+3*time.Minute, 0, shape)
				if got := e.Stats().AsymResets; got != tc.wantResets {
					t.Errorf("seed %d: %d readings dropped, want %d (stats %+v)", seed, got, tc.wantResets, e.Stats())
				}
				if worst > tc.wantWorst {
					t.Errorf("seed %d: worst error %v after the drain, want <= %v", seed, worst, tc.wantWorst)
				}
				wantCovered(t, covered, total, "seed %d", seed)
			}
		})
	}
}

// TestSplitAtTheLimitBehindAQueueStays: behind a 100ms downlink queue that
// outlasts the window, the downlink is most of the round trip and A next
// to the limit is the path's. A reading pushed far beyond it (forced here)
// is left to the clamp while the round trip is above its shortest; with
// the queue gone, such a reading is dropped.
func TestSplitAtTheLimitBehindAQueueStays(t *testing.T) {
	p := &path{rng: rand.New(rand.NewPCG(1, 11647)), offset: -8 * time.Second, driftPPM: 30,
		up: 10 * ms, down: 10 * ms, jitUp: uniform(300 * time.Microsecond), jitDn: uniform(300 * time.Microsecond)}
	e := newEst(t)
	feed(t, e, p, 0, 2*time.Minute, 0, nil)
	at := 2 * time.Minute
	for _, phase := range []struct {
		name       string
		down       time.Duration
		wantResets int64 // counted from the start
	}{
		{"behind the queue", 110 * ms, 0},
		{"the queue gone", 10 * ms, 1},
	} {
		// Two minutes for the window to hold the phase's floors only,
		// then the reading forced beyond the limit for a minute.
		p.down = phase.down
		feed(t, e, p, at, at+2*time.Minute, 0, nil)
		e.takeAsym(-3*e.rttFloor, e.asymErr)
		feed(t, e, p, at+2*time.Minute, at+3*time.Minute, 0, nil)
		at += 3 * time.Minute
		if got := e.Stats().AsymResets; got != phase.wantResets {
			t.Fatalf("%s: %d readings dropped, want %d", phase.name, got, phase.wantResets)
		}
	}
	if want := -e.rttFloor / 2; abs64(e.asym-want) > int64(time.Millisecond) {
		t.Errorf("A %v after the drop, want about %v (half the round trip on its side)", time.Duration(e.asym), time.Duration(want))
	}
}
