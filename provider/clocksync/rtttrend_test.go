package clocksync

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestDrainBesideASoftFloorIsNoClock (random:187): an uplink bloat builds
// to 80 ms in 10 s, holds 20 s and drains at 1 ms a second, beside 30 ms
// of triangular downlink jitter, whose minimum over a few samples sits
// milliseconds above its floor. Read as the clock moving, the drain walked
// the offset 6 to 8 ms between path changes; the round trip, falling with
// it, says it is the path.
func TestDrainBesideASoftFloorIsNoClock(t *testing.T) {
	var worsts []time.Duration
	for seed := uint64(1); seed <= 8; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 77)), offset: 3 * time.Second, driftPPM: -18,
			up: 100 * ms, down: 100 * ms, jitUp: exponential(60 * time.Microsecond), jitDn: triangular(30 * ms)}
		e := newEst(t)
		feed(t, e, p, 0, 2*time.Minute, 0, nil)
		bloat := func(now time.Duration) {
			var q time.Duration
			switch s := now - 2*time.Minute; {
			case s < 10*time.Second:
				q = 8 * s / 1000
			case s < 30*time.Second:
				q = 80 * ms
			case s < 110*time.Second:
				q = 80*ms - (s-30*time.Second)/1000
			}
			p.up = 100*ms + q
		}
		worst, covered, total := feed(t, e, p, 2*time.Minute, 5*time.Minute, 0, bloat)
		worsts = append(worsts, worst)
		wantCovered(t, covered, total, "seed %d", seed)
		if st := e.Stats(); st.Jumps != 0 || st.ClockShifts != 0 {
			t.Errorf("seed %d: stats %+v, want no clock event", seed, st)
		}
	}
	slices.Sort(worsts)
	t.Logf("worst error per seed: %v", worsts)
	if med := worsts[len(worsts)/2]; med > 1500*time.Microsecond {
		t.Errorf("median worst error %v, want <= 1.5ms", med)
	}
	if w := worsts[len(worsts)-1]; w > 2500*time.Microsecond {
		t.Errorf("worst error %v, want <= 2.5ms", w)
	}
}

// TestRoundTripSlope: the round trip's trend over the newest bins, each
// path segment centred on its own.
func TestRoundTripSlope(t *testing.T) {
	const bins = rttTrendBins
	tests := []struct {
		name      string
		rtt       func(k int) int64 // round-trip floor of bin k, ns
		seg       func(k int) int   // uplink segment of bin k
		n         int
		wantSlope float64 // s/s
		wantOK    bool
	}{
		{"flat", func(int) int64 { return int64(20 * ms) }, func(int) int { return 0 }, bins, 0, true},
		{"draining 1 ms a second", func(k int) int64 { return int64(100*ms) - int64(k)*int64(2*ms) }, func(int) int { return 0 }, bins, -1e-3, true},
		{"a one-way step between segments is no trend",
			func(k int) int64 {
				if k < bins/2 {
					return int64(30 * ms)
				}
				return int64(10 * ms)
			},
			func(k int) int {
				if k < bins/2 {
					return 0
				}
				return 1
			}, bins, 0, true},
		{"too few bins", func(int) int64 { return int64(20 * ms) }, func(int) int { return 0 }, rttTrendMin - 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEst(t)
			for k := 0; k < tt.n; k++ {
				rtt := tt.rtt(k)
				e.bins[k] = bin{start: int64(k) * binDuration, n: 20, minU: rtt / 2, minW: rtt - rtt/2, segU: tt.seg(k)}
			}
			e.binN = tt.n
			slope, se, ok := e.rttSlope()
			if ok != tt.wantOK {
				t.Fatalf("ok %v, want %v", ok, tt.wantOK)
			}
			if ok && (math.Abs(slope-tt.wantSlope) > 1e-9 || se > 1e-9) {
				t.Errorf("slope %.3g ± %.3g, want %.3g exactly", slope, se, tt.wantSlope)
			}
		})
	}
}
