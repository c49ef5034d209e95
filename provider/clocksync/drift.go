package clocksync

import (
	"github.com/netclock/netclock/internal/rank"
	"math"

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
		e.memOK = false
		e.driftHold = max(0, e.driftHold-1)
		e.countJumpBin()
		e.cur = bin{}
	}
	if e.cur.n == 0 {
		e.cur = bin{start: t, tu: t, tw: t, minU: u, minW: w, min2U: math.MaxInt64, min2W: math.MaxInt64, segU: e.segU, segW: e.segW}
	} else {
		if u < e.cur.minU {
			e.cur.min2U, e.cur.minU, e.cur.tu = e.cur.minU, u, t
		} else {
			e.cur.min2U = min(e.cur.min2U, u)
		}
		if w < e.cur.minW {
			e.cur.min2W, e.cur.minW, e.cur.tw = e.cur.minW, w, t
		} else {
			e.cur.min2W = min(e.cur.min2W, w)
		}
	}
	e.cur.n++
	return done
}

// dropOldBins drops the oldest n drift bins: the rest are the whole
// history, and the fit is made on every new bin until it is long again.
func (e *Estimator) dropOldBins(n int) {
	e.binHead = (e.binHead + n) % numBins
	e.binN -= n
	e.binsDone = e.binN
}

// fit re-estimates the drift from the bin minima if they changed, and
// re-anchors the detrended values at now.
func (e *Estimator) fit(now int64, drift bool) {
	// The drift changes slowly: refit on every new bin while the history
	// is short, on every fourth after.
	changed := false
	// While a one-way step's new segment holds the fit, a jump that may
	// have been a slew's start or end still has the bins since it fitted:
	// the steps may be the clock going on at a rate the jump did not take.
	// Only a fit that shows the rate before the slew (endjump.go), or the
	// fit since a jump that kept the history, taken by its own tests
	// (sinceJumpFit), is taken then.
	held := e.driftHold > 0
	jumpFit := e.jumpBins >= jumpFitBins && e.jumpBins < e.binN
	if drift && (!held || e.endJumpFit() || jumpFit) && (e.binsDone < 16 || e.binsDone%4 == 0 || e.last != EventNone || e.jumpBins >= 0 && e.jumpBins < 16) {
		// What a fit not taken leaves for the bound and the kink test to
		// read stays as the last fit taken left it.
		seBound, apart, slopesApart, dir, jumpSE := e.rSEBound, e.rApart, e.slopesApart, e.dirSlopes, e.jumpSE
		r, se, ok := e.driftFit()
		// (A fit since the jump taken drops the bins before it.)
		dropped := jumpFit && e.jumpBins >= e.binN
		// Shrink toward zero by the prior on clock drift: a slope fitted
		// to a few noisy bins must not steer the clock.
		k := driftPrior * driftPrior / (driftPrior*driftPrior + se*se)
		r, se = r*k, math.Sqrt(k)*se
		if held && !dropped && !(ok && e.endsSlew(r, se)) {
			e.rSEBound, e.rApart, e.slopesApart, e.dirSlopes, e.jumpSE = seBound, apart, slopesApart, dir, jumpSE
			ok = false
		}
		if ok {
			if e.keepsRate(r, se) {
				r, se = e.r, e.rSE
			}
			changed = r != e.r
			if e.fitted {
				e.rateMoved(r, se, now)
			}
			if r != e.r || se != e.rSE {
				e.rBins = e.binN
			}
			e.r, e.rSE, e.fitted = r, se, true
			e.jumpRate = 0
		}
	}
	if !changed {
		if drift || e.n < 64 {
			e.bound = e.statBound()
		}
		return
	}
	e.reanchor(now)
	if drift || e.n < 64 {
		e.bound = e.statBound()
	}
}

// noisierFit is how many times the drift's standard error a refit's must
// exceed for keepsRate to weigh it against the drift.
const noisierFit = 3

// keptBins is how many drift bins the fit of a drift that keepsRate keeps
// must have had: on fewer, the first seconds' fits, it is no better known
// than its error says (fiber seed 4: 63 ± 1.8 ppm kept against 51 ± 6 on
// a clock of 42, and the offset 12µs off for the rest of the run).
const keptBins = 16

