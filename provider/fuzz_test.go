package provider

import (
	"math"
	"testing"
	"time"

	"github.com/netclock/netclock/nettime"
)

// FuzzSteered drives a client provider with whatever estimate (a drift
// that is not a number included), feedback, snapshot stamps and frame
// times the fuzzer picks: nothing panics and the time scales stay finite.
func FuzzSteered(f *testing.F) {
	f.Add(int64(3e9), 20.0, int64(1e6), int64(16e6), uint32(60), int64(-2e6), int64(5e6), uint8(100))
	f.Add(int64(math.MinInt64), math.NaN(), int64(-1), int64(-1), uint32(0), int64(math.MaxInt64), int64(math.MinInt64), uint8(3))
	f.Fuzz(func(t *testing.T, offset int64, drift float64, bound, frame int64, rate uint32, p1, stamp int64, n uint8) {
		var now time.Duration
		c, err := NewSteered(SteeredConfig{Clock: func() time.Duration { return now }})
		if err != nil {
			t.Fatal(err)
		}
		if rate == 0 || rate > 1000 {
			rate = 60
		}
		pred, server := nettime.New(rate, 0), nettime.New(rate, 0)
		c.SetEstimate(Estimate{Valid: true, Offset: time.Duration(offset), DriftPPM: drift, ErrorBound: time.Duration(bound),
			Uplink: 10 * time.Millisecond, Downlink: 10 * time.Millisecond})
		c.InitializeClient(&pred, &server)
		// Up to 2040 frames: past the 256 after which interpolation is
		// sized from the frames' needs and the level rule is played.
		for k := range 8 * int(n) {
			now += time.Duration(frame % int64(time.Second))
			c.ObserveFeedback(Feedback{Total: uint32(k), Count: k % 300, Late: k % 7, P1: time.Duration(p1), P5: time.Duration(p1 / 2), P50: time.Duration(p1 / 3)})
			c.ObserveSnapshot(nettime.New(rate, time.Duration(stamp)+now))
			c.AdvanceTime(&pred, &server, time.Duration(frame))
			st := c.Status()
			if math.IsNaN(st.PredictedScale) || math.IsNaN(st.ServerScale) || math.IsInf(st.PredictedScale, 0) || math.IsInf(st.ServerScale, 0) {
				t.Fatalf("frame %d: status %+v", k, st)
			}
		}
	})
}
