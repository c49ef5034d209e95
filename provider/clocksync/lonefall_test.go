package clocksync

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// sparseTail is uplink jitter whose floor is soft in the way that matters
// here: most samples sit 1 ms or more above it, one in 500 comes within
// 1 ms of it.
func sparseTail(r *rand.Rand) time.Duration {
	if r.IntN(500) == 0 {
		return time.Duration(r.Int64N(int64(ms)))
	}
	return ms + time.Duration(r.ExpFloat64()*float64(ms))
}

// TestLoneFallInTheFirstWindowIsConvergence: on a floor whose lowest
// values are rare, a single sample far below the young window's floor is
// the floor still settling. Taken for a path change, it left A holding
// the start's floor excess, 0.5 ms of error for good (13 of these 20
// seeds before).
func TestLoneFallInTheFirstWindowIsConvergence(t *testing.T) {
	var medians []time.Duration
	for seed := uint64(1); seed <= 20; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 41)), offset: 2 * time.Second, driftPPM: -12,
			up: 6 * ms, down: 6 * ms, jitUp: sparseTail, jitDn: uniform(100 * time.Microsecond)}
		e := newEst(t)
		feed(t, e, p, 0, time.Minute, 0, nil)
		if n := e.Stats().PathChanges; n != 0 {
			t.Errorf("seed %d: %d path changes in the first window, want 0", seed, n)
		}
		feed(t, e, p, time.Minute, 90*time.Second, 0, nil)
		var errs []time.Duration
		for now := 90 * time.Second; now < 5*time.Minute; now += 100 * ms {
			if err := e.Observe(p.exchange(now)); err != nil {
				continue
			}
			errs = append(errs, abs(errAt(e.Estimate(), p, now+p.up+p.down)))
		}
		slices.Sort(errs)
		medians = append(medians, errs[len(errs)/2])
	}
	slices.Sort(medians)
	if m := medians[len(medians)/2]; m > 400*time.Microsecond {
		t.Errorf("median over seeds of the median error %v, want under 0.4ms (half the floor excess is 0.5ms)", m)
	}
}

// TestRampInTheFirstWindowIsAPath: an uplink route 1.5 ms shorter comes
// in over 3 s of the first window, each sample a little lower: each fall
// is a lone sample's, but together they are the path's, and the offset
// must hold across them as A takes the move (undoLoneFall: without it,
// 0.75 ms of error on 8 of these 10 seeds; 0.015–0.5 ms with it, as before
// the lone rule).
func TestRampInTheFirstWindowIsAPath(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 43)), offset: 2 * time.Second, driftPPM: 8,
			up: 8 * ms, down: 8 * ms, jitUp: exponential(time.Millisecond), jitDn: uniform(200 * time.Microsecond)}
		ramp := func(now time.Duration) {
			const from, over, by = 30 * time.Second, 3 * time.Second, 1500 * time.Microsecond
			f := min(1, max(0, float64(now-from)/float64(over)))
			p.up = 8*ms - time.Duration(f*float64(by))
		}
		e := newEst(t)
		feed(t, e, p, 0, 40*time.Second, 0, ramp)
		worst, covered, total := feed(t, e, p, 40*time.Second, 3*time.Minute, 0, ramp)
		if worst > 550*time.Microsecond {
			t.Errorf("seed %d: worst error %v after the ramp, want under 0.55ms (half the move, followed, is 0.75ms; stats %+v)", seed, worst, e.Stats())
		}
		wantCovered(t, covered, total, "seed %d", seed)
	}
}
