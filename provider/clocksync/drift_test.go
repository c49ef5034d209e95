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

// TestDirectionsApartWidenOnlyTheBound: when the two directions' floors
// tilt differently, the fit takes the one nearer the drift known so far;
// the other may be the clock's (a rate change with a one-way floor step,
// random:5251 at 2 Hz: the drift 60 ppm off for 40s under an error of
// 4–9 ppm). rApart carries a third of the difference to the bound alone.
func TestDirectionsApartWidenOnlyTheBound(t *testing.T) {
	tests := []struct {
		name         string
		ppmU, ppmW   float64 // each direction's floor slope, as a rate
		wantApartPPM float64
	}{
		{"agree", 30, 30, 0},
		{"apart within their errors", 30, 31, 0},
		{"apart", 30, 90, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEst(t)
			e.r = tt.ppmU * 1e-6 // the drift known so far agrees with the uplink
			rng := rand.New(rand.NewPCG(1, 2))
			for k := range 40 {
				at := int64(k) * binDuration
				jit := func() int64 { return rng.Int64N(int64(20 * time.Microsecond)) }
				e.bins[k] = bin{start: at, tu: at, tw: at,
					minU: int64(tt.ppmU*1e-6*float64(at)) + jit(), minW: -int64(tt.ppmW*1e-6*float64(at)) + jit()}
			}
			e.binN = 40
			r, se, ok := e.driftFit()
			if !ok {
				t.Fatal("no fit")
			}
			e.rSE, e.fitted = se, true
			if se := e.boundSE() * 1e6; se > 5 {
				t.Errorf("the rules' drift error %.1f ppm, want the fit's own (< 5)", se)
			}
			if math.Abs(r*1e6-tt.ppmU) > 2 {
				t.Errorf("drift %.1f ppm, want the uplink's %v", r*1e6, tt.ppmU)
			}
			if math.Abs(e.rApart*1e6-tt.wantApartPPM) > 1 {
				t.Errorf("rApart %.1f ppm, want %v", e.rApart*1e6, tt.wantApartPPM)
			}
		})
	}
}

// TestRateChangeExplainsPathChanges: a refit whose rate moved by more than
// a slew's noise explains the last window's path changes that moved A the
// way that rate would: A keeps their move as its error. Changes the other
// way, older than the window, or a rate that moved by its noise alone keep
// A's error as it was.
func TestRateChangeExplainsPathChanges(t *testing.T) {
	const now = int64(10 * time.Minute)
	for _, tc := range []struct {
		name    string
		r       float64 // the refit's rate, the old one 23 ppm
		dA      time.Duration
		age     time.Duration // of the path change
		wantErr time.Duration
	}{
		{"a slew's fall taken for the path", -300e-6, -7756 * time.Microsecond, 20 * time.Second, 7756 * time.Microsecond},
		{"the other way", -300e-6, 7756 * time.Microsecond, 20 * time.Second, 0},
		{"further than the rate can", -30e-6, -7756 * time.Microsecond, 20 * time.Second, 0},
		{"older than the window", -300e-6, -7756 * time.Microsecond, 90 * time.Second, 0},
		{"within the noise", 0, -7756 * time.Microsecond, 20 * time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEst(t)
			e.r, e.rSE, e.fitted = 23e-6, 1e-6, true
			e.pathLog[0] = pathEvent{at: now - int64(tc.age)}
			e.pathLogN = 1
			e.asym = int64(tc.dA)
			e.rateMoved(tc.r, 1e-6, now)
			if got := time.Duration(e.asymErr); got != tc.wantErr {
				t.Errorf("A's error %v, want %v", got, tc.wantErr)
			}
		})
	}
}
