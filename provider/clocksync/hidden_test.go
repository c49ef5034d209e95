package clocksync

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSlewBehindARaisedRouteStaysInTheBound: the uplink's route flaps 25ms
// up and down every 45s on a 1ms round trip, and a 480 ppm slew begins
// while it is up. Its fall in the uplink is hidden behind the flap; the
// downlink's rise, under 1.5ms of jitter, takes seconds to be looked at,
// and the offset falls behind all along. The bound must cover it: before
// hidden.go it covered 84–90% of the slew's samples.
func TestSlewBehindARaisedRouteStaysInTheBound(t *testing.T) {
	for _, ppm := range []float64{480, -480} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("%+.0fppm/seed%d", ppm, seed), func(t *testing.T) {
				p := &path{rng: rand.New(rand.NewPCG(seed, 9)), offset: -4 * time.Second, driftPPM: 40,
					up: 500 * time.Microsecond, down: 500 * time.Microsecond, jitUp: uniform(0), jitDn: halfNormal(1500 * time.Microsecond),
					slewFrom: 600 * time.Second, slewTo: 700 * time.Second, slewPPM: ppm}
				flap := func(now time.Duration) {
					p.up = 500 * time.Microsecond
					if (now/(45*time.Second))%2 == 1 {
						p.up += 25 * ms
					}
				}
				e := newEst(t)
				feed(t, e, p, 0, 600*time.Second, 0, flap)
				_, covered, total := feed(t, e, p, 600*time.Second, 700*time.Second, 600*time.Second, flap)
				if frac := float64(covered) / float64(total); frac < 0.99 {
					t.Errorf("the bound covers %.1f%% of the slew's samples, want >= 99%%", 100*frac)
				}
			})
		}
	}
}

// TestHiddenRise: a rise counts only beyond the jitter, and only while the
// other direction's newest samples sit higher still above their floor.
func TestHiddenRise(t *testing.T) {
	const tol, mean = int64(100 * time.Microsecond), int64(1200 * time.Microsecond) // the rise must pass tol + 4·mean/12 = 0.5ms
	tests := []struct {
		name         string
		riseU, riseW time.Duration // the newest samples' minimum above each floor
		want         time.Duration
	}{
		{"in place", 0, 0, 0},
		{"downlink rose, uplink in place", 0, 3 * ms, 0},
		{"downlink rose, uplink hidden", 25 * ms, 3 * ms, 3 * ms},
		{"uplink rose, downlink hidden", 4 * ms, 9 * ms, 4 * ms},
		{"a rise within the jitter", 25 * ms, 400 * time.Microsecond, 0},
		{"both rose: the smaller, which the larger may hide", 2 * ms, 3 * ms, 2 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEst(t)
			for i := range hiddenSamples + 4 {
				e.t[i] = int64(i) * int64(100*ms)
				e.ud[i] = int64(tt.riseU) + int64(i%3)*int64(ms)
				e.wd[i] = int64(tt.riseW) + int64(i%5)*int64(ms)
			}
			e.n = hiddenSamples + 4
			if got := e.hiddenRise(0, 0, tol, tol, mean, mean); got != int64(tt.want) {
				t.Errorf("hiddenRise = %v, want %v", time.Duration(got), tt.want)
			}
		})
	}
}
