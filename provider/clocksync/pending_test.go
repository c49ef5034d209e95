package clocksync

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestPendingRises: a window of 400 samples 100ms apart, the newest span
// of them a jump's, the rest on floors of 10ms with 0.2ms of jitter each
// way; from sample 300 on, one side's samples are changed as each case
// says. A floor that moved by itself is a pending rise; a spread that
// widened, a rise the round trip does not show (a clock step's half), a
// run shorter than a rise must last, or a doubt open, are not. (The case
// of the round trip fails without that check, the widened spread without
// the mean excess's.)
func TestPendingRises(t *testing.T) {
	const (
		n, from, span = 400, 300, 3
		floor         = int64(10 * time.Millisecond)
	)
	tests := []struct {
		name    string
		from    int                             // first changed sample
		up      func(k int, r *rand.Rand) int64 // what the uplink's changed samples add
		down    func(k int, r *rand.Rand) int64 // what the downlink's changed samples add (the round trip's share)
		doubt   bool
		wantU   time.Duration // want pu within 0.3ms
		wantAny bool
	}{
		{"a route 15ms up", from, func(int, *rand.Rand) int64 { return int64(15 * ms) }, nil, false, 15 * ms, true},
		{"a spread that widened", from, func(_ int, r *rand.Rand) int64 { return int64(2*ms) + r.Int64N(int64(100*ms)) }, nil, false, 0, false},
		{"the round trip held: a clock's half", from, func(int, *rand.Rand) int64 { return int64(15 * ms) },
			func(int, *rand.Rand) int64 { return -int64(15 * ms) }, false, 0, false},
		{"too short to be a rise", n - span - 20, func(int, *rand.Rand) int64 { return int64(15 * ms) }, nil, false, 0, false},
		{"a doubt open", from, func(int, *rand.Rand) int64 { return int64(15 * ms) }, nil, true, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEst(t)
			rng := rand.New(rand.NewPCG(1, 2))
			e.head, e.n = 0, n
			for k := range n {
				i := e.at(k)
				e.t[i] = int64(k) * int64(100*ms)
				u := floor + rng.Int64N(int64(200*time.Microsecond))
				w := floor + rng.Int64N(int64(200*time.Microsecond))
				if k >= tt.from && k < n-span {
					u += tt.up(k, rng)
					if tt.down != nil {
						w += tt.down(k, rng)
					}
				}
				e.ud[i], e.wd[i] = u, w
			}
			// A drift known to 1 ppm: the tolerance is the floors', not
			// the unfitted prior's tilt over the window.
			e.fitted, e.rSE = true, 1e-6
			e.doubt.on = tt.doubt
			pu, pw := e.pendingRises(span, floor, floor)
			if pw != 0 {
				t.Errorf("pw = %v, want 0", time.Duration(pw))
			}
			if !tt.wantAny {
				if pu != 0 {
					t.Errorf("pu = %v, want 0", time.Duration(pu))
				}
				return
			}
			if d := time.Duration(pu) - tt.wantU; d < -300*time.Microsecond || d > 300*time.Microsecond {
				t.Errorf("pu = %v, want %v", time.Duration(pu), tt.wantU)
			}
		})
	}
}
