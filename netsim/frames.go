package netsim

import (
	"math/rand/v2"
	"time"
)

// DefaultFrameInterval is the frame interval used when FrameSpec.Interval is
// zero: 60 frames per second, rounded to the nanosecond.
const DefaultFrameInterval = 16_666_667 * time.Nanosecond

// MinFrameInterval is the shortest accepted FrameSpec.Interval: 1000 frames
// per second. A shorter one would only make a run take forever.
const MinFrameInterval = time.Millisecond

// FrameSpec describes the frame timing of the client's game loop: the dt
// values the game passes to its tick system, as measured by the client's own
// clock. The zero value is a steady 60 Hz loop.
type FrameSpec struct {
	// Interval is the nominal frame duration. Zero means
	// DefaultFrameInterval (16.666667ms); otherwise at least
	// MinFrameInterval (1ms).
	Interval time.Duration

	// Jitter spreads frame durations uniformly over [Interval-Jitter,
	// Interval+Jitter). It must be less than the interval. Default 0.
	Jitter time.Duration

	// HitchProb is the probability that a frame is a hitch (a GC pause,
	// a loading stall, a dropped vsync). Default 0.
	HitchProb float64

	// HitchDuration is added to the duration of a hitch frame; it must be
	// positive when HitchProb is. Default 0.
	HitchDuration time.Duration
}

// interval returns the effective interval.
func (s FrameSpec) interval() time.Duration {
	if s.Interval == 0 {
		return DefaultFrameInterval
	}
	return s.Interval
}

// Validate reports whether s is a usable frame spec.
func (s FrameSpec) Validate() error {
	var v validator
	s.validate(&v, "frames")
	return v.err()
}

func (s FrameSpec) validate(v *validator, path string) {
	v.delay(path+".interval", s.Interval)
	if s.Interval > 0 && s.Interval < MinFrameInterval {
		v.addf(path+".interval", "must be at least %v (or 0 for 60 Hz), got %v", MinFrameInterval, s.Interval)
	}
	v.delay(path+".jitter", s.Jitter)
	if s.Interval >= 0 && s.Jitter >= s.interval() {
		v.addf(path+".jitter", "must be less than the interval (%v), got %v", s.interval(), s.Jitter)
	}
	v.prob(path+".hitchProb", s.HitchProb)
	v.delay(path+".hitchDuration", s.HitchDuration)
	if s.HitchProb > 0 && s.HitchDuration == 0 {
		v.addf(path+".hitchDuration", "must be positive when hitchProb is set (got hitchProb %v)", s.HitchProb)
	}
}

// Frames generates successive frame durations of a FrameSpec,
// deterministically for a seed. It is not safe for concurrent use.
type Frames struct {
	interval time.Duration
	spec     FrameSpec
	rng      *rand.Rand
	hitches  uint64
	n        uint64
}

// NewFrames validates spec and returns its frame generator for seed.
func NewFrames(spec FrameSpec, seed uint64) (*Frames, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	return &Frames{interval: spec.interval(), spec: spec, rng: newRand(seed, streamFrames)}, nil
}

// Next returns the duration of the next frame; it is always positive.
func (f *Frames) Next() time.Duration {
	f.n++
	// Two draws per frame, always, so hitches do not shift the jitter.
	u1, u2 := f.rng.Float64(), f.rng.Float64()
	d := f.interval
	if j := f.spec.Jitter; j > 0 {
		d += time.Duration((2*u1 - 1) * float64(j))
	}
	if u2 < f.spec.HitchProb {
		d += f.spec.HitchDuration
		f.hitches++
	}
	return max(d, 1)
}

// Count returns the number of frames generated and how many were hitches.
func (f *Frames) Count() (frames, hitches uint64) { return f.n, f.hitches }
