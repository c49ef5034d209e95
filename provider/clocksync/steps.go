package clocksync

import "time"

// tolerances returns how far below a floor a sample must be to count as a
// step down (a quarter of the mean excess over the floor, which the floor
// settling cannot produce once the window holds a few dozen samples), and
// how far above for a step up (twice the mean excess: ten such samples in a
// row happen by chance about once in 10⁹ for exponential jitter, never for
// uniform), per direction, never under 200µs.
func (e *Estimator) tolerances(older scanned) (dropU, dropW, riseU, riseW int64) {
	meanU, meanW := e.meanExcessOf(older, older.minU, older.minW)
	// The floors are tilted by as much as the drift's error over the window.
	rse := e.rSE
	if !e.fitted {
		rse = priorDriftSE
	}
	floor := int64(200*time.Microsecond) + int64(3*rse*float64(e.t[e.at(e.n-1)]-e.t[e.head]))
	return max(floor, meanU/4), max(floor, meanW/4), max(floor, 2*meanU), max(floor, 2*meanW)
}

// detectSteps looks for a floor that moved, and rebases or restarts.
func (e *Estimator) detectSteps() Event {
	jc, rc := e.cfg.JumpConfirm, e.cfg.RiseConfirm
	if e.n < 2*rc+jc { // too few samples to tell a step from the floor settling
		return EventNone
	}
	newest := e.at(e.n - 1)
	older := e.olderSummary()
	fu, fw := older.minU, older.minW
	dropU, dropW, riseU, riseW := e.tolerances(older)

	count := func(c *int, cond bool) {
		if cond {
			*c++
		} else {
			*c = 0
		}
	}
	count(&e.belowU, e.ud[newest] < fu-dropU)
	count(&e.belowW, e.wd[newest] < fw-dropW)
	// The rise threshold is frozen when a run starts: the samples after a
	// step raise the mean excess it derives from, and would otherwise lift
	// it past the step.
	if e.aboveU == 0 {
		e.riseAtU = riseU
	}
	if e.aboveW == 0 {
		e.riseAtW = riseW
	}
	count(&e.aboveU, e.ud[newest] > fu+e.riseAtU)
	count(&e.aboveW, e.wd[newest] > fw+e.riseAtW)
	// A rise must also last: a queue (bufferbloat) can hold one direction
	// high for a second or two, a route change stays. Waiting costs
	// nothing, since a rise cannot drag the minimum.
	risen := func(n int) bool {
		return n >= rc && e.t[newest]-e.t[e.at(e.n-n)] >= int64(riseHold)
	}

	dropped := e.belowU >= jc || e.belowW >= jc
	if !dropped && !risen(e.aboveU) && !risen(e.aboveW) {
		return EventNone
	}
	spanU, spanW := e.aboveU, e.aboveW
	if dropped {
		spanU, spanW = e.belowU, e.belowW
		// A clock jump moves the two floors by the same amount in
		// opposite directions: one side drops below its floor (which
		// queueing can't explain) and the other rises by about as much,
		// over the same samples. When in doubt it is a jump: restarting
		// the window only costs precision for a while, while holding the
		// offset across a real jump would keep its error.
		span := min(max(spanU, spanW), e.n-1)
		a, b := e.change(span)
		meanU, meanW := riseU/2, riseW/2
		isJump := (a < -dropU && b > dropW) || (b < -dropW && a > dropU)
		if ma, mb := abs64(a), abs64(b); isJump && abs64(ma-mb) <= max(meanU+meanW, max(ma, mb)/4) {
			e.belowU, e.belowW, e.aboveU, e.aboveW = 0, 0, 0, 0
			e.olderDirty = true
			e.restart(span)
			e.stats.Jumps++
			return EventClockJump
		}
		if e.belowU < jc {
			spanU = 0
		}
		if e.belowW < jc {
			spanW = 0
		}
	} else {
		// Measure both floors over the span of the rise: a clock that
		// slews (NTP runs CLOCK_MONOTONIC up to 500 ppm fast or slow)
		// lowers one floor as fast as it lifts the other, and the falling
		// one is absorbed sample by sample without any event. Equal and
		// opposite moves are the clock: shift both and keep A.
		span := min(max(spanU, spanW), e.n-1)
		a, b := e.change(span)
		meanU, meanW := riseU/2, riseW/2
		noiseU := max(int64(200*time.Microsecond), 6*meanU/int64(span))
		noiseW := max(int64(200*time.Microsecond), 6*meanW/int64(span))
		if (a < 0) != (b < 0) && abs64(a) > noiseU && abs64(b) > noiseW &&
			abs64(a+b) <= max(noiseU+noiseW, max(abs64(a), abs64(b))/2) {
			// The rate changed: the window and the drift history keep
			// only what followed the shift, and the drift is refitted on
			// every new bin until the history fills again.
			e.belowU, e.belowW, e.aboveU, e.aboveW = 0, 0, 0, 0
			e.head = e.at(e.n - span)
			e.n = span
			e.olderN, e.olderDirty = 0, true
			since := e.t[e.head]
			for e.binN > 0 && e.bins[e.binHead].start < since {
				e.binHead = (e.binHead + 1) % numBins
				e.binN--
			}
			e.binsDone = e.binN
			e.stats.ClockShifts++
			return EventClockShift
		}
		if !risen(e.aboveU) {
			spanU = 0
		}
		if !risen(e.aboveW) {
			spanW = 0
		}
	}
	// A path change: each direction that moved is rebased from before its
	// own step onto its new floor, and A absorbs the difference, so the
	// offset holds.
	var a, b int64
	if spanU > 0 {
		spanU = min(spanU, e.n-1)
		a, _ = e.change(spanU)
	}
	if spanW > 0 {
		spanW = min(spanW, e.n-1)
		_, b = e.change(spanW)
	}
	// Only a change beyond the step tolerances is a step.
	if abs64(a) <= dropU {
		a, spanU = 0, 0
	}
	if abs64(b) <= dropW {
		b, spanW = 0, 0
	}
	if a == 0 && b == 0 {
		e.belowU, e.belowW, e.aboveU, e.aboveW = 0, 0, 0, 0
		return EventNone
	}
	e.belowU, e.belowW, e.aboveU, e.aboveW = 0, 0, 0, 0
	e.olderDirty = true
	e.rebase(spanU, a, spanW, b)
	e.asym += a - b
	e.stats.PathChanges++
	return EventPathChange
}

