package clocksync

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestShortMinBias: where a stretch of q samples' minimum sits above the
// floor of the samples before the span, per direction. A soft floor puts
// it well above (a thin density near the floor); a hard one just above; a
// window floor that is an older level, far below where the stretches
// cluster, is no softness and is capped by their spread; too short a
// history says nothing.
func TestShortMinBias(t *testing.T) {
	const n, span, q = 400, 40, 10
	soft := func(r *rand.Rand) int64 { // sum of eight exponentials: density ∝ x⁷ at the floor
		var x float64
		for range 8 {
			x += r.ExpFloat64()
		}
		return int64(x / 8 * float64(3*ms))
	}
	hard := func(r *rand.Rand) int64 { return int64(r.ExpFloat64() * float64(3*ms)) }
	tests := []struct {
		name        string
		n           int
		up, down    func(*rand.Rand) int64
		olderDown   int64 // added to the downlink's first 30 samples
		lowU, highU time.Duration
		lowW, highW time.Duration
		wantOK      bool
	}{
		{"soft uplink, hard downlink", n, soft, hard, 0, 500 * time.Microsecond, 2 * ms, 0, 400 * time.Microsecond, true},
		{"an older downlink level 9ms below: capped by the stretches' spread", n, hard, hard, -9 * int64(ms), 0, 400 * time.Microsecond, 0, 2 * ms, true},
		{"fewer than 16 stretches before the span", span + 15*q, soft, soft, 0, 0, 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, 8))
			e := newEst(t)
			for i := range tt.n {
				e.t[i] = int64(i) * int64(100*ms)
				e.ud[i] = tt.up(r)
				e.wd[i] = tt.down(r)
				if i < 30 {
					e.wd[i] += tt.olderDown
				}
			}
			e.n = tt.n
			bu, bw, ok := e.shortMinBias(span, q)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok {
				if bu != 0 || bw != 0 {
					t.Errorf("bias %v, %v without a history", time.Duration(bu), time.Duration(bw))
				}
				return
			}
			if d := time.Duration(bu); d < tt.lowU || d > tt.highU {
				t.Errorf("uplink bias %v, want in [%v, %v]", d, tt.lowU, tt.highU)
			}
			if d := time.Duration(bw); d < tt.lowW || d > tt.highW {
				t.Errorf("downlink bias %v, want in [%v, %v]", d, tt.lowW, tt.highW)
			}
		})
	}
}
