package clocksync

import "slices"

// floorWander measures how much each direction's floor moves from one drift
// bin to the next: the median of the absolute changes of consecutive bins'
// minima (detrended) in the window, or 0 with fewer than 4 changes. On a
// path with independent jitter the bins' minima sit within a few spacings of
// the floor; behind a queue that builds and drains they follow the queue.
// The median ignores the one large change a step of the path makes.
func (e *Estimator) floorWander() (wu, ww int64) {
	var du, dw [numBins]int64
	n := 0
	var pu, pw int64
	prev := false
	for k := 0; k < e.binN; k++ {
		bn := e.bins[(e.binHead+k)%numBins]
		if e.n > 0 && bn.start < e.t[e.head] {
			continue
		}
		u, w := bn.minU-e.trend(bn.tu), bn.minW+e.trend(bn.tw)
		if prev {
			du[n], dw[n] = abs64(u-pu), abs64(w-pw)
			n++
		}
		pu, pw, prev = u, w, true
	}
	if n < 2 {
		return 0, 0
	}
	a, b := du[:n], dw[:n]
	slices.Sort(a)
	slices.Sort(b)
	return a[n/2], b[n/2]
}
