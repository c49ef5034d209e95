package clocksync

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestJumpKeepsTheDrift: on a clock 450 ppm off, known to a fraction of a
// ppm after six minutes, the client's clock steps 460ms forward and a
// 150ms downlink bloat builds 5 s later, on a path with 2ms of
// exponential jitter each way. The rate is the same after the step;
// fitted again on the seconds after it, with the bloat's ramp in them, it
// went 8 to 16 ppm off (random:101 seed 4, heavier, 477 ppm). Kept
// across the step, the drift holds.
func TestJumpKeepsTheDrift(t *testing.T) {
	const (
		jumpAt  = 6 * time.Minute
		bloatAt = jumpAt + 5*time.Second
		bloat   = 150 * ms
		base    = 2 * ms
		end     = jumpAt + 4*time.Minute
	)
	for seed := uint64(1); seed <= 3; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 101)), offset: 4 * time.Second, driftPPM: 450,
			up: base, down: base, jitUp: exponential(2 * ms), jitDn: exponential(2 * ms),
			jumpAt: jumpAt, jumpBy: 460 * ms}
		shape := func(now time.Duration) {
			p.down = base
			switch d := now - bloatAt; {
			case d < 0:
			case d < 5*time.Second:
				p.down += time.Duration(float64(bloat) * float64(d) / float64(5*time.Second))
			case d < 60*time.Second:
				p.down += bloat
			case d < 100*time.Second:
				p.down += time.Duration(float64(bloat) * float64(100*time.Second-d) / float64(40*time.Second))
			}
		}
		e := newEst(t)
		feed(t, e, p, 0, jumpAt+10*time.Second, 0, shape)
		if e.Stats().Jumps != 1 {
			t.Fatalf("seed %d: %d jumps seen, want 1", seed, e.Stats().Jumps)
		}
		var worstRate float64
		var worst time.Duration
		covered, total := 0, 0
		for at := jumpAt + 10*time.Second; at < end; at += 10 * time.Second {
			w, c, n := feed(t, e, p, at, at+10*time.Second, 0, shape)
			worst, covered, total = max(worst, w), covered+c, total+n
			worstRate = max(worstRate, math.Abs(e.r*1e6-p.driftPPM))
		}
		if worstRate > 5 {
			t.Errorf("seed %d: the drift went %.1f ppm off after the jump, want <= 5", seed, worstRate)
		}
		if worst > 1500*time.Microsecond {
			t.Errorf("seed %d: worst error %v after the jump, want <= 1.5ms", seed, worst)
		}
		wantCovered(t, covered, total, "seed %d", seed)
	}
}

// TestJumpWithANewRateTakesIt: the client's clock steps 50ms and, from
// the same moment, runs 300 ppm slower (a slew whose start was read as a
// step). The bins since the step disagree with the history kept across it
// in both directions alike, and the drift follows them 16 s after the
// step.
func TestJumpWithANewRateTakesIt(t *testing.T) {
	const jumpAt = 6 * time.Minute
	for seed := uint64(1); seed <= 3; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 585)), offset: -2 * time.Second, driftPPM: -40,
			up: 15 * ms, down: 15 * ms, jitUp: uniform(200 * time.Microsecond), jitDn: uniform(200 * time.Microsecond),
			jumpAt: jumpAt, jumpBy: 50 * ms, slewFrom: jumpAt, slewTo: time.Hour, slewPPM: 300}
		e := newEst(t)
		feed(t, e, p, 0, jumpAt+time.Minute, 0, nil)
		if e.Stats().Jumps == 0 {
			t.Fatalf("seed %d: the step went unseen (stats %+v)", seed, e.Stats())
		}
		worst, covered, total := feed(t, e, p, jumpAt+time.Minute, jumpAt+4*time.Minute, 0, nil)
		// The client's clock runs 300 ppm slower: the server is 300 ppm
		// faster against it.
		if want := p.driftPPM + p.slewPPM; math.Abs(e.r*1e6-want) > 10 {
			t.Errorf("seed %d: drift %.1f ppm, want %.0f ± 10", seed, e.r*1e6, want)
		}
		// Held at the old rate the error would grow 18ms a minute; the
		// seconds before the bins since the step outvote the history
		// leave up to 2.2ms (seed 3, as when the history was dropped).
		if worst > 3*time.Millisecond {
			t.Errorf("seed %d: worst error %v, want <= 3ms", seed, worst)
		}
		wantCovered(t, covered, total, "seed %d", seed)
	}
}

