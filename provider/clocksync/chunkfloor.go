package clocksync

import "github.com/netclock/netclock/internal/rank"

// A slew's falling side is measured as its newest stretch's minimum against
// the floor of the samples before the span, and that floor can sit well
// below where a stretch of as many samples' minimum sat there: on a soft
// floor (the measured 5G histograms: a dozen samples' minimum sits about a
// millisecond above a minute's), in a window the drift's error tilts, or
// when the fall began before the span looked at. The fall then looks
// smaller than the other side's rise, the two not equal and opposite, and
// the slew is seen seconds late (random:1860 seed 3: a slew's end read as
// a clock jump 15.6 s after it, p99 0.96 ms; random:65: 15-22 s late on a
// 5G downlink, 1.3-2.4 ms astray by then).

// biasChunks is how many stretches of the samples before a span are
// looked at to see where a minimum of that many samples sits.
const biasChunks = 16

// minBiasChunks is the fewest stretches whose median minimum says where
// one sits.
const minBiasChunks = 5

// shortMinBias returns how far above the floor of the samples before the
// newest span a minimum of q samples sits there, per direction: the
// median over the last biasChunks stretches of q samples before the span
// of their floors, at most four times their interquartile range (a floor
// far below where the stretches cluster, beyond their own spread, is an
// older level, a path since changed or a handover's transition, and says
// nothing of where this one sits: random:1632 seed 2, a handover's 9 ms
// taken for such a gap, made a slew of it). ok is false when fewer
// stretches precede the span.
func (e *Estimator) shortMinBias(span, q int) (bu, bw int64, ok bool) {
	bu, bw, iqU, iqW, ok := e.minSpread(span, q, biasChunks)
	return min(bu, 4*iqU), min(bw, 4*iqW), ok
}

// recentBias is how far above the floor of the samples before them a
// minimum of the newest q samples would sit where nothing moved, per
// direction: the median of the minima of the stretches of q before them,
// as many as fit up to biasChunks, at most four times their interquartile
// range (as shortMinBias) and the jitter's mean excess; and that range.
// ok is false where fewer than minBiasChunks stretches fit.
func (e *Estimator) recentBias(q int) (bu, bw, iqU, iqW int64, ok bool) {
	k := min(biasChunks, (e.n-q)/max(1, q))
	if k < minBiasChunks {
		return 0, 0, 0, 0, false
	}
	bu, bw, iqU, iqW, ok = e.minSpread(q, q, k)
	if !ok {
		return 0, 0, 0, 0, false
	}
	return min(max(0, bu), 4*iqU, e.exU), min(max(0, bw), 4*iqW, e.exW), iqU, iqW, true
}

// minSpread returns the median and the interquartile range of the minima
// of the last k stretches of q samples before the newest span, the median
// above the floor of the samples before the span.
func (e *Estimator) minSpread(span, q, k int) (bu, bw, iqU, iqW int64, ok bool) {
	end := e.n - span
	if q < 1 || k < 1 || k > biasChunks || end < k*q {
		return 0, 0, 0, 0, false
	}
	fu, fw := e.minDetrended(0, end)
	var mu, mw [biasChunks]int64
	for c := range k {
		mu[c], mw[c] = e.minDetrended(end-(c+1)*q, end-c*q)
	}
	bu, bw = rank.Nth(mu[:k], (k-1)/2)-fu, rank.Nth(mw[:k], (k-1)/2)-fw
	iqU = rank.Nth(mu[:k], 3*k/4) - rank.Nth(mu[:k], k/4)
	iqW = rank.Nth(mw[:k], 3*k/4) - rank.Nth(mw[:k], k/4)
	return bu, bw, iqU, iqW, true
}
