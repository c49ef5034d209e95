package clocksync

import "math"

// A clock step moves the clock, not its rate: the drift known before it
// holds after it. Thrown away with the bins, the drift was fitted again on
// the few seconds after the step, and a queue in them read as the rate
// (random:101 seed 4: a 458ms client step on a −457 ppm clock known to
// ±0.4 ppm, then a downlink bloat; the refits swung between −141 and
// +90 ppm, 48ms of p99). So the drift history is kept across a jump:
// each bin moves onto the new clock by the step's size, starts a path
// segment of its own in each direction (its own intercept in the fit: the
// size need not be exact), and the bins that may hold samples from after
// the step leave the fit.
//
// The step may still have come with a new rate: a slew that began, or
// ended, read as a jump (random:585, a +473 ppm server slew whose first
// move was taken for a step). The bins since the jump are fitted by
// themselves as well, and their fit is taken once it leaves the whole
// history's by more than jumpSigmas of the two errors, with both
// directions' slopes agreeing and each bent by itself (a queue that builds
// in one direction tilts that one alone: random:2029, a 75ms uplink bloat
// in the first bins after a jump fitted at 1990 ppm), and precise enough
// to show a change a clock can make. Once taken, the history before goes
// (dropBeforeJump). Until the bins since the jump fill the recent
// history, the bound takes their error as the drift's (from a fit too
// scattered to take, up to a fifth of maxShift and in the bound alone): a
// rate change they cannot yet see is as large as that.
//
// Not when the drift is known too loosely for its history to be worth
// more than a new fit (keptDriftSE), nor when a rate change is already
// suspected: a bend under way, an acquisition after a clock shift, or a
// drift apart from the one before the last shift (a slew under way, whose
// end the step may be). The bins go then, as before.

// jumpSigmas is how many standard errors of the two fits the fit of the
// bins since a jump must leave the whole history's by to be taken. (At 3
// and 4, random:1..600 at 10 Hz gained less: p99 ×0.9943 and ×0.9932
// against ×0.9909 at 5, before the other checks were added.)
const jumpSigmas = 5

// keptDriftSE is the largest standard error of a drift whose history a
// jump keeps: a drift known no better is little better than the fit
// again after the step. Kept whatever its error, the history cost the
// hand-written phone-background (queues both ways, 1 ppm/min of wander,
// drifts fitted ±20 to ±200 ppm) ×1.016 over 20 seeds and a run at 1 Hz
// its coverage (random:287 seed 3, 98.1%), for random:1..600 ×0.9887 and
// random:8001..9400 ×0.9879; at 5 ppm, ×0.9914 and ×0.9928, neither
// loss; at 10 ppm ×0.9908.
const keptDriftSE = 5e-6

// jumpFitBins is the fewest bins since a jump whose own fit is weighed.
const jumpFitBins = 4

// keepsHistoryAcross reports whether the drift history is kept across a
// jump (see above).
func (e *Estimator) keepsHistoryAcross() bool {
	return e.fitted && e.binN > 0 && e.boundSE() <= keptDriftSE && !e.bending && !e.slewing &&
		!(e.beforeOK && math.Abs(e.r-e.before) > kinkSlack)
}

// keepHistory moves the drift history across a clock step: by is how far
// the client's clock moved (u fell by it and w rose, whichever clock
// stepped), at the client time of the first sample seen after it.
func (e *Estimator) keepHistory(at, by int64) {
	// Bins that may hold samples from after the step leave the fit: those
	// ending after at, or, if the client's clock stepped forward, after
	// the step's time on the old clock.
	cut := min(at, at-by)
	last := int64(math.MinInt64) // the newest bin start kept
	for k := 0; k < e.binN; k++ {
		bn := &e.bins[(e.binHead+k)%numBins]
		if bn.start+binDuration > cut {
			bn.skipU, bn.skipW = true, true
		} else {
			last = bn.start
		}
		bn.minU -= by
		bn.minW += by
		if bn.min2U != math.MaxInt64 {
			bn.min2U -= by
		}
		if bn.min2W != math.MaxInt64 {
			bn.min2W += by
		}
	}
	// Onto the new clock, if the client's stepped: the bins' times stay in
	// order, before at. Which clock stepped the samples cannot tell; a
	// server's step leaves the client's times as they were, and a move
	// forward that would put a bin after at is not made.
	shift := by
	if by > 0 && last != math.MinInt64 {
		shift = min(by, max(0, at-binDuration-last))
	}
	for k := 0; k < e.binN; k++ {
		bn := &e.bins[(e.binHead+k)%numBins]
		bn.start += shift
		bn.tu += shift
		bn.tw += shift
	}
	e.segU++
	e.segW++
	e.cur = bin{}
	// As after a one-way step (shiftBins): the new segments need a few
	// bins of their own before the fit weighs them.
	e.driftHold = jumpFitBins
	e.memOK = false
	e.jumpBins, e.jumpSE = 0, 0
}

