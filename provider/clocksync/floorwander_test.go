package clocksync

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestFloorWanderTellsAQueueFromJitter: the minima of 30 bins of
// independent jitter have no slow wander; those of a queue that swells and
// drains over the window have, though they change little from bin to bin.
func TestFloorWanderTellsAQueueFromJitter(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tests := []struct {
		name    string
		level   func(k int) float64 // ns
		slowMin time.Duration
		slowMax time.Duration
		fastMax time.Duration
	}{
		{"jitter", func(int) float64 { return r.ExpFloat64() * 1e6 }, 0, 0, 3 * time.Millisecond},
		{"queue", func(k int) float64 { return 10e6 * (1 + math.Sin(float64(k)/5)) }, 3 * time.Millisecond, 10 * time.Millisecond, 3 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := make([]int64, 30)
			for k := range v {
				v[k] = int64(tc.level(k))
			}
			fast, slow := wanderOf(v)
			if slow < int64(tc.slowMin) || slow > int64(tc.slowMax) || fast > int64(tc.fastMax) {
				t.Errorf("fast %v slow %v, want slow in [%v, %v], fast <= %v",
					time.Duration(fast), time.Duration(slow), tc.slowMin, tc.slowMax, tc.fastMax)
			}
		})
	}
}
