package clocksync

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// queue returns a queueing delay that follows an Ornstein–Uhlenbeck process
// sampled every 100 ms (one ping): mean, standard deviation and correlation
// time tau, never below zero.
func queue(mean, sd time.Duration, tau time.Duration) func(*rand.Rand) time.Duration {
	rho := math.Exp(-float64(100*time.Millisecond) / float64(tau))
	q := 0.0
	return func(r *rand.Rand) time.Duration {
		q = rho*q + math.Sqrt(1-rho*rho)*float64(sd)*r.NormFloat64()
		return max(0, mean+time.Duration(q))
	}
}

// TestDriftOutlastsQueues: a queue in each direction that builds and drains
// over seconds (random:135's kind) tilts the last two minutes' floors by as
// much as a clock's rate; fitted to them alone, the drift wandered by over a
// hundred ppm. Over the long history the queues average out, and the drift
// stays within a few ppm of the clock's.
func TestDriftOutlastsQueues(t *testing.T) {
	var worst []float64
	for seed := uint64(1); seed <= 5; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 135)), offset: -7 * time.Second, driftPPM: 27,
			up: 8 * ms, down: 8 * ms, jitUp: queue(20*ms, 10*ms, 5*time.Second), jitDn: queue(12*ms, 6*ms, 5*time.Second)}
		e := newEst(t)
		w := 0.0
		for now := time.Duration(0); now < 15*time.Minute; now += 100 * ms {
			if err := e.Observe(p.exchange(now)); err != nil {
				t.Fatal(err)
			}
			if now >= 10*time.Minute {
				w = max(w, math.Abs(e.Estimate().DriftPPM-p.driftPPM))
			}
		}
		worst = append(worst, w)
	}
	slices.Sort(worst)
	t.Logf("worst drift error over minutes 10-15, by seed: %.1f ppm", worst)
	if m := worst[len(worst)/2]; m > 15 {
		t.Errorf("median worst drift error %.1f ppm, want <= 15", m)
	}
}
