package clocksync

import "math"

// A floor that falls on one side while the other side's newest minimum
// sits higher reads as a clock move under way (clockExplains), and the
// offset follows it. Where the other side's jitter is wide, its newest
// minimum, of a few samples, sits that much higher anyway, and a queue
// that drains on the one side reads as the clock: random:187, an uplink
// bloat draining 1 ms a second beside 15 ms of triangular downlink
// jitter, walked the offset 3 ms between path changes. The round trip
// tells them apart: no clock moves u + w. When the newest bins' round-trip
// floor has been moving the way of the fall, well beyond its error, the
// fall is the path's.

// rttTrendBins is how many of the newest drift bins (32 s) the round
// trip's trend is fitted over; with fewer than rttTrendMin usable bins it
// says nothing.
const (
	rttTrendBins = 16
	rttTrendMin  = 8
	// A trend counts past trendSigmas standard errors plus trendSlack: a
	// clock's rate moves no round trip, and queues that come and go
	// within a bin scatter it.
	trendSigmas = 4.0
	trendSlack  = 50e-6
)

// rttTrends reports whether the round trip of the newest bins has been
// moving the way of the window's one-sided move (pU on the uplink, pW on
// the downlink; the side uMoves picks).
func (e *Estimator) rttTrends(pU, pW, tolU, tolW int64) bool {
	slope, se, ok := e.rttSlope()
	if !ok || math.Abs(slope) <= trendSigmas*se+trendSlack {
		return false
	}
	p := pU
	if !uMoves(pU, pW, tolU, tolW) {
		p = pW
	}
	return (p < 0) == (slope < 0)
}

// rttSlope fits a line to the round-trip floors (minU + minW) of the newest
// rttTrendBins bins and returns its slope (seconds per second) and standard
// error, widened for the lag-1 autocorrelation of the residuals as the
// drift fit's is. Each path segment (a one-way step starts one) is centred
// on its own, so a step is no trend; bins that straddle a step are left
// out.
func (e *Estimator) rttSlope() (slope, se float64, ok bool) {
	var xs, ys, ones [rttTrendBins]float64
	for j := range ones {
		ones[j] = 1
	}
	m, start := 0, 0
	var sxx, sxy float64
	seg := [2]int{-1, -1}
	segment := func() {
		if m-start < 2 {
			m = start // a lone bin says nothing of a slope
			return
		}
		centre(xs[start:m], ys[start:m], ones[start:m])
		for j := start; j < m; j++ {
			sxx += xs[j] * xs[j]
			sxy += xs[j] * ys[j]
		}
		start = m
	}
	for k := max(0, e.binN-rttTrendBins); k < e.binN; k++ {
		bn := &e.bins[(e.binHead+k)%numBins]
		if bn.skipU || bn.skipW || bn.n == 0 {
			continue
		}
		if s := [2]int{bn.segU, bn.segW}; s != seg {
			segment()
			seg = s
		}
		xs[m] = float64(bn.start-e.t0) / 1e9
		ys[m] = float64(bn.minU+bn.minW) / 1e9
		m++
	}
	segment()
	if m < rttTrendMin || sxx == 0 {
		return 0, 0, false
	}
	slope = sxy / sxx
	var ss, c1, prev float64
	for j := 0; j < m; j++ {
		d := ys[j] - slope*xs[j]
		ss += d * d
		if j > 0 {
			c1 += d * prev
		}
		prev = d
	}
	se = math.Sqrt(ss/float64(m-2)) / math.Sqrt(sxx)
	return slope, widenForAutocorrelation(se, ss, c1), true
}