// TestLongestBefore: the longest round trip of the samples before a
// doubted fall, which bounds any path's move; the clock's offset is no
// part of it.
func TestLongestBefore(t *testing.T) {
	e := newEst(t)
	for i, rtt := range []time.Duration{40 * ms, 55 * ms, 42 * ms, 70 * ms, 41 * ms, 900 * ms} {
		tc := int64(time.Duration(i) * time.Second)
		e.add(tc, int64(rtt/2)+int64(5*time.Second), int64(rtt/2)-int64(5*time.Second)) // a clock 5 s off: u and w move, u+w does not
	}
	for _, tc := range []struct {
		name string
		at   time.Duration
		want int64
	}{
		{"before the first", 0, math.MaxInt64},
		{"after two", 2 * time.Second, int64(55 * ms)},
		{"after five", 5 * time.Second, int64(70 * ms)},
		{"after all", 10 * time.Second, int64(900 * ms)},
	} {
		d := &doubt{at: int64(tc.at)}
		if got := e.longestBefore(d); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, time.Duration(got), time.Duration(tc.want))
		}
	}
}

// TestJumpThenSlewHoldsTheNewRate: the client's clock steps 35ms and,
// 2 s later, a +400 ppm slew begins and runs for 88 s, on a path with
// 6ms of uplink and 3ms of downlink jitter (the hand-written
// server-migration). Once the bins since the step show the new rate, the
// drift holds it until the slew ends: the history from before the step is
// of another rate. (On the build before, seed 6 went back to the old
// rate, 400 ppm off, when one bin's slopes were too scattered to judge.)
// The slew's end is then seen as a return to the rate before.
func TestJumpThenSlewHoldsTheNewRate(t *testing.T) {
	const jumpAt = 5 * time.Minute
	for seed := uint64(1); seed <= 12; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 7)), offset: -2 * time.Second, driftPPM: -30,
			up: 14 * ms, down: 14 * ms, jitUp: uniform(6 * ms), jitDn: uniform(3 * ms),
			jumpAt: jumpAt, jumpBy: 35 * ms, slewFrom: jumpAt + 2*time.Second, slewTo: jumpAt + 90*time.Second, slewPPM: 400}
		e := newEst(t)
		feed(t, e, p, 0, jumpAt+20*time.Second, 0, nil)
		if s := e.Stats(); s.Jumps != 1 {
			t.Fatalf("seed %d: %d jumps seen, want 1", seed, s.Jumps)
		}
		worstRate := 0.0
		for at := jumpAt + 20*time.Second; at < jumpAt+90*time.Second; at += time.Second {
			feed(t, e, p, at, at+time.Second, 0, nil)
			worstRate = max(worstRate, math.Abs(e.r*1e6-(p.driftPPM+p.slewPPM)))
		}
		if worstRate > 100 {
			t.Errorf("seed %d: the drift went %.0f ppm off the slew's rate during it, want <= 100", seed, worstRate)
		}
		_, covered, total := feed(t, e, p, jumpAt+90*time.Second, jumpAt+4*time.Minute, 0, nil)
		if s := e.Stats(); s.ClockShifts == 0 {
			t.Errorf("seed %d: the slew's end went unseen (stats %+v)", seed, s)
		}
		if got := e.r * 1e6; math.Abs(got-p.driftPPM) > 10 {
			t.Errorf("seed %d: drift %.1f ppm after the slew, want %.0f ± 10", seed, got, p.driftPPM)
		}
		wantCovered(t, covered, total, "seed %d", seed)
	}
}