// rebase moves the samples before the newest spanU onto the uplink's new
// floor (by a), and those before the newest spanW onto the downlink's (by
// b), with the drift history from before the earlier of the two steps; what
// straddles or follows it is dropped.
func (e *Estimator) rebase(spanU int, a int64, spanW int, b int64) {
	stepAt := e.t[e.at(e.n-1)]
	if a != 0 {
		stepAt = min(stepAt, e.t[e.at(e.n-spanU)])
	}
	if b != 0 {
		stepAt = min(stepAt, e.t[e.at(e.n-spanW)])
	}
	for k := 0; k < e.n-spanU; k++ {
		i := e.at(k)
		e.u[i] += a
		e.ud[i] += a
	}
	for k := 0; k < e.n-spanW; k++ {
		i := e.at(k)
		e.w[i] += b
		e.wd[i] += b
	}
	for k := 0; k < e.binN; k++ {
		bn := &e.bins[(e.binHead+k)%numBins]
		if bn.start+binDuration > stepAt {
			e.binN = k
			break
		}
		bn.minU += a
		bn.minW += b
	}
	e.cur = bin{}
}

// change returns how far each floor moved: the minimum of the newest span
// samples against the minimum of the rest.
func (e *Estimator) change(span int) (a, b int64) {
	ru, rw := e.minDetrended(e.n-span, e.n)
	fu, fw := e.minDetrended(0, e.n-span)
	return ru - fu, rw - fw
}

// restart keeps only the newest keep samples. The path did not change, so
// A stays; neither does the drift.
func (e *Estimator) restart(keep int) {
	e.head = e.at(e.n - keep)
	e.n = keep
	e.olderN, e.olderDirty = 0, true
	e.bound = -1
	e.binN, e.binsDone, e.cur = 0, 0, bin{}
}
