package clocksync

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestJumpRoundTrip: the round trip since the newest path change against
// the one before the first since the jump. A clock's walk leaves each
// sample's round trip as it was, a route that changed moves it either
// way, and without samples from before the changes it cannot say.
func TestJumpRoundTrip(t *testing.T) {
	tests := []struct {
		name        string
		before      int           // samples before the first path change since the jump
		after       int           // samples since it
		move        time.Duration // how far the round trip moved at the newest change
		clockWalkBy time.Duration // how far the clock moved u (and w the other way) over the samples
		want        int
	}{
		{"a clock's walk", 100, 100, 0, 5 * ms, rttHeld},
		{"a route up", 100, 100, 5 * ms, 0, rttMoved},
		{"a route down", 100, 100, -5 * ms, 0, rttMoved},
		{"a route up, the clock walking", 100, 100, 5 * ms, 5 * ms, rttMoved},
		{"the samples before gone", 0, 200, 5 * ms, 0, rttUnknown},
	}
	const since = 30 // samples since the newest path change
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEst(t)
			rng := rand.New(rand.NewPCG(1, 2))
			n := tt.before + tt.after
			e.head, e.n = 0, n
			for k := range n {
				i := e.at(k)
				e.t[i] = int64(k) * int64(100*ms)
				walk := int64(tt.clockWalkBy) * int64(k) / int64(n)
				u := int64(10*ms) + rng.Int64N(int64(time.Millisecond)) + walk
				w := int64(10*ms) + rng.Int64N(int64(time.Millisecond)) - walk
				if k >= n-since {
					u += int64(tt.move)
				}
				e.ud[i], e.wd[i] = u, w
			}
			e.jumpPaths, e.jumpPathFrom, e.jumpPathAt = true, 0, e.t[e.at(tt.before)]
			e.pathLog[0] = pathEvent{at: e.t[e.at(n-since)]}
			e.pathLogN = 1
			if got := e.jumpRoundTrip(); got != tt.want {
				t.Errorf("jumpRoundTrip() = %d, want %d", got, tt.want)
			}
		})
	}
}
