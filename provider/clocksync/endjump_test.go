package clocksync

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestSlewReadAsAJump: random:315's path (a few hundred µs of jitter each
// way) under a 68 s slew of 482 ppm. The slew's start or end can first
// show as a clock jump whose rate is the one before it; the floors then
// go on moving apart at 482 ppm, one path change a second, until a fit of
// the bins since the jump shows the rate. An end read so (the drift
// history dropped) was never taken back: 2.8 ms of error for the rest of
// the run (seed 5 at −482 ppm); a start read so (the history kept) took
// back only the changes the log still held: 1.2 ms (seed 8 at +482 ppm).
// The path changes also held the fit that would show the rate. A minute
// after the slew, the offset must be back within the path's jitter and
// stay there.
func TestSlewReadAsAJump(t *testing.T) {
	const slewFrom, slewTo = 8 * time.Minute, 8*time.Minute + 68*time.Second
	jumps := 0
	for _, ppm := range []float64{482, -482} {
		for seed := uint64(1); seed <= 8; seed++ {
			p := &path{rng: rand.New(rand.NewPCG(seed, 3150)), offset: time.Second, driftPPM: 18,
				up: 12 * ms, down: 12 * ms, jitUp: triangular(185 * time.Microsecond), jitDn: halfNormal(481 * time.Microsecond),
				slewFrom: slewFrom, slewTo: slewTo, slewPPM: ppm}
			e := newEst(t)
			feed(t, e, p, 0, slewFrom, 0, nil)
			before := e.Stats().Jumps
			during, _, _ := feed(t, e, p, slewFrom, slewTo+time.Minute, 0, nil)
			jumps += int(e.Stats().Jumps - before)
			// The slew moves the offset 33 ms; read as a jump, its walk
			// waited for the drift fit that the path changes held (8.6 ms
			// at +482 ppm seed 8).
			if during > 4*ms {
				t.Errorf("slew %v ppm, seed %d: worst error %v during the slew and the minute after, want <= 4ms", ppm, seed, during)
			}
			worst, covered, total := feed(t, e, p, slewTo+time.Minute, slewTo+6*time.Minute, 0, nil)
			if worst > 300*time.Microsecond {
				t.Errorf("slew %v ppm, seed %d: worst error %v from a minute after the slew, want <= 0.3ms", ppm, seed, worst)
			}
			wantCovered(t, covered, total, "slew %v ppm, seed %d", ppm, seed)
		}
	}
	// What the test is for: some of the slews read as jumps.
	if jumps == 0 {
		t.Errorf("no slew read as a jump in 16 runs")
	}
}
