package clocksync

import "math"

// A slew that starts or ends is seen seconds after it began, and the drift
// tracker then needs a few bins of what followed before it fits the new
// rate: meanwhile the window, detrended at the old rate, tilts the floors
// and the offset by the rate's change over it. The samples that showed the
// shift already measure the new rate: their lower envelope rises in one
// direction as fast as it falls in the other.

// shiftChunks is how many stretches the samples since a shift are cut into
// to measure the rate on their minima.
const shiftChunks = 4

// shiftRate returns how far the rate of the newest span samples' lower
// envelope differs from the drift: the slopes of the two directions'
// stretch minima, each fitted by least squares through the minima's own
// times, combined as the clock moves them (oppositely). ok is false when
// the directions disagree in sign or the span is too short to say.
func (e *Estimator) shiftRate(span int) (dr float64, ok bool) {
	dr, _, ok = e.shiftRateErr(span)
	return dr, ok
}

// shiftRateErr is shiftRate with the rate's standard error, from the
// stretch minima's scatter about each side's line.
func (e *Estimator) shiftRateErr(span int) (dr, se float64, ok bool) {
	if span < 4*shiftChunks {
		return 0, 0, false
	}
	var su, sw [2][shiftChunks]float64 // (time, value) of each stretch's minimum
	for c := range shiftChunks {
		from := e.n - span + c*span/shiftChunks
		to := e.n - span + (c+1)*span/shiftChunks
		s := e.scan(from, to)
		su[0][c], su[1][c] = float64(s.tu), float64(s.minU)
		sw[0][c], sw[1][c] = float64(s.tw), float64(s.minW)
	}
	a, okU := slopeOf(su[0][:], su[1][:])
	b, okW := slopeOf(sw[0][:], sw[1][:])
	if !okU || !okW || (a > 0) == (b > 0) {
		return 0, 0, false
	}
	// Each side's slope weighed by how well its minima lie on it: on a
	// soft floor a few seconds' stretch minima scatter by a millisecond,
	// and a precise other side knows the rate far better (averaged alike,
	// a slew seen 3 s in on such a path took a rate up to 173 ppm off).
	vu, vw := residualVar(su[0][:], su[1][:], a), residualVar(sw[0][:], sw[1][:], b)
	dr = (a*vw - b*vu) / (vu + vw)
	varA, varB := vu/sxxOf(su[0][:]), vw/sxxOf(sw[0][:])
	se = math.Sqrt(vw*vw*varA+vu*vu*varB) / (vu + vw)
	return max(-maxShift, min(maxShift, dr)), se, true
}

// sxxOf is the sum of squared deviations of xs from their mean.
func sxxOf(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return ss
}

// residualVar is the mean squared residual of ys about the line of slope
// through their means, never under (20µs)².
func residualVar(xs, ys []float64, slope float64) float64 {
	mx, my := meansOf(xs, ys)
	n := float64(len(xs))
	var ss float64
	for i := range xs {
		r := ys[i] - my - slope*(xs[i]-mx)
		ss += r * r
	}
	return max(ss/(n-2), 20e3*20e3)
}

// meansOf returns the means of xs and of ys.
func meansOf(xs, ys []float64) (mx, my float64) {
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	n := float64(len(xs))
	return mx / n, my / n
}

// slopeOf is the least-squares slope of ys over xs.
func slopeOf(xs, ys []float64) (float64, bool) {
	mx, my := meansOf(xs, ys)
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 || math.IsNaN(sxy) {
		return 0, false
	}
	return sxy / sxx, true
}

// adoptRate moves the drift by dr and detrends the window again at it.
func (e *Estimator) adoptRate(dr float64, now int64) {
	e.r += dr
	e.reanchor(now)
}

// refineShift measures a shift's rate again on the samples since it each
// time they have grown by half, until the drift is fitted again: taken on
// a few seconds of minima it can be 200 ppm off (clock-slew seed 1: -260
// ppm for -474 on the 40 samples that showed the slew), and the drift
// tracker's first fit waits for bins of what followed. The new measure
// is taken when its standard error is the smaller.
func (e *Estimator) refineShift(now int64) {
	if !e.slewing || e.fitted || e.shiftN == 0 || 2*e.n < 3*e.shiftN {
		return
	}
	e.shiftN = e.n
	dr, se, ok := e.shiftRateErr(e.n)
	if !ok || (e.shiftSE > 0 && se >= e.shiftSE) {
		return
	}
	e.shiftSE = se
	e.adoptRate(dr, now)
}
