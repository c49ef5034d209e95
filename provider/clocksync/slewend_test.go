package clocksync

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestSlewEndIsSeenWithinSeconds: the client clock slews and stops. The
// slew's start is seen as any rate change is; its end returns to the rate
// it left, which the hinge test sees within 11 s on these paths
// (random:183's, random:65's and random:188's). Fitting the newest bins
// alone saw 2 of the 9 ends that soon, and two not in the 2 minutes after.
func TestSlewEndIsSeenWithinSeconds(t *testing.T) {
	tests := []struct {
		name         string
		jitUp, jitDn func(*rand.Rand) time.Duration
		slewPPM      float64
	}{
		{"jittery uplink, clean downlink", exponential(1500 * time.Microsecond), uniform(0), -103},
		{"both jittery", uniform(886 * time.Microsecond), exponential(time.Millisecond), 121},
		{"fast slew", exponential(time.Millisecond), exponential(time.Millisecond), -377},
	}
	for _, tt := range tests {
		for seed := uint64(1); seed <= 3; seed++ {
			p := &path{rng: rand.New(rand.NewPCG(seed, 183)), offset: 1500 * ms, driftPPM: 11,
				up: 5 * ms, down: 5 * ms, jitUp: tt.jitUp, jitDn: tt.jitDn,
				slewFrom: 3 * time.Minute, slewTo: 5 * time.Minute, slewPPM: tt.slewPPM}
			e := newEst(t)
			feed(t, e, p, 0, p.slewTo, 0, nil)
			if got := e.Stats().ClockShifts; got != 1 {
				t.Fatalf("%s, seed %d: %d clock shifts during the slew, want 1 (its start)", tt.name, seed, got)
			}
			feed(t, e, p, p.slewTo, p.slewTo+11*time.Second, 0, nil)
			if got := e.Stats().ClockShifts; got != 2 {
				t.Errorf("%s, seed %d: %d clock shifts 11s after the slew ended, want 2", tt.name, seed, got)
			}
			_, covered, total := feed(t, e, p, p.slewTo+11*time.Second, 7*time.Minute, 0, nil)
			if got := e.Stats().ClockShifts; got != 2 {
				t.Errorf("%s, seed %d: %d clock shifts by the end, want 2", tt.name, seed, got)
			}
			if frac := float64(covered) / float64(total); frac < 0.99 {
				t.Errorf("%s, seed %d: bound covered %.2f%% after the end, want >= 99%%", tt.name, seed, 100*frac)
			}
		}
	}
}

// TestQueueAtTheRateLeftIsNoReturn: during a slew, a queue builds on the
// downlink at just the rate by which the slew's end would raise that
// side's floor. The uplink, which the end would lower, is clean and stays
// where it was: no clock did that, and no return is taken.
func TestQueueAtTheRateLeftIsNoReturn(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 7)), offset: time.Second, driftPPM: 20,
			up: 10 * ms, down: 10 * ms, jitUp: uniform(200 * time.Microsecond), jitDn: uniform(200 * time.Microsecond),
			slewFrom: 2 * time.Minute, slewTo: 12 * time.Minute, slewPPM: 200}
		e := newEst(t)
		feed(t, e, p, 0, 5*time.Minute, 0, nil)
		shifts := e.Stats().ClockShifts
		queue := func(now time.Duration) {
			p.down = 10*ms + min(max(now-5*time.Minute, 0), 30*time.Second)/5000
		}
		feed(t, e, p, 5*time.Minute, 6*time.Minute, 0, queue)
		if got := e.Stats().ClockShifts - shifts; shifts != 1 || got != 0 {
			t.Errorf("seed %d: %d clock shifts at the slew's start and %d in the queue's time, want 1 and 0", seed, shifts, got)
		}
	}
}
