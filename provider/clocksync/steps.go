package clocksync

import (
	"math"
	"time"
)

// tolerances returns how far below a floor a sample must be to count as a
// step down (a quarter of the mean excess over the floor, which the floor
// settling cannot produce once the window holds a few dozen samples), and
// how far above for a step up (twice the mean excess: ten such samples in a
// row happen by chance about once in 10⁹ for exponential jitter, never for
// uniform), per direction, never under 200µs.
func (e *Estimator) tolerances(older scanned) (dropU, dropW, riseU, riseW int64) {
	meanU, meanW := e.meanExcessOf(older, older.minU, older.minW)
	// The floors are tilted by as much as the drift's error over the window.
	floor := int64(200*time.Microsecond) + int64(3*e.driftSE()*float64(e.span()))
	return max(floor, meanU/4), max(floor, meanW/4), max(floor, 2*meanU), max(floor, 2*meanW)
}

// detectSteps looks for a clock that stepped (a floor that drops while the
// other rises) or slewed (floors that move apart over seconds).
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
	count(&e.mildU, e.ud[newest] > fu+riseU/2)
	count(&e.mildW, e.wd[newest] > fw+riseW/2)
	// A rise must also last: a queue (bufferbloat) can hold one direction
	// high for a second or two, a route change stays. Waiting costs
	// nothing, since a rise cannot drag the minimum.
	risen := func(n int) bool {
		return n >= rc && e.t[newest]-e.t[e.at(e.n-n)] >= int64(riseHold)
	}

	// A run below a floor that began with the floor falling by a little
	// (a queue that drains) can be joined by a step of the clock: the
	// step is judged on its own samples, once JumpConfirm of them came.
	e.belowU = e.sinceDiscontinuity(e.ud, fu, e.belowU)
	e.belowW = e.sinceDiscontinuity(e.wd, fw, e.belowW)
	dropped := e.belowU >= jc || e.belowW >= jc
	if e.aboveU == 0 {
		e.shiftedU, e.lookU = false, 0
	}
	if e.aboveW == 0 {
		e.shiftedW, e.lookW = false, 0
	}
	// A rise is looked at when it is first confirmed and then every
	// riseHold while it lasts (a slew can take that long to show in the
	// other floor): every 5·rc samples, riseHold at the 10 Hz the rules
	// were set at, and at a slower rate at least every 2·riseHold. (At
	// 1 Hz every 50 samples was every 50s: a slew's end, its falling floor
	// taken for a path change each third sample, went unseen for a minute,
	// the offset 19ms astray under a bound of 15.)
	lasted := func(n int) int64 { return e.t[newest] - e.t[e.at(e.n-n)] }
	look := func(n int, dueAt *int64) bool {
		if !risen(n) || (n-rc)%(rc*5) != 0 && lasted(n)-*dueAt < 2*int64(riseHold) {
			return false
		}
		*dueAt = lasted(n)
		return true
	}
	lookU, lookW := look(e.aboveU, &e.lookU), look(e.aboveW, &e.lookW)
	// A slew shows as both floors moving apart long before a one-way rise
	// has lasted riseHold: look for it every rc samples from half that on.
	// (On a milder rise: the floor need not have risen past the jitter.)
	early := func(n int) bool {
		return !risen(n) && n >= rc && n%rc == 0 && lasted(n) >= int64(riseHold/2)
	}
	strictLook := !dropped && !lookU && !lookW && (early(e.aboveU) || early(e.aboveW))
	earlyLook := !dropped && !lookU && !lookW && !strictLook && (early(e.mildU) || early(e.mildW)) && !e.recentGap()
	if !dropped && !lookU && !lookW && !strictLook && !earlyLook {
		return EventNone
	}
	if dropped {
		// A clock jump moves the two floors by the same amount in
		// opposite directions: one side drops below its floor (which
		// queueing can't explain) and the other rises by about as much,
		// over the same samples. When in doubt it is a jump: restarting
		// the window only costs precision for a while, while holding the
		// offset across a real jump would keep its error.
		spanU, spanW := e.belowU, e.belowW
		span := min(max(spanU, spanW), e.n-1)
		// The run's first sample may straddle the step (a ping in flight
		// when the clock stepped back carries the old uplink delta and the
		// new downlink one): it must not veto the jump.
		skip := 0
		if span > 1 {
			skip = 1
		}
		a, b := e.changeSkipping(span, skip)
		// The rising side is measured on a few samples, whose minimum sits
		// about the mean excess over their count above the floor: it must
		// rise beyond that.
		k := int64(max(1, span-skip))
		upU, upW := max(dropU, 4*(riseU/2)/k), max(dropW, 4*(riseW/2)/k)
		isJump := (a < -dropU && b > upW) || (b < -dropW && a > upU)
		// The other side's rise goes on counting, unless this is a jump or
		// follows an interruption: a slew lowers one floor sample by
		// sample, a drop each few samples, while the other's rise builds
		// the evidence of it; a handover moves both floors at once, after
		// an outage, and is no slew.
		e.belowU, e.belowW = 0, 0
		if e.recentGap() {
			e.aboveU, e.aboveW, e.mildU, e.mildW = 0, 0, 0, 0
		}
		// Equal and opposite within a third (a short span's minimum sits
		// a little above its floor), and not one side dropping while the
		// other only wobbles: the mean excess (meanU, meanW) is no
		// measure here, as a queue draining inflates it.
		// After an interruption, moves the path could make (each floor
		// moved by less than the round trip) are the path's: a handover or
		// a re-route moves the floors, and a clock steps without one. The
		// path tracker holds them, in doubt (doubt.go).
		ma, mb := abs64(a), abs64(b)
		if isJump && e.pathCouldFall(a < 0, min(ma, mb)) && e.recentGap() {
			isJump = false
		}
		if isJump && abs64(ma-mb) <= max(ma, mb)/3+int64(200*time.Microsecond) {
			// Moves the path could have made may have been a handover
			// whose outage was too short to tell (a few pings): taken for
			// the clock, A keeps them as its error.
			var pathErr int64
			if e.pathCouldFall(a < 0, min(ma, mb)) {
				pathErr = ma + mb
			}
			// A path change the jump's own first samples made (one
			// side's move seen a sample or two before the other's) may
			// have been the clock's too: A keeps it as its error.
			// (Undone instead, it made 33 of 27115 runs worse by more
			// than 5% against 9 better.)
			e.addAsymErr(e.pathTookClock(e.t[e.at(e.n-min(span, 3))], a-b))
			e.aboveU, e.aboveW, e.mildU, e.mildW = 0, 0, 0, 0
			e.olderDirty = true
			e.markJump(a, b, e.sentAt(e.n-(span-skip)))
			pu, pw := e.pendingRises(span, fu, fw)
			e.restart(span-skip, e.t[e.at(e.n-span)], (b-a)/2)
			if e.reacq.on && !e.reacq.ended && pu+pw > 0 {
				e.reacq.pendU, e.reacq.pendW = pu, pw
				e.reacq.pendA = e.asym
			}
			if e.reacq.on {
				e.reacq.pathErr += pathErr
			} else {
				e.addAsymErr(pathErr)
			}
			e.forgetPaths()
			e.acquire(acquireSamples)
			e.firstAcq = false
			e.stats.Jumps++
			return EventClockJump
		}
		// A floor that dropped by itself: the path tracker sees it now
		// that the run is no longer held out (and a drop this clear is a
		// path change even while converging, except in the first samples
		// after a start, whose floors may be a queue's that drains); the
		// drift history moves onto the new floor.
		if !e.slewing && !e.firstAcq {
			e.acquiring = 0
		}
		var du, dw int64
		if spanU >= jc {
			du, _ = e.changeSkipping(min(spanU, e.n-1), 0)
		}
		if spanW >= jc {
			_, dw = e.changeSkipping(min(spanW, e.n-1), 0)
		}
		e.shiftBins(e.t[e.at(e.n-span)], du, dw)
		return EventNone
	}
	// Measure both floors over the span of the rise: a clock that slews
	// (NTP runs CLOCK_MONOTONIC up to 500 ppm fast or slow) lowers one
	// floor as fast as it lifts the other, and the falling one is absorbed
	// sample by sample. Equal and opposite moves are the clock.
	spanU, spanW := e.aboveU, e.aboveW
	if earlyLook {
		spanU, spanW = e.mildU, e.mildW
	}
	span := min(max(spanU, spanW), e.n-1)
	// Each floor now — the newest quarter of the span, at least rc
	// samples — against the floor before the span: a slew is a ramp, whose
	// rising side is lowest at the span's start.
	q := min(span, max(rc, span/4))
	a, b := e.changeSkipping(span, span-q)
	meanU, meanW := riseU/2, riseW/2
	noiseU := max(int64(200*time.Microsecond), 6*meanU/int64(span))
	noiseW := max(int64(200*time.Microsecond), 6*meanW/int64(span))
	// Equal and opposite: as measured, or with the falling side's move
	// taken against where a stretch of q samples' minimum sat before the
	// span rather than the window's floor, which sits lower on a soft
	// floor, in a tilted window or under a fall begun before the span
	// (chunkfloor.go). Only the comparison of the sides takes it: each
	// must still have moved beyond its noise as measured (judged on the
	// stretches too, handovers and queues made slews: random:270 seed 1,
	// 0.05 → 2.3 ms; random:1910 seed 5, 0.10 → 11 ms). The stretches'
	// level counts no higher above the floor than the mean excess, which
	// no minimum exceeds; and not right after an interruption, whose moves
	// are the path's.
	ea, eb := a, b
	if (a < 0) != (b < 0) && !e.recentGap() {
		if bu, bw, ok := e.shortMinBias(span, q); ok && a < 0 {
			ea -= min(bu, meanU)
		} else if ok {
			eb -= min(bw, meanW)
		}
	}
	equal := func(a, b int64) bool { return abs64(a+b) <= max(noiseU+noiseW, max(abs64(a), abs64(b))/2) }
	// (A rise as old as the window leaves nothing before it to compare.)
	if span <= e.n/2 && (a < 0) != (b < 0) && abs64(a) > noiseU && abs64(b) > noiseW &&
		(equal(a, b) || equal(ea, eb)) &&
		float64(abs64(a-b))/2 <= maxShift*float64(e.t[newest]-e.t[e.at(e.n-span)]) &&
		e.stillRamping(span, q, a, b) && (!earlyLook && !e.riseAfterGap(span) || e.rampsWithin(span, a, b)) {
		e.rateShift(span, 0, false, a, b)
		return EventClockShift
	}
	if earlyLook || strictLook {
		return EventNone
	}
	// A floor that rose by itself: a queue or a longer path. The window
	// still holds the old floor, which is right for the offset; the path
	// tracker takes the change when the old samples leave. The drift
	// history is moved onto the new floor at once, or the step would read
	// as a slope.
	// Once per rise: the run goes on until the old floor leaves the window.
	// A rise of both floors (a longer route both ways) is taken in one
	// go, so the drift is never fitted to one side moved and the other not.
	var du, dw int64
	upNow := risen(spanU) && !e.shiftedU
	downNow := risen(spanW) && !e.shiftedW
	if upNow && !e.shiftedW && spanW >= rc/2 {
		downNow = true
	}
	if downNow && !e.shiftedU && spanU >= rc/2 {
		upNow = true
	}
	if upNow {
		du, _ = e.change(min(max(spanU, 1), e.n-1))
		e.shiftedU = true
	}
	if downNow {
		_, dw = e.change(min(max(spanW, 1), e.n-1))
		e.shiftedW = true
	}
	e.shiftBins(e.t[e.at(e.n-max(spanU, spanW))], du, dw)
	return EventNone
}

