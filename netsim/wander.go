package netsim

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Wander is a random walk of a clock's frequency: every Step of true time the
// rate changes by a normal step whose standard deviation is
// PPMPerMinute*sqrt(Step/1min), reflected at ±LimitPPM around DriftPPM. The
// frequency is constant within a step, so the reading is piecewise linear
// and exact. The walk is a pure function of Seed; it runs for WanderSteps
// steps and then holds its last rate.
type Wander struct {
	// PPMPerMinute is the standard deviation of the rate's change over one
	// minute, in ppm.
	PPMPerMinute float64
	// Step is the time between rate changes. Default (0) 1s; at least
	// 10ms.
	Step time.Duration
	// LimitPPM bounds the walk to ±LimitPPM around DriftPPM. Default (0)
	// 100.
	LimitPPM float64
	// Seed fixes the walk.
	Seed uint64
}

// WanderSteps is the number of steps a Wander walks before holding its rate.
const WanderSteps = 1 << 18

func (w *Wander) step() time.Duration {
	if w.Step == 0 {
		return time.Second
	}
	return w.Step
}

func (w *Wander) limit() float64 {
	if w.LimitPPM == 0 {
		return 100
	}
	return w.LimitPPM
}

// Jump steps a clock's reading by By at true time At: from At on, the clock
// reads By more than it would have.
type Jump struct {
	// At is the true time of the step.
	At time.Duration
	// By is the size of the step; negative steps the clock back.
	By time.Duration
}

// Slew changes a clock's rate by PPM parts per million during the true-time
// window [From, To). The clock gains PPM*(To-From)/1e6 over the window and keeps
// that gain afterwards. 500 ppm is the largest slew rate of ntpd and the Linux
// kernel.
type Slew struct {
	// From is the true time the slew starts.
	From time.Duration
	// To is the true time the slew ends; it must be after From.
	To time.Duration
	// PPM is the extra rate in parts per million; negative slows the clock.
	PPM float64
}

// wanderWalk holds the Wander walk, extended lazily (under mu) as far as the
// clock is read.
type wanderWalk struct {
	spec  Wander
	sigma float64 // ppm per step
	step  time.Duration
	mu    sync.Mutex
	rng   *rand.Rand
	rate  []float64 // ppm during step k
	phase []float64 // ∫ rate up to the start of step k, ppm·ns
}

// at returns W(t): ∫₀ᵗ rate, in ppm·ns.
func (w *wanderWalk) at(t time.Duration) float64 {
	if t <= 0 {
		return 0
	}
	k := int64(t / w.step)
	w.mu.Lock()
	defer w.mu.Unlock()
	last := int64(WanderSteps - 1)
	for n := int64(len(w.rate)); n <= min(k, last); n++ {
		r := w.rate[n-1] + w.sigma*w.rng.NormFloat64()
		if lim := w.spec.limit(); r > lim || r < -lim {
			// Reflect at ±lim: fold onto a period of 4*lim.
			x := math.Mod(r+lim, 4*lim)
			if x < 0 {
				x += 4 * lim
			}
			if x > 2*lim {
				x = 4*lim - x
			}
			r = x - lim
		}
		w.phase = append(w.phase, w.phase[n-1]+w.rate[n-1]*float64(w.step))
		w.rate = append(w.rate, r)
	}
	k = min(k, last)
	return w.phase[k] + w.rate[k]*float64(t-time.Duration(k)*w.step)
}

// rateAt returns the walk's rate at t, in ppm.
func (w *wanderWalk) rateAt(t time.Duration) float64 {
	if t < 0 {
		return 0
	}
	w.at(t) // extend
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rate[min(int64(t/w.step), int64(len(w.rate)-1))]
}
