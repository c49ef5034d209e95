package clocksync

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// addToBin records a sample in the drift tracker and reports whether it
// completed a bin.
func (e *Estimator) addToBin(t, u, w int64) bool {
	done := false
	if e.cur.n > 0 && t-e.cur.start >= binDuration {
		done = true
		if e.binN == numBins {
			e.binHead = (e.binHead + 1) % numBins
			e.binN--
		}
		e.bins[(e.binHead+e.binN)%numBins] = e.cur
		e.binN++
		e.binsDone++
		e.driftHold = max(0, e.driftHold-1)
		e.cur = bin{}
	}
	if e.cur.n == 0 {
		e.cur = bin{start: t, tu: t, tw: t, minU: u, minW: w, segU: e.segU, segW: e.segW}
	}
	if u < e.cur.minU {
		e.cur.minU, e.cur.tu = u, t
	}
	if w < e.cur.minW {
		e.cur.minW, e.cur.tw = w, t
	}
	e.cur.n++
	return done
}

// fit re-estimates the drift from the bin minima if they changed, and
// re-anchors the detrended values at now.
func (e *Estimator) fit(now int64, drift bool) {
	// The drift changes slowly: refit on every new bin while the history
	// is short, on every fourth after.
	changed := false
	if drift && e.driftHold == 0 && (e.binsDone < 16 || e.binsDone%4 == 0 || e.last != EventNone) {
		if r, se, ok := e.regressBins(0); ok {
			// Shrink toward zero by the prior on clock drift: a slope
			// fitted to a few noisy bins must not steer the clock.
			k := driftPrior * driftPrior / (driftPrior*driftPrior + se*se)
			r, se = r*k, math.Sqrt(k)*se
			changed = r != e.r
			if debugShift != nil {
				debugShift(now, int64(r*1e9), int64(e.driftHold))
			}
			e.r, e.rSE, e.fitted = r, se, true
		}
	}
	if !changed {
		if drift || e.n < 64 {
			e.bound = e.statBound()
		}
		return
	}
	// A new drift tilts every detrended value: re-anchor them at now.
	e.t0 = now
	e.olderDirty = true
	for k := 0; k < e.n; k++ {
		i := e.at(k)
		tr := e.trend(e.t[i])
		e.ud[i] = e.u[i] - tr
		e.wd[i] = e.w[i] + tr
	}
	if drift || e.n < 64 {
		e.bound = e.statBound()
	}
}

// regressBins fits the drift to the lower envelope of the one-way deltas:
// one slope through the bin minima of u and of −w, with an intercept per
// direction (gonum's weighted LinearRegression on centred data). A second
// pass keeps only the bins at or below the first line's median residual,
// since the minimum of a bin can be late (queueing) but never early. It
// returns the drift, its standard error, and false with fewer than 4 bins.
func (e *Estimator) regressBins(from int) (r, se float64, ok bool) {
	if e.binN-from < 4 {
		return 0, 0, false
	}
	// Centre each direction's points, per path segment, on their own
	// means, then one regression through the origin gives the pooled
	// slope: a one-way step between segments moves no slope.
	load := func(keep func(x, y, fitted float64) bool, slope float64) {
		e.xs, e.ys, e.ws = e.xs[:0], e.ys[:0], e.ws[:0]
		for dir := range 2 {
			start := len(e.xs)
			seg := -1
			for k := from; k < e.binN; k++ {
				bn := e.bins[(e.binHead+k)%numBins]
				x, y, sg := float64(bn.tu-e.t0)/1e9, float64(bn.minU)/1e9, bn.segU
				if dir == 1 {
					x, y, sg = float64(bn.tw-e.t0)/1e9, -float64(bn.minW)/1e9, bn.segW
				}
				if sg != seg {
					centre(e.xs[start:], e.ys[start:])
					start, seg = len(e.xs), sg
				}
				e.xs, e.ys = append(e.xs, x), append(e.ys, y)
			}
			centre(e.xs[start:], e.ys[start:])
		}
		for j := range e.xs {
			w := 1.0
			if keep != nil && !keep(e.xs[j], e.ys[j], slope*e.xs[j]) {
				w = 0
			}
			e.ws = append(e.ws, w)
		}
	}
	load(nil, 0)
	_, beta := stat.LinearRegression(e.xs, e.ys, e.ws, true)
	// The standard error comes from the scatter of every bin about the
	// first line: the trimmed half below scatters less than the slope
	// really wanders, and an overconfident drift steers the clock.
	var ss, sxx float64
	for j := range e.xs {
		d := e.ys[j] - beta*e.xs[j]
		ss += d * d
		sxx += e.xs[j] * e.xs[j]
	}
	n := float64(len(e.xs))
	if sxx == 0 || n < 8 {
		return 0, 0, false
	}
	se = math.Sqrt(ss/(n-3)) / math.Sqrt(sxx)
	// Queues that last longer than a bin make neighbouring bins' residuals
	// alike, and then n overstates what the bins know: widen the error by
	// the lag-1 autocorrelation ρ of the residuals (effective sample size
	// n(1−ρ)/(1+ρ)).
	var c0, c1 float64
	per := len(e.xs) / 2
	for dir := range 2 {
		prev := math.NaN()
		for j := dir * per; j < (dir+1)*per; j++ {
			d := e.ys[j] - beta*e.xs[j]
			c0 += d * d
			if !math.IsNaN(prev) {
				c1 += d * prev
			}
			prev = d
		}
	}
	if rho := c1 / c0; rho > 0 && c0 > 0 {
		se *= math.Sqrt((1 + min(rho, 0.9)) / (1 - min(rho, 0.9)))
	}
	// Refit on the lower half of the residuals.
	res := e.ws[:0]
	for j := range e.xs {
		res = append(res, e.ys[j]-beta*e.xs[j])
	}
	med := medianOf(res)
	load(func(x, y, fitted float64) bool { return y-fitted <= med }, beta)
	_, beta = stat.LinearRegression(e.xs, e.ys, e.ws, true)
	return beta, se, true
}

// centre subtracts their means from xs and ys.
func centre(xs, ys []float64) {
	if len(xs) == 0 {
		return
	}
	var mx, my float64
	for j := range xs {
		mx += xs[j]
		my += ys[j]
	}
	mx /= float64(len(xs))
	my /= float64(len(xs))
	for j := range xs {
		xs[j] -= mx
		ys[j] -= my
	}
}

// medianOf returns the median of v, reordering it.
func medianOf(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// spacing returns the mean spacing of the k lowest values of vals above the
// floor: an estimate of how far the floor can still be above the true one
// (for a density that is finite at the floor the spacings are exponential
// with this mean).