// stillRamping reports whether both floors still move at the end of a
// long span as they did over all of it (a, b): a slew is a ramp, so the
// newest quarter (q samples) sits past the quarter before it by about a
// quarter of the move (a sixteenth is enough: the drift tracker, refitted
// bin by bin during a slew, flattens the detrended ramp). Two queues that moved the floors apart within a few
// seconds and then held, looked at again while the rise lasts, show the
// same total over an ever longer span — a rate that falls below maxShift
// though nothing ramps any more. (A span of a few quarters is the first
// look, the ramp itself.)
func (e *Estimator) stillRamping(span, q int, a, b int64) bool {
	if span < 4*q {
		return true
	}
	prevU, prevW := e.minDetrended(e.n-2*q, e.n-q)
	newU, newW := e.minDetrended(e.n-q, e.n)
	du, dw := newU-prevU, newW-prevW
	return (du > 0) == (a > 0) && abs64(du) >= abs64(a)/16 &&
		(dw > 0) == (b > 0) && abs64(dw) >= abs64(b)/16
}

// rampsWithin reports whether both floors moved over the newest span
// samples as a ramp does, not as a step: the newer half's floors sit past
// the older half's, each the way its side moved (a, b), by a sixth of it;
// or, where one side's halves hide it, both sides together by a sixth of
// both moves, and past each third of the span the one before by a
// twelfth. (A short span's first look: stillRamping needs a longer one.)
// A half's minimum may sit anywhere in it, and where the jitter is wider
// than the ramp over a half one side's minima can hide the ramp
// (clock-slew seed 1: the rising floor's halves 0.16ms apart over a
// 0.75ms move; random:430 seed 1, a slew's end seen 13.5s late);
// weighed together, the halves also pass a step inside the span (a
// 2.1ms client step, random:8135 seed 2), which moves one pair of thirds
// only.
func (e *Estimator) rampsWithin(span int, a, b int64) bool {
	// along returns how far the floors moved from (ou, ow) to (nu, nw)
	// the way each side moved.
	along := func(ou, ow, nu, nw int64) (int64, int64) {
		mu, mw := nu-ou, nw-ow
		if a < 0 {
			mu = -mu
		}
		if b < 0 {
			mw = -mw
		}
		return mu, mw
	}
	h := span / 2
	oldU, oldW := e.minDetrended(e.n-span, e.n-h)
	newU, newW := e.minDetrended(e.n-h, e.n)
	mu, mw := along(oldU, oldW, newU, newW)
	if mu > 0 && mw > 0 && 6*mu >= abs64(a) && 6*mw >= abs64(b) {
		return true
	}
	total := abs64(a) + abs64(b)
	if mu <= 0 || mw <= 0 || 6*(mu+mw) < total {
		return false
	}
	t := span / 3
	u0, w0 := e.minDetrended(e.n-span, e.n-span+t)
	u1, w1 := e.minDetrended(e.n-span+t, e.n-t)
	u2, w2 := e.minDetrended(e.n-t, e.n)
	m1u, m1w := along(u0, w0, u1, w1)
	m2u, m2w := along(u1, w1, u2, w2)
	return 12*(m1u+m1w) >= total && 12*(m2u+m2w) >= total
}