// keepsRate reports whether a refit's rate r (standard error se) is to be
// ignored: far less certain than the drift it would replace and within
// the errors of it, it says that the history got noisier, not that the
// clock's rate changed (random:108 seed 1: −11 ± 4 ppm replaced by
// 315 ± 130 while a downlink bloat and an uplink route flap moved both
// floors, 13ms of error). Not while the drift is a slew's, apart from the
// rate before it: the slew ends, and a noisy refit can be the first to
// see it (random:165 seed 2, a slew that ended during an uplink bloat:
// 3.4 -> 21.4ms when the slew's rate was kept). Nor on a history shorter
// than the drift's fit had, after a restart: the clock may have changed
// its rate meanwhile (random:52 seed 1, a server slew that began 19s
// before a 35s suspend: the rate from before it kept, 5.6 -> 16.8ms).
func (e *Estimator) keepsRate(r, se float64) bool {
	if !e.fitted || se <= noisierFit*e.rSE || e.rBins < keptBins || e.binN < e.rBins {
		return false
	}
	if e.beforeOK && math.Abs(e.r-e.before) > kinkSlack {
		return false
	}
	return math.Abs(r-e.r) <= 3*math.Hypot(se, e.rSE)
}

// rateMoved weighs a refit's rate r (standard error se) against the one
// it replaces. A rate that changed by more than a slew's noise, seen by
// the fit rather than the shift tests (a slew under way when the window
// restarted: random:5143, a client step 21s into a +347 ppm slew whose
// uplink fall had been taken, part by part, for path changes that walked
// A 7.8ms; the refit after the restart found the slew, and A kept them:
// 3.9ms of error under 3.2 to 3.6ms for 10 minutes), explains the path changes of
// the last window that moved A the way it would, and by no more: A keeps
// their move as its error.
func (e *Estimator) rateMoved(r, se float64, now int64) {
	d := r - e.r
	moved := math.Abs(d) > kinkSlack && math.Abs(d) > kinkSigmas*math.Hypot(se, e.rSE)
	if e.endJumpMoved(r, se, now, moved) || !moved {
		return
	}
	span := int64(e.cfg.Window)
	e.addAsymErr(e.pathTookClock(now-span, int64(2*d*float64(span))))
}

// shortBins is the recent drift history, 128 s, against which the whole
// history's fit is checked.
const shortBins = 64

// preciseShort is how much smaller than the whole history's the recent
// history's error must be for its fit to be taken where the two agree.
// (At a third and at three quarters the gain was alike: random:1..600 at
// 10 Hz, p99 ×0.9918 and ×0.9908 against ×0.9917 at a half.)
const preciseShort = 0.5

// driftFit fits the drift to the whole history of bins (512 s), unless the
// newest shortBins of them disagree with it beyond both fits' errors: a
// queue that builds in one direction while the other's drains tilts a
// short history by as much as a clock's rate, and a long one averages it
// out; a rate that changed (a slew the floors hid, or drift wander on a
// clean path, where both errors are small) shows as the recent history
// leaving the long one, and is followed on the recent one. (A slack of
// 20 ppm beyond the errors, tried, helped queued paths such as random:135
// and cost clean ones with wander as much.) Where they agree, the recent
// history's fit is taken if it knows the rate more than twice as
// precisely (preciseShort).
func (e *Estimator) driftFit() (r, se float64, ok bool) {
	return e.sinceJumpFit(e.historyFit())
}

// historyFit is driftFit on the whole history and its newest shortBins.
func (e *Estimator) historyFit() (r, se float64, ok bool) {
	e.rSEBound, e.rApart = 0, 0
	if e.binN <= shortBins {
		r, se, ok = e.regressBins(0)
		e.rApart = e.slopesApart
		return r, se, ok
	}
	rs, ses, oks := e.regressBins(e.binN - shortBins)
	apartS := e.slopesApart
	rl, sel, okl := e.regressBins(0)
	apartL := e.slopesApart
	agree := math.Abs(rs-rl) <= 3*math.Hypot(ses, sel)
	switch {
	case !okl:
		e.rApart = apartS
		return rs, ses, oks
	case !oks:
		e.rApart = apartL
		return rl, sel, true
	case agree && ses < preciseShort*sel:
		// The two agree, and the recent history knows the rate far
		// better: what the older bins add is noise that only widens and
		// tilts the fit (queues that rarely reach their floors, levels
		// cut into segments). random:135: the downlink on its floor every
		// few seconds for the last two minutes gave −26.0 ± 1.8 ppm, the
		// whole history 2.3 ± 12.7 under queues in both directions; the
		// drift was −26, and the long fit's 28 ppm read a floor's fall as
		// the clock stepping (a restart, and 13 ms of error after it).
		e.rApart = apartS
		return rs, ses, true
	case agree:
		// The bound keeps the recent history's error: the long one's
		// assumes a rate that held for 512 s, which only the agreement
		// supports.
		e.rSEBound, e.rApart = ses, apartL
		return rl, sel, true
	}
	e.rApart = apartS
	return rs, ses, true
}

