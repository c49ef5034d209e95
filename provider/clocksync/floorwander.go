package clocksync

import "github.com/netclock/netclock/internal/rank"

// floorWander measures how each direction's floor moves between the drift
// bins of the window (their minima, detrended): fast, the median change
// from one bin to the next, and slow, how much more the median change over
// slowLag bins is. On a path with independent jitter the bins' minima
// scatter about one level and changes over any lag are alike (slow ≈ 0);
// behind a queue that builds and drains they follow the queue, which moves
// little from bin to bin and far over seconds. A step of the path is one
// large change at each lag, which the medians ignore. Zeros with fewer
// than 3 bins; slow is zero with fewer than 2·slowLag.
func (e *Estimator) floorWander() (fastU, fastW, slowU, slowW int64) {
	var bu, bw [numBins]int64
	n := 0
	for k := 0; k < e.binN; k++ {
		bn := e.bins[(e.binHead+k)%numBins]
		if e.n > 0 && bn.start < e.t[e.head] {
			continue
		}
		bu[n], bw[n] = bn.minU-e.trend(bn.tu), bn.minW+e.trend(bn.tw)
		n++
	}
	if n < 3 {
		return 0, 0, 0, 0
	}
	fastU, slowU = wanderOf(bu[:n])
	fastW, slowW = wanderOf(bw[:n])
	return fastU, fastW, slowU, slowW
}

const (
	// slowLag is the lag, in bins, of floorWander's slow changes.
	slowLag = 5
	// wanderEvery is how often, in bins, floorWander is taken again after
	// the first window.
	wanderEvery = 4
)

// wanderOf returns the median absolute change of v from one value to the
// next and how far its median change over slowLag values exceeds 1.5 times
// that (the margin keeps the medians' own noise out).
func wanderOf(v []int64) (fast, slow int64) {
	var d1, dl [numBins]int64
	for k := 1; k < len(v); k++ {
		d1[k-1] = abs64(v[k] - v[k-1])
	}
	for k := slowLag; k < len(v); k++ {
		dl[k-slowLag] = abs64(v[k] - v[k-slowLag])
	}
	n1 := len(v) - 1
	fast = rank.Nth(d1[:n1], n1/2)
	if len(v) < 2*slowLag {
		return fast, 0
	}
	nl := len(v) - slowLag
	lag := rank.Nth(dl[:nl], nl/2)
	return fast, max(0, lag-3*fast/2)
}