// shiftBins starts a new path segment in each direction that stepped
// (du, dw nonzero) from client time stepAt on: the drift fit gives each
// segment its own intercept, so the step, whatever its exact size, reads
// as no slope. A ramp's next part after a jump (stair.go) starts none.
func (e *Estimator) shiftBins(stepAt, du, dw int64) {
	if du == 0 && dw == 0 {
		return
	}
	if e.stairPart(0, du, stepAt) {
		du = 0
	}
	if e.stairPart(1, dw, stepAt) {
		dw = 0
	}
	if du == 0 && dw == 0 {
		return
	}
	// Until the new segment has a few bins of its own, the step's edge
	// (bins from before it was confirmed) would tilt the fit.
	e.driftHold = 4
	if du != 0 {
		e.segU++
	}
	if dw != 0 {
		e.segW++
	}
	// A bin that straddles the step holds a minimum from before it: it
	// belongs to neither segment and leaves the fit.
	for k := 0; k < e.binN; k++ {
		bn := &e.bins[(e.binHead+k)%numBins]
		if bn.start+binDuration <= stepAt {
			continue
		}
		straddles := bn.start < stepAt
		if du != 0 {
			bn.segU = e.segU
			bn.skipU = bn.skipU || straddles
		}
		if dw != 0 {
			bn.segW = e.segW
			bn.skipW = bn.skipW || straddles
		}
	}
	if du != 0 {
		e.cur.segU = e.segU
	}
	if dw != 0 {
		e.cur.segW = e.segW
	}
}