// countJumpBin counts a completed bin since the jump whose history was
// kept, until the bins since fill the recent history.
func (e *Estimator) countJumpBin() {
	if e.jumpBins < 0 {
		return
	}
	e.jumpBins++
	if e.jumpBins > shortBins {
		e.forgetJump()
	}
}

// sinceJumpFit weighs the fit r (standard error se) of the whole history
// against that of the bins since a jump that kept it, and returns the one
// to take.
func (e *Estimator) sinceJumpFit(r, se float64, ok bool) (float64, float64, bool) {
	if e.jumpBins < jumpFitBins || e.jumpBins >= e.binN {
		return r, se, ok
	}
	seBound, apart, slopesApart, dir := e.rSEBound, e.rApart, e.slopesApart, e.dirSlopes
	rj, sej, okj := e.regressBins(e.binN - e.jumpBins)
	dj := e.dirSlopes
	fitted := okj
	// Both directions alike, and precise enough to show a change a clock
	// can make (maxShift): on a few bins of a jittery path the fit can be
	// thousands of ppm off (random:103 seed 2 at 1 Hz: −4300 ± 460 ppm six
	// bins after a jump, 1.25 s of error).
	okj = okj && e.dirSlopes.okU && e.dirSlopes.okW && e.slopesApart == 0 &&
		jumpSigmas*sej <= maxShift && math.Abs(rj-r) <= maxShift
	// (What the bound and the kink test read stays the whole history's.)
	e.rSEBound, e.rApart, e.slopesApart, e.dirSlopes = seBound, apart, slopesApart, dir
	if fitted {
		// Even a fit too scattered to take bounds the rate since, in the
		// bound alone (jumpSE): through the drift's error it would widen
		// the floors' tolerances too (hand-written server-migration seed
		// 2, 0.9 -> 2.9ms).
		e.jumpSE = min(sej, maxShift/jumpSigmas)
	}
	switch {
	case !okj:
	case (!ok || math.Abs(rj-r) > jumpSigmas*math.Hypot(sej, se)) && e.bentAlike(rj, dj, kinkSigmas/2, 0):
		// Each direction bent by itself, as the kink test wants: where
		// one is too scattered to say, the other's slope carries the
		// fit, and a queue on that side alone is not a clock (random:1974
		// seed 4: a real step, then an uplink ramp in the 8 s since,
		// fitted −233 ± 13 ppm against +7 beside a downlink of +70 ± 256,
		// and the history dropped for it: 3.2 -> 13.2ms).
		e.dropBeforeJump(rj)
		return rj, sej, true
	default:
		e.rSEBound = max(e.rSEBound, sej)
	}
	return r, se, ok
}

// dropBeforeJump keeps only the drift bins since the jump, once their fit
// showed a rate of their own (rj): the history before is of another rate,
// and a refit on it (the bins since too scattered to be taken, for a bin
// or two) would return to that rate (hand-written server-migration seed 3:
// a step, then a +400 ppm slew; the rate back from 376 to 30 ppm for two
// seconds, and two path changes that left A 0.96ms off for the rest of the
// run). As after a clock shift, the rate before is the one a slew's end
// returns to (random:171: a slew's start read as a jump; its end, without
// that rate, read as path changes that walked A 11ms), and the path
// changes since the jump that the new rate explains are taken back. The
// bound keeps the fit's error since the jump (jumpSE) until the bins since
// fill the recent history, as before the drop.
//
// The floors are not acquired afresh on the new rate, though the window
// holds the samples from before it, detrended at the wrong one: on a fit
// that a bloat made (random:11732 seed 3, −548 ppm against 37 eight bins
// after a jump), the acquisition followed the bloat's floors as the clock
// and the bound did not see it, 98.2% coverage.
func (e *Estimator) dropBeforeJump(rj float64) {
	e.dropOldBins(e.binN - e.jumpBins)
	e.leftRate()
	now := e.t[e.at(e.n-1)]
	e.undoClockSinceJump(int64(2*(rj-e.r)*float64(now-e.jumpAt)), true)
	e.forgetPaths()
}

// forgetJump ends the weighing of the bins since a jump (no jump's
// history kept, or the bins since fill the recent history).
func (e *Estimator) forgetJump() { e.jumpBins, e.jumpSE = -1, 0 }
