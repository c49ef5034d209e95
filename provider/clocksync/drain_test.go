package clocksync

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestDrainAfterAFlapIsNoClock: the uplink's route flaps up 27 ms, and
// seconds later a 60 ms downlink bloat drains at 5 ms/s. The uplink's
// newest samples rose by about as much as the downlink's floor falls, as
// a clock step would move them, but the fall goes on for 12 s at 5000
// ppm, faster than any clock: the offset may follow it only while it
// settles and until its pace shows (up to 6.2 ms here), not down the
// drain (17 and 34 ms off on the 2 ms downlink before drain.go;
// random:108 seed 1, 16.6 ms).
func TestDrainAfterAFlapIsNoClock(t *testing.T) {
	const (
		bloatAt = 3 * time.Minute
		flapAt  = 5 * time.Minute
		drainAt = flapAt + 15*time.Second
		bloat   = 60 * time.Millisecond
		rate    = 5 * time.Millisecond // drained per second
	)
	for _, tc := range []struct {
		name  string
		jitDn time.Duration
	}{
		{"uniform 0.4ms downlink", 400 * time.Microsecond},
		{"uniform 2ms downlink", 2 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				p := &path{rng: rand.New(rand.NewPCG(seed, 108)), offset: 2 * time.Second, driftPPM: 11,
					up: 20 * ms, down: 20 * ms, jitUp: uniform(400 * time.Microsecond), jitDn: uniform(tc.jitDn)}
				shape := func(now time.Duration) {
					p.down = 20 * ms
					switch {
					case now >= drainAt:
						p.down += max(0, bloat-rate*(now-drainAt)/time.Second)
					case now >= bloatAt:
						p.down += min(bloat, bloat*(now-bloatAt)/(3*time.Second))
					}
					p.up = 20 * ms
					if now >= flapAt {
						p.up += 27 * ms
					}
				}
				e := newEst(t)
				feed(t, e, p, 0, drainAt, 0, shape)
				worst, covered, total := feed(t, e, p, drainAt, drainAt+time.Minute, 0, shape)
				if st := e.Stats(); st.Jumps != 0 {
					t.Errorf("seed %d: %d jumps, want 0 (stats %+v)", seed, st.Jumps, st)
				}
				if worst > 8*ms {
					t.Errorf("seed %d: worst error %v during and after the drain, want < 8ms", seed, worst)
				}
				wantCovered(t, covered, total, "seed %d", seed)
			}
		})
	}
}
