package clocksync

import "math"

// splitLevels splits the fit's segments where a direction's detrended bin
// minima change level and the path tracker drew no boundary: a path
// change held in doubt, taken late, or hidden in the jitter when it came.
// A step far above a floor's softness weighs nothing in the fit (weigh),
// but one of about its size leaves the points on both sides weighing,
// and one line through them turns the step into a slope; in the recent
// history's 64 bins that reads as a rate change, which the drift then
// follows (random:216 seed 2: 36 ppm taken for -7, 4.8 ms of error for
// the rest of the run). Binary segmentation on the residuals from guess:
// a split is kept where the two sides' weighted means differ by more than
// levelSigmas of their standard errors, widened for the lag-1
// autocorrelation of the residuals (a queue lifts neighbouring bins
// alike), and by more than levelFloor. A clock step moves both directions
// alike and is split in both, which leaves the slope as it was.
func (e *Estimator) splitLevels(guess float64) {
	e.segs2 = e.segs2[:0]
	for k := 0; k+1 < len(e.segs); k++ {
		e.splitSegment(e.segs[k], e.segs[k+1], guess, levelDepth)
	}
	e.segs2 = append(e.segs2, e.segs[len(e.segs)-1])
	e.segs, e.segs2 = e.segs2, e.segs
}

// splitSegment appends to segs2 the start of [a, b) and of each level
// found in it, splitting each side again up to depth times.
func (e *Estimator) splitSegment(a, b int, guess float64, depth int) {
	at := 0
	if depth > 0 {
		at = e.levelSplit(a, b, guess)
	}
	if at == 0 {
		e.segs2 = append(e.segs2, a)
		return
	}
	e.splitSegment(a, at, guess, depth-1)
	e.splitSegment(at, b, guess, depth-1)
}

const (
	// levelDepth bounds the splits to 2^3 levels per segment: each side
	// of a split is split again, this many times deep at most.
	levelDepth = 3
	// levelMinBins is the fewest bins either side of a split, 16 s: a
	// queue's swell shorter than that is the weights' to discount.
	levelMinBins = 8
	// levelFloor is the least step split, 1 ms, in seconds: below it a
	// step's tilt is within what the bound allows for the drift.
	levelFloor = 1e-3
	// levelSigmas is how many standard errors of the two levels' means
	// the step must exceed. At 4 queues were split often enough to cost
	// as much as it won (random:1..600 at 10 Hz: 264 runs worse by over
	// 5%, 322 better); at 10 half the steps were kept whole.
	levelSigmas = 6
)

// levelSplit returns the index in (a, b) where [a, b) splits into two
// levels, or 0.
func (e *Estimator) levelSplit(a, b int, guess float64) int {
	if b-a < 2*levelMinBins {
		return 0
	}
	xs, ys, ws := e.xs, e.ys, e.ws
	var W, S float64
	for j := a; j < b; j++ {
		W += ws[j]
		S += ws[j] * (ys[j] - guess*xs[j])
	}
	if W <= 0 {
		return 0
	}
	best, at := 0.0, 0
	var w1, s1, wl, sl float64
	for j := a; j < b-levelMinBins; j++ {
		w1 += ws[j]
		s1 += ws[j] * (ys[j] - guess*xs[j])
		if j+1-a < levelMinBins {
			continue
		}
		w2, s2 := W-w1, S-s1
		if w1 <= 0 || w2 <= 0 {
			continue
		}
		// The reduction in weighted squared error from two means.
		gain := s1*s1/w1 + s2*s2/w2 - S*S/W
		if gain > best {
			best, at, wl, sl = gain, j+1, w1, s1
		}
	}
	if at == 0 {
		return 0
	}
	wr, sr := W-wl, S-sl
	ml, mr := sl/wl, sr/wr
	step := math.Abs(mr - ml)
	if step < levelFloor {
		return 0
	}
	// Scatter about the two levels, and its lag-1 autocorrelation.
	var ss, c1, sw, sw2 float64
	prev := math.NaN()
	for j := a; j < b; j++ {
		m := ml
		if j >= at {
			m = mr
		}
		r := ys[j] - guess*xs[j] - m
		ss += ws[j] * r * r
		sw += ws[j]
		sw2 += ws[j] * ws[j]
		if !math.IsNaN(prev) && j != at {
			c1 += ws[j] * r * prev
		}
		prev = r
	}
	neff := sw * sw / sw2
	if neff < 4 || ss <= 0 {
		return 0
	}
	sigma := math.Sqrt(ss / sw * neff / (neff - 2))
	infl := 1.0
	if rho := c1 / ss; rho > 0 {
		rho = min(rho, 0.9)
		infl = math.Sqrt((1 + rho) / (1 - rho))
	}
	fl, fr := wl/sw*neff, wr/sw*neff
	if fl < 2 || fr < 2 {
		return 0
	}
	se := sigma * infl * math.Sqrt(1/fl+1/fr)
	if step < levelSigmas*se {
		return 0
	}
	return at
}