// changeSkipping is change over the newest span samples, leaving out the
// first skip of them.
func (e *Estimator) changeSkipping(span, skip int) (a, b int64) {
	ru, rw := e.minDetrended(e.n-span+skip, e.n)
	fu, fw := e.minDetrended(0, e.n-span)
	return ru - fu, rw - fw
}

// change returns how far each floor moved: the minimum of the newest span
// samples against the minimum of the rest.
func (e *Estimator) change(span int) (a, b int64) {
	ru, rw := e.minDetrended(e.n-span, e.n)
	fu, fw := e.minDetrended(0, e.n-span)
	return ru - fu, rw - fw
}

// restart keeps only the newest keep samples after a clock step by (the
// client's clock moved by it) first seen at client time at. The path did
// not change, so A stays; neither does the drift, whose history is kept
// unless a rate change is suspected (jumphistory.go).
func (e *Estimator) restart(keep int, at, by int64) {
	e.markRestart()
	e.returnArmed = false
	e.drain = drain{}
	e.limitSince = -1
	e.head = e.at(e.n - keep)
	e.n = keep
	e.olderN, e.olderDirty = 0, true
	e.bound = -1
	if e.keepsHistoryAcross() {
		e.keepHistory(at, by)
		e.stopArmed, e.endJump = false, false
	} else {
		e.binN, e.binsDone, e.cur = 0, 0, bin{}
		e.forgetJump()
		// A jump that came with a slew (its start read as a step) leaves
		// the rate before it as the one the slew's end returns to; one
		// during a shift's acquisition, the rate that shift left.
		if !e.slewing {
			e.stopTo, e.stopToSE, e.stopArmed = e.r, e.rSE, e.fitted
		}
		e.armEndJump()
	}
	e.dropDoubt()
	e.memOK = false
	// A bend under way when the clock stepped may have been its rate
	// changing, and the step what the bend had added up to by then
	// (a slew's end on a jittery uplink, read as a jump 17 s after it:
	// 1.5 ms of error under 0.4 ms until the drift was fitted again). The bound
	// takes the bend's rate until it is; the drift itself, and what is
	// tested against its error, stay (taken into the drift's error, it
	// moved 273 of 12115 runs' p99, random:1916 seed 2 11 → 27 ms).
	e.jumpRate, e.jumpAt = 0, e.t[e.head]
	e.jumpPaths = false
	if e.bending {
		e.jumpRate = e.bendRate
	}
}

