package clocksync

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestKnownStateMustDifferFromTheOneLeft: on hard floors (tolerance
// 0.1 ms) a one-way fall of one to two tolerances is a path change, not a
// return to the remembered state it left (leftMatches): the offset must
// not take half the fall (random:2382).
func TestKnownStateMustDifferFromTheOneLeft(t *testing.T) {
	for _, tc := range []struct {
		name string
		fall time.Duration
	}{
		{"1.2 tolerances", 120 * time.Microsecond},
		{"1.5 tolerances", 150 * time.Microsecond},
		{"1.8 tolerances", 180 * time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				p := &path{rng: rand.New(rand.NewPCG(seed, 2382)), offset: 3 * time.Second, driftPPM: 11,
					up: 800 * time.Microsecond, down: 800 * time.Microsecond, jitUp: uniform(0), jitDn: uniform(2 * time.Microsecond)}
				const at = 5 * time.Minute
				fall := func(now time.Duration) {
					if now >= at {
						p.down = 800*time.Microsecond - tc.fall
					}
				}
				e := newEst(t)
				feed(t, e, p, 0, at, 0, fall)
				feed(t, e, p, at, at+time.Minute, 0, fall)
				worst, covered, total := feed(t, e, p, at+time.Minute, at+4*time.Minute, 0, fall)
				if worst > 20*time.Microsecond {
					t.Errorf("seed %d: worst error %v from a minute after the fall, want < 20µs (the offset taking half the fall: %v)", seed, worst, tc.fall/2)
				}
				if frac := float64(covered) / float64(total); frac < 0.99 {
					t.Errorf("seed %d: bound covered %.2f%%, want >= 99%%", seed, 100*frac)
				}
			}
		})
	}
}