// reanchor detrends every sample again at the drift, anchored at now: a
// new drift tilts every detrended value.
func (e *Estimator) reanchor(now int64) {
	e.t0 = now
	e.doubt.minOK = false
	e.memOK = false
	e.olderDirty = true
	for k := 0; k < e.n; k++ {
		i := e.at(k)
		tr := e.trend(e.t[i])
		e.ud[i] = e.u[i] - tr
		e.wd[i] = e.w[i] + tr
	}
}

// regressBins fits the drift to the lower envelope of the one-way deltas:
// one slope through the bin minima of u and of −w (the clock tilts both
// alike), with an intercept per direction and path segment, so a one-way
// step reads as no slope (gonum's weighted LinearRegression through the
// origin on data so centred). Each point is weighted by how close its bin's
// minimum came to its direction's floor: a queue that builds or drains in
// one direction, however slowly, lifts that direction's points and hands
// the fit to the other. It returns the drift, its standard error, and
// false with fewer than 8 usable bins.
func (e *Estimator) regressBins(from int) (r, se float64, ok bool) {
	if e.binN-from < 4 {
		return 0, 0, false
	}
	// The weights depend on the drift the excesses are detrended by:
	// iterate from the drift known so far, or from an unweighted fit
	// before there is one.
	r = e.r
	if !e.fitted {
		if r, _, ok = e.fitOnce(from, 0, false); !ok {
			return 0, 0, false
		}
	}
	for range 2 {
		if r, se, ok = e.fitOnce(from, r, true); !ok {
			return 0, 0, false
		}
	}
	return r, se, true
}

// fitOnce is one pass of regressBins, with the excesses detrended by the
// drift guess; unweighted, every bin weighs the same.
func (e *Estimator) fitOnce(from int, guess float64, weighted bool) (r, se float64, ok bool) {
	e.xs, e.ys, e.ws = e.xs[:0], e.ys[:0], e.ws[:0]
	e.segs = e.segs[:0]
	e.slopesApart = 0
	split := 0
	for dir := range 2 {
		start := len(e.xs)
		if dir == 1 {
			split = start
		}
		seg := -1
		floor := math.Inf(1)
		for k := from; k < e.binN; k++ {
			y, t, sg, skip := e.binFloor(dir, k)
			x := float64(t-e.t0) / 1e9
			if skip {
				continue
			}
			if sg != seg {
				seg = sg
				e.segs = append(e.segs, len(e.xs))
			}
			// The delay (not −w), detrended by the drift so far, is what
			// queues lift.
			d := y - guess*x
			if dir == 1 {
				d = -d
			}
			floor = min(floor, d)
			e.xs, e.ys, e.ws = append(e.xs, x), append(e.ys, y), append(e.ws, d)
		}
		e.weigh(start, floor, weighted)
	}
	n := len(e.xs)
	if n < 8 {
		return 0, 0, false
	}
	e.segs = append(e.segs, n)
	if weighted {
		e.splitLevels(guess)
	}
	for k := 0; k+1 < len(e.segs); k++ {
		a, b := e.segs[k], e.segs[k+1]
		centre(e.xs[a:b], e.ys[a:b], e.ws[a:b])
	}
	// Each direction's slope, with its own error; combined by inverse
	// variance, so that a direction whose queues scatter its points does
	// not outvote a clean one.
	su, seU, okU := e.slope(0, split)
	sw, seW, okW := e.slope(split, n)
	e.dirSlopes = dirSlopes{su, seU, okU, sw, seW, okW}
	switch {
	case !okU && !okW:
		return 0, 0, false
	case !okU:
		return sw, seW, true
	case !okW:
		return su, seU, true
	}
	// A queue that fills one direction for longer than the history makes
	// its ramp look like the floor. The clock tilts both directions alike:
	// when they disagree by more than their errors allow, trust the one
	// that agrees with the drift known so far. After a rate change that
	// may be the wrong one, which the bound allows for (slopesApart).
	if math.Abs(su-sw) > 3*math.Hypot(seU, seW)+slopeSlack {
		e.slopesApart = math.Abs(su-sw) / 3
		if math.Abs(su-e.r) <= math.Abs(sw-e.r) {
			return su, seU, true
		}
		return sw, seW, true
	}
	if seU == 0 || seW == 0 { // a perfect path
		return (su + sw) / 2, 0, true
	}
	wu, ww := 1/(seU*seU), 1/(seW*seW)
	return (wu*su + ww*sw) / (wu + ww), 1 / math.Sqrt(wu+ww), true
}

// slopeSlack is how far the two directions' slopes may differ beyond their
// errors before one is distrusted.
const slopeSlack = 20e-6

