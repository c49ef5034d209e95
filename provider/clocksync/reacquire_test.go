package clocksync

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestPathChangeDuringReacquisitionWidensTheBound: the client clock jumps
// while the uplink gets 6ms longer. The jump restarts the window, which
// takes the new floors with the old A: the offset is off by half the path's
// move, which no ping can tell. The round trip grew by 6ms, so the bound
// says so.
func TestPathChangeDuringReacquisitionWidensTheBound(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 28)), offset: time.Second, driftPPM: 20,
			up: 10 * ms, down: 10 * ms, jitUp: exponential(300 * time.Microsecond), jitDn: exponential(300 * time.Microsecond),
			jumpAt: 3*time.Minute + 30*ms, jumpBy: 80 * ms}
		e := newEst(t)
		feed(t, e, p, 0, 3*time.Minute, 0, nil)
		p.up += 6 * ms
		worst, covered, total := feed(t, e, p, 3*time.Minute, 5*time.Minute, 0, nil)
		if st := e.Stats(); st.Jumps != 1 {
			t.Errorf("seed %d: %d jumps, want 1 (stats %+v)", seed, st.Jumps, st)
		}
		if frac := float64(covered) / float64(total); frac < 0.99 {
			t.Errorf("seed %d: bound covered %.2f%% (worst error %v), want >= 99%%", seed, 100*frac, worst)
		}
	}
}