// sentAt returns the client send time of the window's k-th sample.
func (e *Estimator) sentAt(k int) int64 {
	i := e.at(k)
	return e.t[i] - (e.u[i]+e.w[i])/2
}

// rateShift keeps only the newest span samples after the clock's rate
// changed (a slew started or ended): the window and the drift history keep
// only what followed the shift, the drift is refitted on every new bin
// until the history fills again, and the path changes the moving floors
// were taken for are undone. The new rate is to if toOK, else what the
// span's lower envelopes show (shiftRateErr), or the rate the previous
// shift left where that is what they show. a and b are the uplink's and
// the downlink's equal and opposite moves that showed the shift (zero
// when a bend showed it).
func (e *Estimator) rateShift(span int, to float64, toOK bool, a, b int64) {
	e.markRestart()
	e.belowU, e.belowW, e.aboveU, e.aboveW, e.mildU, e.mildW = 0, 0, 0, 0, 0, 0
	e.head = e.at(e.n - span)
	e.n = span
	e.olderN, e.olderDirty = 0, true
	since := e.t[e.head]
	old := 0
	for old < e.binN && e.bins[(e.binHead+old)%numBins].start < since {
		old++
	}
	e.dropOldBins(old)
	e.forgetJump()
	e.memOK = false
	// A slew ends by returning to the rate it left (returning, kink.go).
	prev, prevSE, prevOK := e.before, e.beforeSE, e.beforeOK
	e.leftRate()
	e.stopTo, e.stopToSE, e.stopArmed = e.before, e.beforeSE, e.beforeOK
	e.endJump, e.jumpPaths = false, false
	// Seen in one direction alone, the shift can say nothing of a step the
	// other took meanwhile: the path changes undone below must be ones the
	// rate's change can have made since (random:5340 at 2 Hz: a 38.6 ms
	// uplink fall 19 s before a slew's end was seen, undone, cost 19 ms).
	undoFrom := since - recentWindow
	maxMove := int64(math.MaxInt64)
	if toOK {
		maxMove = int64(2 * math.Abs(to-e.r) * float64(e.t[e.at(e.n-1)]-undoFrom))
	}
	// What showed the shift measures the new rate: take it now rather than
	// when the drift tracker has bins enough to fit it. Measured on a few
	// seconds of minima it can be 100 ppm off; where it is, within its
	// error, the rate the previous shift left (a slew's end), that rate,
	// fitted over minutes, is the better measure (clock-slew seed 5: the
	// end's rate 125 ppm off, p99 0.36 -> 0.20 ms). The match must tell
	// that rate from the current one: its margin under half their
	// distance.
	// Only a rate measured here is measured again as samples follow
	// (refineShift): not one fitted over the bins of a bend, nor the one
	// the previous shift left.
	e.shiftSE, e.shiftN = 0, 0
	if !toOK {
		e.shiftN = span
		if dr, se, ok := e.shiftRateErr(span); ok {
			to, toOK = e.r+dr, true
			e.shiftSE = se
			near := nearRate(se, prevSE)
			if prevOK && math.Abs(to-prev) <= near && near <= math.Abs(prev-e.r)/2 {
				to, e.shiftN = prev, 0
			}
		}
	}
	if toOK {
		e.adoptRate(to-e.r, e.t[e.at(e.n-1)])
	}
	// (The path tracker can have taken the start of the slew for a path
	// change up to a recent window before the rise showed.)
	if abs64(e.pathMovedSince(undoFrom)) <= maxMove {
		e.undoPathChangesSince(undoFrom, e.stepPathErr(undoFrom, a, b))
	}
	e.forgetPaths()
	// The floors now come from what followed the shift alone: take them as
	// the reference afresh, and for longer than after a start, as a slew
	// goes on for as long as it corrects and the drift tracker follows it
	// bin by bin.
	e.acquire(4 * acquireSamples)
	e.firstAcq = false
	e.slewing = true
	// The rate just changed: until the drift is fitted again on what
	// followed, it is known no better than the prior says, and the bound
	// must say so.
	e.fitted = false
	e.stats.ClockShifts++
}

