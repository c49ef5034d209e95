package clocksync

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestSinceDiscontinuity: a run below the floor keeps its samples unless
// the newest fell far further than all of them.
func TestSinceDiscontinuity(t *testing.T) {
	tests := []struct {
		name  string
		falls []time.Duration // how far each of the run's samples is below the floor, oldest first
		want  int
	}{
		{"a queue draining", []time.Duration{2 * ms, 3 * ms, 4 * ms}, 3},
		{"a step: all alike", []time.Duration{40 * ms, 39 * ms, 41 * ms}, 3},
		{"a step joins a drain", []time.Duration{2 * ms, 3 * ms, 3880 * ms}, 1},
		{"the step's own samples, once cut", []time.Duration{3881 * ms, 3880 * ms}, 2},
		{"a fall under a millisecond", []time.Duration{10 * time.Microsecond, 900 * time.Microsecond}, 2},
		{"one sample", []time.Duration{3880 * ms}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEst(t)
			floor := int64(100 * ms)
			for i, f := range tt.falls {
				e.w[e.at(i)] = floor - int64(f)
			}
			e.n = len(tt.falls)
			if got := e.sinceDiscontinuity(e.w, floor, len(tt.falls)); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

// TestStepDuringADrainIsAJump: the downlink's queue drains, so its floor
// falls a little sample by sample, when the client clock steps back by
// 3.9 s. The drain's samples began the run below the floor; the step's
// first sample ended it. Judged on all of them, the uplink had not risen
// and the step read as the downlink getting 3.9 s faster, half of it
// left in the offset.
func TestStepDuringADrainIsAJump(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 31)), offset: time.Second, driftPPM: -2,
			up: 16 * ms, down: 40 * ms, jitUp: uniform(200 * time.Microsecond), jitDn: exponential(500 * time.Microsecond),
			jumpAt: 90*time.Second + 250*ms, jumpBy: -3879 * ms}
		e := newEst(t)
		drain := func(now time.Duration) {
			if now >= 90*time.Second && now < 95*time.Second {
				p.down -= 400 * time.Microsecond // 4 ms/s: the queue drains to 20 ms
			}
		}
		feed(t, e, p, 0, 90*time.Second, 0, nil)
		feed(t, e, p, 90*time.Second, 100*time.Second, 0, drain)
		worst, _, _ := feed(t, e, p, 100*time.Second, 3*time.Minute, 0, nil)
		if st := e.Stats(); st.Jumps != 1 {
			t.Errorf("seed %d: %d jumps, want 1 (stats %+v)", seed, st.Jumps, st)
		}
		// The drain itself is a path change the offset must not follow:
		// what is left is the floors' precision and A's uncertainty.
		if worst > 25*ms {
			t.Errorf("seed %d: worst error %v after the step, want the step gone", seed, worst)
		}
	}
}
