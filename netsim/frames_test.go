package netsim

import (
	"testing"
	"time"
)

func TestFrames(t *testing.T) {
	cases := []struct {
		name     string
		spec     FrameSpec
		lo, hi   time.Duration // bounds of non-hitch frames
		wantMean float64
	}{
		{"zero is 60Hz", FrameSpec{}, DefaultFrameInterval, DefaultFrameInterval, float64(DefaultFrameInterval)},
		{"jitter", FrameSpec{Interval: 10 * ms, Jitter: 2 * ms}, 8 * ms, 12 * ms, 10e6},
		{"hitches", FrameSpec{Interval: 10 * ms, Jitter: ms, HitchProb: 0.01, HitchDuration: 200 * ms}, 9 * ms, 11 * ms, 10e6 + 0.01*200e6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewFrames(tc.spec, 42)
			if err != nil {
				t.Fatal(err)
			}
			g, _ := NewFrames(tc.spec, 42)
			const n = 100_000
			var sum float64
			hitches := 0
			for range n {
				d := f.Next()
				if d2 := g.Next(); d2 != d {
					t.Fatalf("same seed, different frames: %v, %v", d, d2)
				}
				sum += float64(d)
				if d > tc.hi {
					d -= tc.spec.HitchDuration
					hitches++
				}
				if d < tc.lo || d > tc.hi {
					t.Fatalf("frame %v outside [%v, %v]", d, tc.lo, tc.hi)
				}
			}
			if got := sum / n; !near(got, tc.wantMean, 0.02, 0) {
				t.Errorf("mean frame %.3fms, want %.3fms", got/1e6, tc.wantMean/1e6)
			}
			frames, h := f.Count()
			if frames != n || h != uint64(hitches) {
				t.Errorf("Count() = %d, %d; want %d, %d", frames, h, n, hitches)
			}
			if got := float64(hitches) / n; !near(got, tc.spec.HitchProb, 0.15, 0) {
				t.Errorf("hitch rate %.4f, want %v", got, tc.spec.HitchProb)
			}
		})
	}
	a, _ := NewFrames(FrameSpec{Jitter: ms}, 1)
	b, _ := NewFrames(FrameSpec{Jitter: ms}, 2)
	same := 0
	for range 1000 {
		if a.Next() == b.Next() {
			same++
		}
	}
	if same > 10 {
		t.Errorf("seeds 1 and 2 agree on %d of 1000 frames", same)
	}
}

func TestFrameSpecValidate(t *testing.T) {
	cases := []struct {
		spec FrameSpec
		want string
	}{
		{FrameSpec{Interval: -1}, "frames.interval: must not be negative"},
		{FrameSpec{Interval: 10 * ms, Jitter: 10 * ms}, "frames.jitter: must be less than the interval"},
		{FrameSpec{Jitter: 20 * ms}, "less than the interval (16.666667ms)"},
		{FrameSpec{HitchProb: 1.5, HitchDuration: ms}, "frames.hitchProb"},
		{FrameSpec{HitchProb: 0.1}, "frames.hitchDuration: must be positive"},
	}
	for _, tc := range cases {
		if err := tc.spec.Validate(); err == nil || !contains(err.Error(), tc.want) {
			t.Errorf("%+v: Validate() = %v, want %q", tc.spec, err, tc.want)
		}
	}
}
