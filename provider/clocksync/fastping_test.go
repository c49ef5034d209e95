package clocksync

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestFastPingsAcquireForSeconds: pinged at 50 Hz, the floors of a jittery
// path (±20ms uniform each way) are still settling after 64 samples
// (1.3s). Taken for a path change then, their fall stayed in A, as an
// error for the whole run (1.0-1.7ms on 3 of these 30 seeds); an
// acquisition now lasts at least acquireMin.
func TestFastPingsAcquireForSeconds(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 50)), offset: 4 * time.Second, driftPPM: 25,
			up: 100 * ms, down: 100 * ms, jitUp: uniform(40 * ms), jitDn: uniform(40 * ms)}
		e := newEst(t)
		worst, _, _ := run(t, e, p, 0, 3*time.Minute, 20*time.Millisecond, 30*time.Second)
		if worst > 500*time.Microsecond {
			t.Errorf("seed %d: worst error %v after 30s, want < 0.5ms (stats %+v)", seed, worst, e.Stats())
		}
	}
}

// TestPingsInFlightAcrossABackwardStep: at 50 Hz on a 90ms round trip,
// four or five pings are in flight when the client's clock steps back.
// Each reads a round trip short by the step, its uplink delta of the old
// clock and its downlink's of the new one: they are set aside, and the
// step is a jump (before, the whole step stayed as error, under a bound
// that covered 6% of the time). A path that gets shorter instead keeps its
// short round trips: they count.
func TestPingsInFlightAcrossABackwardStep(t *testing.T) {
	tests := []struct {
		name      string
		by        time.Duration // the client step (negative: back)
		shorter   time.Duration // or the uplink gets this much shorter
		shorterDn time.Duration // or the downlink
		jumps     int64
		straddled bool
	}{
		{"step back 5ms", -5 * ms, 0, 0, 1, true},
		{"step back 20ms", -20 * ms, 0, 0, 1, true},
		{"step back 45ms", -45 * ms, 0, 0, 1, true},
		{"step back 60ms", -60 * ms, 0, 0, 1, true},
		{"uplink 20ms shorter", 0, 20 * ms, 0, 0, false},
		// Its short round trips look like straddlers: held for a round
		// trip, then counted.
		{"downlink 20ms shorter", 0, 0, 20 * ms, 0, false},
	}
	for _, tt := range tests {
		for seed := uint64(1); seed <= 3; seed++ {
			p := &path{rng: rand.New(rand.NewPCG(seed, 51)), offset: -3 * time.Second, driftPPM: -40,
				up: 45 * ms, down: 45 * ms, jitUp: exponential(300 * time.Microsecond), jitDn: exponential(1500 * time.Microsecond)}
			if tt.by != 0 {
				p.jumpAt, p.jumpBy = 2*time.Minute, tt.by
			}
			e := newEst(t)
			run(t, e, p, 0, 2*time.Minute, 20*time.Millisecond, 0)
			p.up -= tt.shorter
			p.down -= tt.shorterDn
			worst, covered, total := run(t, e, p, 2*time.Minute, 4*time.Minute, 20*time.Millisecond, 2*time.Minute+10*time.Second)
			st := e.Stats()
			if worst > 500*time.Microsecond || st.Jumps != tt.jumps || (st.Straddled > 0) != tt.straddled {
				t.Errorf("%s, seed %d: worst error %v from 10s on, want < 0.5ms; stats %+v, want %d jumps, straddled %v",
					tt.name, seed, worst, st, tt.jumps, tt.straddled)
			}
			if c := float64(covered) / float64(total); c < 0.99 {
				t.Errorf("%s, seed %d: bound covers %.2f%%, want >= 99%%", tt.name, seed, 100*c)
			}
		}
	}
}
