package clocksync

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestSlewUnderWideJitterIsSeenOverLongerBins: the client clock slews by
// -150 ppm for 4 minutes under 8 ms of half-normal uplink jitter and 6 ms
// of triangular downlink jitter (random:104's). Over the newest 16 s of
// drift bins the slopes are known to ±100 ppm, too loosely to see the
// slew's end; over 28 s they show it. Replayed: of seeds 1..12 of this
// path, these two saw one end only before (the error after it 4.4 and
// 3.4 ms) and see both now (1.7 and 1.4 ms).
func TestSlewUnderWideJitterIsSeenOverLongerBins(t *testing.T) {
	for _, seed := range []uint64{2, 5} {
		p := &path{rng: rand.New(rand.NewPCG(seed, 104)), offset: 2 * time.Second, driftPPM: 11,
			up: 16 * ms, down: 16 * ms, jitUp: halfNormal(8 * ms), jitDn: triangular(6 * ms),
			slewFrom: 4 * time.Minute, slewTo: 8 * time.Minute, slewPPM: -150}
		e := newEst(t)
		feed(t, e, p, 0, 8*time.Minute, 0, nil)
		worst, covered, total := feed(t, e, p, 8*time.Minute, 12*time.Minute, 0, nil)
		if st := e.Stats(); st.ClockShifts != 2 {
			t.Errorf("seed %d: %d clock shifts, want one at each end of the slew (stats %+v)", seed, st.ClockShifts, st)
		}
		if worst > 2*ms {
			t.Errorf("seed %d: worst error %v after the slew, want < 2ms", seed, worst)
		}
		if frac := float64(covered) / float64(total); frac < 0.99 {
			t.Errorf("seed %d: bound covered %.2f%%, want >= 99%%", seed, 100*frac)
		}
	}
}
