package clocksync

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestBoundIsNeverNegative: a large client step lands while the floors
// still bend from a slew that ended. Its first samples, below the floor,
// are not yet a jump (JumpConfirm); the bend's detector must not take
// them for the slew's end, nor the newest samples, which straddle the
// step, bound the offset: their floors sum to less than nothing.
func TestBoundIsNeverNegative(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		for k := range 8 {
			p := &path{rng: rand.New(rand.NewPCG(seed, uint64(k))), offset: 4 * time.Second, driftPPM: -30,
				up: 2 * ms, down: 2 * ms, jitUp: uniform(1500 * time.Microsecond), jitDn: uniform(1600 * time.Microsecond),
				slewFrom: 60 * time.Second, slewTo: 180 * time.Second, slewPPM: -216,
				jumpAt: 190*time.Second + time.Duration(k)*1300*ms + 50*ms, jumpBy: 740 * ms}
			e := newEst(t)
			var neg int
			feed(t, e, p, 0, 4*time.Minute, 0, func(time.Duration) {
				if est := e.Estimate(); est.Valid && est.ErrorBound < 0 {
					neg++
				}
			})
			if neg > 0 {
				t.Errorf("seed %d, step %d: a negative bound %d times", seed, k, neg)
			}
		}
	}
}

// TestRecentFloorsAcrossAStepBoundNothing: two samples after a 740ms step
// of the client clock, too few yet for a jump, are among the newest: their
// uplink floor and the older samples' downlink floor sum to less than
// nothing, which bounds no offset.
func TestRecentFloorsAcrossAStepBoundNothing(t *testing.T) {
	p := &path{rng: rand.New(rand.NewPCG(1, 1)), offset: 4 * time.Second,
		up: 2 * ms, down: 2 * ms, jitUp: uniform(time.Millisecond), jitDn: uniform(time.Millisecond)}
	e := newEst(t)
	feed(t, e, p, 0, time.Minute, 0, nil)
	p.jumpAt, p.jumpBy = time.Minute, 740*ms
	feed(t, e, p, time.Minute, time.Minute+200*ms, 0, nil)
	if e.belowU+e.belowW == 0 || e.Stats().Jumps != 0 {
		t.Fatalf("want the step's first samples held out, unconfirmed: below %d/%d, stats %+v", e.belowU, e.belowW, e.Stats())
	}
	now := e.t[e.at(e.n-1)]
	if a, ok := e.newestAllow(now); ok {
		t.Fatalf("newestAllow = %+v, want no bound", a)
	}
}

// TestSpacingLeavesOutHeldSamples: the samples held out below a floor (a
// jump not yet confirmed) are not the floor's precision; counted, the
// spacing of the lowest values would be the jump's size.
func TestSpacingLeavesOutHeldSamples(t *testing.T) {
	e := newEst(t)
	for i := range 20 {
		e.ud[i] = int64(100*ms) + int64(i)*int64(10*time.Microsecond)
	}
	e.ud[18], e.ud[19] = -int64(2200*ms), -int64(2200*ms) // a 2.3 s step's first two samples
	e.n = 20
	held, _ := e.floorScales(e.ud)
	e.belowU = 2
	got, _ := e.floorScales(e.ud)
	if want := int64(10 * time.Microsecond); got != want {
		t.Errorf("spacing %v, want %v (with the held samples: %v)", time.Duration(got), time.Duration(want), time.Duration(held))
	}
}

// TestNewestAllow: the newest samples put the offset between minus their
// downlink floor and their uplink floor; an estimate beyond either end, by
// more than the drift's error moves them, is one they prove wrong: its
// bound must reach the far end, and the nearest end is the better offset.
func TestNewestAllow(t *testing.T) {
	e := newEst(t)
	// 20 samples 100 ms apart, detrended uplink floor 3 ms and downlink
	// floor 2 ms: the offset lies in [−2 ms, 3 ms].
	for i := range 20 {
		e.t[i] = int64(i) * int64(100*ms)
		e.ud[i] = int64(3*ms) + int64(i%4)*int64(time.Millisecond)
		e.wd[i] = int64(2*ms) + int64(i%3)*int64(time.Millisecond)
	}
	e.n = 20
	e.fitted, e.rSE, e.rSEBound = true, 0, 0
	now := e.t[19]
	tilt := int64(20 * time.Microsecond)
	a, ok := e.newestAllow(now)
	if !ok {
		t.Fatal("newestAllow: no interval")
	}
	tests := []struct {
		theta   time.Duration
		hard    time.Duration
		outside bool
		nearest time.Duration
	}{
		{0, 3 * ms, false, 0},
		{3 * ms, 5 * ms, false, 3 * ms},
		{-2 * ms, 5 * ms, false, -2 * ms},
		{4 * ms, 6 * ms, true, 3 * ms},
		{-7 * ms, 10 * ms, true, -2 * ms},
	}
	for _, tt := range tests {
		h, out, near := a.hard(int64(tt.theta)), a.excludes(int64(tt.theta)), a.nearest(int64(tt.theta))
		wantNear := int64(tt.nearest)
		if tt.outside {
			wantNear += int64(math.Copysign(float64(tilt), float64(tt.theta))) // the interval's end, widened by the tilt
		}
		if h != int64(tt.hard)+tilt || out != tt.outside || near != wantNear {
			t.Errorf("θ = %v: hard %v, outside %v, nearest %v; want %v, %v, %v", tt.theta, time.Duration(h-tilt), out, time.Duration(near), tt.hard, tt.outside, time.Duration(wantNear))
		}
	}
}