// slope fits one slope through the origin to the weighted, centred points
// in [from, to) and returns it with its standard error: from the weighted
// scatter about the line with the effective number of points the weights
// leave, widened for the residuals' autocorrelation within each segment.
// It returns false with fewer than 2.5 effective points or no spread in
// time.
func (e *Estimator) slope(from, to int) (beta, se float64, ok bool) {
	xs, ys, ws := e.xs[from:to], e.ys[from:to], e.ws[from:to]
	if len(xs) < 3 {
		return 0, 0, false
	}
	_, beta = stat.LinearRegression(xs, ys, ws, true)
	var ss, sxx, sw, sw2 float64
	for j := range xs {
		d := ys[j] - beta*xs[j]
		ss += ws[j] * d * d
		sxx += ws[j] * xs[j] * xs[j]
		sw += ws[j]
		sw2 += ws[j] * ws[j]
	}
	if sxx == 0 || sw2 == 0 {
		return 0, 0, false
	}
	neff := sw * sw / sw2 // an intercept and a slope take two
	if neff < 2.5 {
		return 0, 0, false
	}
	se = math.Sqrt(ss/sw*neff/(neff-2)) / math.Sqrt(sxx/sw*neff)
	// Queues that last longer than a bin make neighbouring bins' residuals
	// alike, and then the count overstates what the bins know: widen the
	// error by the lag-1 autocorrelation ρ of the residuals (effective
	// sample size n(1−ρ)/(1+ρ)).
	var c0, c1 float64
	for k := 0; k+1 < len(e.segs); k++ {
		prev := math.NaN()
		for j := max(from, e.segs[k]); j < min(to, e.segs[k+1]); j++ {
			d := e.ys[j] - beta*e.xs[j]
			c0 += e.ws[j] * d * d
			if !math.IsNaN(prev) {
				c1 += e.ws[j] * d * prev
			}
			prev = d
		}
	}
	// (With a handful of points ρ is mostly noise.)
	if len(xs) >= 8 {
		se = widenForAutocorrelation(se, c0, c1)
	}
	return beta, se, true
}

// widenForAutocorrelation widens a slope's standard error se for the lag-1
// autocorrelation ρ = c1/c0 of its residuals (c0 their sum of squares, c1
// of neighbours' products): queues that last longer than a bin make
// neighbouring residuals alike, and the effective count is n(1−ρ)/(1+ρ).
// ρ is capped at 0.9; a negative one leaves se as it is.
func widenForAutocorrelation(se, c0, c1 float64) float64 {
	if c0 <= 0 || c1 <= 0 {
		return se
	}
	rho := min(c1/c0, 0.9)
	return se * math.Sqrt((1+rho)/(1-rho))
}

// weigh turns the delays in ws[start:] (one direction's bin minima, in
// seconds) into weights: 1/(1+(excess/scale)²) for the excess over the
// direction's floor, on the scale of the excess of its cleaner bins (four
// times the eighth-lowest) — so that stationary jitter weighs the bins not
// far apart and a queue that fills most of the history is still seen as
// one.
func (e *Estimator) weigh(start int, floor float64, weighted bool) {
	ws := e.ws[start:]
	if !weighted {
		for j := range ws {
			ws[j] = 1
		}
		return
	}
	if len(ws) == 0 {
		return
	}
	e.tmp = e.tmp[:0]
	for j := range ws {
		ws[j] -= floor
		e.tmp = append(e.tmp, ws[j])
	}
	scale := max(4*rank.Nth(e.tmp, min(len(e.tmp)-1, max(1, len(e.tmp)/8))), 20e-6)
	for j := range ws {
		q := ws[j] / scale
		ws[j] = 1 / (1 + q*q)
	}
}

// centre subtracts from xs and ys their means weighted by ws.
func centre(xs, ys, ws []float64) {
	var mx, my, n float64
	for j := range xs {
		mx += ws[j] * xs[j]
		my += ws[j] * ys[j]
		n += ws[j]
	}
	if n == 0 {
		return
	}
	mx /= n
	my /= n
	for j := range xs {
		xs[j] -= mx
		ys[j] -= my
	}
}

// dirSlopes are each direction's slope and standard error from the last
// fit, before they are combined.
type dirSlopes struct {
	u, seU float64
	okU    bool
	w, seW float64
	okW    bool
}

// binFloor returns bin k's minimum in direction dir in seconds, as the
// drift fit reads it (u, and −w, both tilted by the clock alike), with its
// time, path segment and whether it straddles a step.
func (e *Estimator) binFloor(dir, k int) (y float64, t int64, seg int, skip bool) {
	bn := &e.bins[(e.binHead+k)%numBins]
	if dir == 0 {
		return float64(bn.minU) / 1e9, bn.tu, bn.segU, bn.skipU
	}
	return -float64(bn.minW) / 1e9, bn.tw, bn.segW, bn.skipW
}
