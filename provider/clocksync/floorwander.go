package clocksync

import "math"

// floorWander measures how each direction's floor moves between the drift
// bins of the window (their minima, detrended): fast, the median of the
// absolute changes from one bin to the next, and slow, the part of the
// minima's spread that such changes do not explain. On a path with
// independent jitter the bins' minima scatter about one level, and
// consecutive ones differ about as much as any two (slow ≈ 0); behind a
// queue that builds and drains they follow the queue, which moves little
// from bin to bin and far over the window. The median ignores the one
// large change a step of the path makes. Zeros with fewer than 3 bins.
func (e *Estimator) floorWander() (fastU, fastW, slowU, slowW int64) {
	var bu, bw, du, dw [numBins]int64
	n := 0
	for k := 0; k < e.binN; k++ {
		bn := e.bins[(e.binHead+k)%numBins]
		if e.n > 0 && bn.start < e.t[e.head] {
			continue
		}
		bu[n], bw[n] = bn.minU-e.trend(bn.tu), bn.minW+e.trend(bn.tw)
		if n > 0 {
			du[n-1], dw[n-1] = abs64(bu[n]-bu[n-1]), abs64(bw[n]-bw[n-1])
		}
		n++
	}
	if n < 3 {
		return 0, 0, 0, 0
	}
	fastU, slowU = wanderOf(bu[:n], du[:n-1])
	fastW, slowW = wanderOf(bw[:n], dw[:n-1])
	return fastU, fastW, slowU, slowW
}

// wanderOf returns the median of the changes d and the spread of the
// levels v beyond twice what changes of that size make (for independent
// values from an exponential, as the minima of many samples are, the median
// absolute difference of two is 0.69 standard deviations; twice, as the
// spread of a few dozen such values is itself uncertain by about half).
func wanderOf(v, d []int64) (fast, slow int64) {
	fast = nth(d, len(d)/2)
	var s, ss float64
	for _, x := range v {
		f := float64(x - v[0])
		s += f
		ss += f * f
	}
	m := s / float64(len(v))
	varV := ss/float64(len(v)) - m*m
	iid := float64(fast) / 0.69
	return fast, int64(math.Sqrt(max(0, varV-2*iid*iid)))
}
