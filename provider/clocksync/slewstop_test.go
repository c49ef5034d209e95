package clocksync

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestShortSlewEndIsSeen: the client's time service slews its clock at
// 500 ppm for 20 s (10 ms), as a daemon's kernel slew does, on a path with
// 3 ms of normal jitter each way (corporate-vpn's). The slew's start is
// seen some seconds in, and its end comes before the acquisition that
// followed is over: the rate goes back to the one the slew left within
// 16 s of the end, not over the minutes a line through the bins since the
// start takes to bend back (on the build before: up to 3.4 ms of error).
func TestShortSlewEndIsSeen(t *testing.T) {
	tests := []struct {
		name    string
		slewPPM float64
		length  time.Duration
	}{
		{"500 ppm for 20 s", 500, 20 * time.Second},
		{"-500 ppm for 20 s", -500, 20 * time.Second},
		{"-250 ppm for 24 s", -250, 24 * time.Second},
	}
	for _, tt := range tests {
		for seed := uint64(1); seed <= 4; seed++ {
			p := &path{rng: rand.New(rand.NewPCG(seed, 840)), offset: 400 * ms, driftPPM: -48,
				up: 42 * ms, down: 42 * ms, jitUp: halfNormal(3 * ms), jitDn: halfNormal(3 * ms),
				slewFrom: 5 * time.Minute, slewTo: 5*time.Minute + tt.length, slewPPM: tt.slewPPM}
			e := newEst(t)
			feed(t, e, p, 0, p.slewTo, 0, nil)
			st := e.Stats()
			if st.ClockShifts+st.Jumps == 0 {
				t.Errorf("%s, seed %d: the slew's start went unseen: %+v", tt.name, seed, st)
				continue
			}
			feed(t, e, p, p.slewTo, p.slewTo+16*time.Second, 0, nil)
			if got := e.Stats().ClockShifts; got != st.ClockShifts+1 {
				t.Errorf("%s, seed %d: %d clock shifts 16 s after the slew ended, want %d", tt.name, seed, got, st.ClockShifts+1)
			}
			// The client's rate is the server's over the client's: a client
			// clock slower by driftPPM reads as a drift of about as much.
			if off := math.Abs(e.r*1e6 - p.driftPPM); off > 25 {
				t.Errorf("%s, seed %d: drift %.0f ppm 16 s after the slew ended, want within 25 ppm of %.0f", tt.name, seed, e.r*1e6, p.driftPPM)
			}
			worst, covered, total := feed(t, e, p, p.slewTo+16*time.Second, p.slewTo+3*time.Minute, 0, nil)
			if worst > 400*time.Microsecond {
				t.Errorf("%s, seed %d: worst error %v in the 3 minutes after, want <= 0.4ms", tt.name, seed, worst)
			}
			wantCovered(t, covered, total, "%s, seed %d", tt.name, seed)
		}
	}
}