// maxShift is the largest change of a clock's rate taken for a slew:
// NTP daemons steer a clock through the kernel within ±500 ppm, and twice
// that leaves room for the error of a rate measured over a few seconds.
// Floors that bend or ramp faster than that in opposite directions are two
// queues (one building while the other drains, a route flap during a
// drain); a faster change of the clock itself steps the floors, which the
// jump test sees.
const maxShift = 1000e-6

// discontinuity is how many times further than the rest of its run below
// a floor the newest sample must fall to start a run of its own.
const discontinuity = 4

// sinceDiscontinuity returns how many of the newest run samples below the
// floor f (of vals) belong to the run: all of them, unless the newest fell
// discontinuity times further than every earlier one (and by more than a
// millisecond), when it starts the run anew.
func (e *Estimator) sinceDiscontinuity(vals []int64, f int64, run int) int {
	if run < 2 {
		return run
	}
	fall := f - vals[e.at(e.n-1)]
	var before int64
	for k := 2; k <= run; k++ {
		before = max(before, f-vals[e.at(e.n-k)])
	}
	if fall < int64(time.Millisecond) || fall <= discontinuity*before {
		return run
	}
	return 1
}

// stepPathErr is how far A may be off once a shift, shown by the moves a
// (uplink) and b (downlink), undoes the path changes since client time t.
// A fall the path tracker took whole, in one change, was a step, not a
// slew's ramp, which it takes in parts: the clock's, or a handover's that
// moved both floors at once with no outage to tell (random:869: the
// uplink's 2.9ms fall taken whole, the downlink's rise 2.5s later read
// with it as a slew's start). Were it the path's, A moved by both sides'
// moves, not only by the part taken. Otherwise zero.
func (e *Estimator) stepPathErr(t, a, b int64) int64 {
	fall := abs64(min(a, b))
	if fall == 0 || e.pathLogN-e.pathsSince(t) != 1 || abs64(e.pathMovedSince(t)) < fall {
		return 0
	}
	return abs64(a - b)
}
