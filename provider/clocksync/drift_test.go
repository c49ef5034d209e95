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

// TestPreciseRecentHistory: where the recent history's fit agrees with the
// whole history's and knows the rate more than twice as precisely, the
// drift is the recent one's. As on random:135: queues in both directions
// for the first six minutes of the history, cut into path segments where
// they moved (each with its own intercept), then the downlink on its floor
// for the last two, while the drift known so far, which weighs the bins,
// is off. The whole history's fit, weighted from that drift, stays near
// it: before the rule, at worst over 20 seeds 0.17 ppm off with the drift
// known exactly, and 24.6, 14.5 and 25.3 ppm with it 28 ppm off either
// way and 60 ppm off (0.10 with it).
func TestPreciseRecentHistory(t *testing.T) {
	const n = numBins
	const rate = -26e-6
	const recent = n - shortBins
	tests := []struct {
		name string
		off  float64 // the drift known so far, less the clock's
	}{
		{"drift known", 0},
		{"drift 28 ppm high", 28e-6},
		{"drift 28 ppm low", -28e-6},
		{"drift 60 ppm high", 60e-6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var worst float64
			for seed := uint64(1); seed <= 20; seed++ {
				r := rand.New(rand.NewPCG(seed, 135))
				qu := ouQueue(r, n, 12*ms, 3)
				qw := ouQueue(r, n, 8*ms, 12)
				for k := recent; k < n; k++ {
					qw[k] = r.Int64N(int64(50 * time.Microsecond))
				}
				e := newEst(t)
				tilt := func(k int) int64 { return int64(rate * float64(int64(k)*binDuration)) }
				fillBins(e, n,
					func(k int) int64 { return 7*int64(ms) + tilt(k) + qu[k] },
					func(k int) int64 { return 7*int64(ms) - tilt(k) + qw[k] })
				cutSegments(e, false, queueCuts(qu, 10*ms)...)
				cutSegments(e, true, queueCuts(qw[:recent], 5*ms)...)
				e.r, e.fitted = rate+tc.off, true
				worst = max(worst, driftFitErr(t, e, rate))
			}
			if worst > 1e-6 {
				t.Errorf("worst drift error over 20 seeds %.2f ppm, want <= 1", worst*1e6)
			}
		})
	}
}

// cutSegments puts one direction's bins (the uplink's, or with down the
// downlink's) from each index in at on into a new path segment, as the
// path tracker's shiftBins leaves them.
func cutSegments(e *Estimator, down bool, at ...int) {
	for k := 0; k < e.binN; k++ {
		seg := 0
		for _, a := range at {
			if k >= a {
				seg++
			}
		}
		if down {
			e.bins[k].segW = seg
		} else {
			e.bins[k].segU = seg
		}
	}
}

// queueCuts returns where the path tracker would cut a direction whose
// floor carries queue q: wherever it moved by more than tol from where it
// was at the last cut, as a floor's move past its tolerance from the
// reference is taken for a path change.
func queueCuts(q []int64, tol time.Duration) []int {
	var at []int
	ref := q[0]
	for k := 1; k < len(q); k++ {
		if d := q[k] - ref; d > int64(tol) || d < -int64(tol) {
			at, ref = append(at, k), q[k]
		}
	}
	return at
}

// ouQueue returns n bin minima of an Ornstein–Uhlenbeck queue of standard
// deviation sd and correlation time tauBins bins, folded at zero and
// starting empty: a queue that swells and ebbs over tens of seconds and
// reaches the floor now and then.
func ouQueue(r *rand.Rand, n int, sd time.Duration, tauBins float64) []int64 {
	rho := math.Exp(-1 / tauBins)
	v := make([]int64, n)
	q := 0.0
	for k := range v {
		q = rho*q + math.Sqrt(1-rho*rho)*float64(sd)*r.NormFloat64()
		v[k] = int64(math.Abs(q))
	}
	return v
}

// driftFitErr returns how far e's drift fit is from rate.
func driftFitErr(t *testing.T, e *Estimator, rate float64) float64 {
	t.Helper()
	got, _, ok := e.driftFit()
	if !ok {
		t.Fatal("no fit")
	}
	return math.Abs(got - rate)
}
