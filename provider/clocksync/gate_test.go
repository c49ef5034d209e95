package clocksync

import (
	"testing"
	"time"

	"github.com/netclock/netclock/provider"
)

// TestContradicts: a sample contradicts the estimate when the offset
// interval its one-way deltas allow, [−w, u], misses the estimate's
// bound, grown by ErrorGrowthPPM since At and carried by the drift.
func TestContradicts(t *testing.T) {
	est := provider.Estimate{Valid: true, At: 10 * time.Second, Offset: 5 * ms, DriftPPM: 100, ErrorBound: ms, ErrorGrowthPPM: 10}
	tests := []struct {
		name string
		est  provider.Estimate
		t    time.Duration
		u, w time.Duration
		want bool
	}{
		{"a long round trip around the estimate", est, 10 * time.Second, 5*ms + 200*ms, -5*ms + 200*ms, false},
		{"a paused server's answer", est, 10 * time.Second, 5*ms + 4*time.Second, -5*ms + 20*ms, false},
		{"the clocks jumped 50s", est, 10 * time.Second, 5*ms - 50*time.Second + 200*ms, -5*ms + 50*time.Second + 50*ms, true},
		{"just outside the bound", est, 10 * time.Second, 5*ms - ms - 100*time.Microsecond, 20 * ms, true},
		{"just inside the bound", est, 10 * time.Second, 5*ms - ms + 100*time.Microsecond, 20 * ms, false},
		// 100 s on: the drift carries the offset 10ms on, the bound grows
		// by 1ms.
		{"carried by the drift", est, 110 * time.Second, 15*ms - 2*ms + 100*time.Microsecond, 20 * ms, false},
		{"beyond the grown bound", est, 110 * time.Second, 15*ms - 2*ms - 100*time.Microsecond, 20 * ms, true},
		{"no estimate", provider.Estimate{}, 10 * time.Second, -50 * time.Second, 50 * time.Second, false},
		{"bound unknown", provider.Estimate{Valid: true, Offset: 5 * ms}, 10 * time.Second, -50 * time.Second, 50 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Estimator{est: tt.est}
			if got := e.contradicts(int64(tt.t), int64(tt.u), int64(tt.w)); got != tt.want {
				t.Errorf("contradicts(u %v, w %v) = %v, want %v", tt.u, tt.w, got, tt.want)
			}
		})
	}
}