// TestSoftExcessFollowsTheFloorShape: the 16 lowest values of a floor
// whose density grows as (x − floor)^(β−1) sit at c·k^(1/β) above it. For
// every β between 1 and 3, not only the whole ones, the estimate of the
// lowest's excess is c: between classes it neither vanishes nor doubles
// (it did, and the bound flipped with it from one sample to the next).
func TestSoftExcessFollowsTheFloorShape(t *testing.T) {
	const c = 100 * time.Microsecond
	for a := 1.0 / 3; a <= 0.95; a += 0.01 {
		var low [16]int64
		for k := range low {
			low[k] = int64(7*ms) + int64(float64(c)*math.Pow(float64(k+1), a))
		}
		got := time.Duration(softExcess(low))
		if d := got - c; d < -3*time.Microsecond || d > 3*time.Microsecond {
			t.Errorf("1/β = %.2f: excess %v, want %v ± 3µs", a, got, c)
		}
	}
}

// TestSoftExcessIsHeld: the bound takes the largest clearly soft estimate
// of the last window, let go over it; estimates within twice the spacing
// (a finite density's floor, which the spacing covers) are not held.
func TestSoftExcessIsHeld(t *testing.T) {
	const window = int64(60 * time.Second)
	type step struct {
		v, spacing time.Duration
		at         time.Duration
		want       time.Duration
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a dip is held", []step{
			{400 * time.Microsecond, 70 * time.Microsecond, time.Second, 400 * time.Microsecond},
			{60 * time.Microsecond, 50 * time.Microsecond, 2 * time.Second, 393 * time.Microsecond},
		}},
		{"let go over a window", []step{
			{400 * time.Microsecond, 70 * time.Microsecond, time.Second, 400 * time.Microsecond},
			{0, 50 * time.Microsecond, 31 * time.Second, 200 * time.Microsecond},
			{0, 50 * time.Microsecond, 61 * time.Second, 100 * time.Microsecond},
		}},
		{"a rise is taken at once", []step{
			{100 * time.Microsecond, 10 * time.Microsecond, time.Second, 100 * time.Microsecond},
			{500 * time.Microsecond, 10 * time.Microsecond, 2 * time.Second, 500 * time.Microsecond},
		}},
		{"not soft: not held", []step{
			{90 * time.Microsecond, 60 * time.Microsecond, time.Second, 90 * time.Microsecond},
			{0, 60 * time.Microsecond, 2 * time.Second, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h heldSoft
			for i, s := range tt.steps {
				got := time.Duration(h.hold(int64(s.v), int64(s.spacing), int64(s.at), window))
				if d := got - s.want; d < -time.Microsecond || d > time.Microsecond {
					t.Errorf("step %d: %v, want %v", i, got, s.want)
				}
			}
		})
	}
}

// TestSlowStart: the first window reads a soft floor off 2·16 values
// where 4·16 would take more than a quarter of it to come (2 Hz: 32 s of
// a 60 s window); at 10 Hz, or once the first window has passed, it waits
// for 4·16 as before.
func TestSlowStart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		every time.Duration
		at    time.Duration
		want  bool
	}{
		{"2 Hz, 20 s in", 500 * time.Millisecond, 20 * time.Second, true},
		{"1 Hz, 10 s in", time.Second, 10 * time.Second, true},
		{"4 Hz, 10 s in (16 s for 64)", 250 * time.Millisecond, 10 * time.Second, true},
		{"5 Hz, 10 s in (12.8 s for 64)", 200 * time.Millisecond, 10 * time.Second, false},
		{"10 Hz, 5 s in", 100 * time.Millisecond, 5 * time.Second, false},
		{"2 Hz, past the first window", 500 * time.Millisecond, 70 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &path{rng: rand.New(rand.NewPCG(1, 2)), offset: time.Second,
				up: 20 * ms, down: 20 * ms, jitUp: exponential(ms), jitDn: exponential(ms)}
			e := newEst(t)
			for now := time.Duration(0); now <= tc.at; now += tc.every {
				if err := e.Observe(p.exchange(now)); err != nil {
					t.Fatal(err)
				}
			}
			if got := e.slowStart(64); got != tc.want {
				t.Errorf("slowStart(64) = %v, want %v", got, tc.want)
			}
		})
	}
}
