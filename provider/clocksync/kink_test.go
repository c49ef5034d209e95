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
		wantCovered(t, covered, total, "seed %d", seed)
	}
}

// powerSave is a Wi-Fi client's downlink in power save: each packet waits
// for the access point's next beacon, 102.4 ms apart, so the wait is
// uniform over the beacon interval, plus jitter.
func powerSave(jit func(*rand.Rand) time.Duration) func(*rand.Rand) time.Duration {
	return func(r *rand.Rand) time.Duration {
		return time.Duration(r.Int64N(int64(102400*time.Microsecond))) + jit(r)
	}
}

// slewUnderPowerSave is random:171's path: an 82 ms round trip, quiet
// but for the downlink's power save, and the client clock slewing by
// +365 ppm from 3 minutes until slewTo.
func slewUnderPowerSave(seed uint64, slewTo time.Duration) *path {
	return &path{rng: rand.New(rand.NewPCG(seed, 171)), offset: time.Second, driftPPM: 12,
		up: 41 * ms, down: 41 * ms, jitUp: triangular(130 * time.Microsecond), jitDn: powerSave(halfNormal(650 * time.Microsecond)),
		slewFrom: 3 * time.Minute, slewTo: slewTo, slewPPM: 365}
}

// TestSlewEndUnderPowerSaveIsSeenInOneDirection: the client clock slews
// by +365 ppm for 3.5 minutes while the downlink waits for Wi-Fi beacons
// (random:171's path). Over 16 s of drift bins the downlink's slope is
// known to ±500–2000 ppm and never bends alike with the uplink, whose
// floor shows the slew's end at once; the uplink alone is taken, as its
// rate is the one the slew left.
func TestSlewEndUnderPowerSaveIsSeenInOneDirection(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		p := slewUnderPowerSave(seed, 6*time.Minute+30*time.Second)
		e := newEst(t)
		feed(t, e, p, 0, p.slewTo, 0, nil)
		shifts := e.Stats().ClockShifts
		worst, covered, total := feed(t, e, p, p.slewTo, 10*time.Minute, 0, nil)
		if got := e.Stats().ClockShifts - shifts; shifts != 1 || got != 1 {
			t.Errorf("seed %d: %d clock shifts during the slew and %d after it began to end, want 1 and 1", seed, shifts, got)
		}
		if worst > 2*ms {
			t.Errorf("seed %d: worst error %v after the slew, want < 2ms", seed, worst)
		}
		wantCovered(t, covered, total, "seed %d", seed)
	}
}

// TestQueueRampUnderPowerSaveIsNoSlewEnd: during the slew above, a queue
// builds on the uplink at 0.2 ms a second for a minute and drains. Seen
// in the uplink alone it bends its floor as a clock would, but at a rate
// the slew did not leave, so it is not taken for the slew's end.
func TestQueueRampUnderPowerSaveIsNoSlewEnd(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		p := slewUnderPowerSave(seed, 9*time.Minute)
		e := newEst(t)
		feed(t, e, p, 0, 5*time.Minute, 0, nil)
		shifts := e.Stats().ClockShifts
		ramp := func(now time.Duration) {
			q := min(max(now-5*time.Minute, 0), time.Minute) / 5000
			if now > 6*time.Minute+30*time.Second {
				q = 0
			}
			p.up = 41*ms + q
		}
		feed(t, e, p, 5*time.Minute, 8*time.Minute, 0, ramp)
		if got := e.Stats().ClockShifts - shifts; shifts != 1 || got != 0 {
			t.Errorf("seed %d: %d clock shifts at the slew's start and %d in the queue's time, want 1 and 0", seed, shifts, got)
		}
	}
}

// TestSlewEndSeenInOneDirectionKeepsAStepBeforeIt: as above, and 5 s
// after the slew ends the uplink's route gets 20 ms shorter. The slew's
// end is seen in the uplink alone some seconds later; the path change the
// fall was taken for is no move the rate's change can have made, and
// stays.
func TestSlewEndSeenInOneDirectionKeepsAStepBeforeIt(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		p := slewUnderPowerSave(seed, 6*time.Minute+30*time.Second)
		e := newEst(t)
		feed(t, e, p, 0, p.slewTo, 0, nil)
		shorter := func(now time.Duration) {
			if now >= p.slewTo+5*time.Second {
				p.up = 21 * ms
			}
		}
		worst, covered, total := feed(t, e, p, p.slewTo, 10*time.Minute, 0, shorter)
		if st := e.Stats(); st.ClockShifts != 2 {
			t.Errorf("seed %d: %d clock shifts, want one at each end of the slew", seed, st.ClockShifts)
		}
		// Undone, the route's change costs half of it: 10 ms.
		if worst > 4*ms {
			t.Errorf("seed %d: worst error %v after the slew, want < 4ms", seed, worst)
		}
		wantCovered(t, covered, total, "seed %d", seed)
	}
}
