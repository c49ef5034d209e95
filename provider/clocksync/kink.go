package clocksync

import "math"

// A slew that starts or ends on a jittery path hides in the floors for a
// long time; it shows first as the newest drift bins bending away from the
// drift fitted over the whole history, both directions alike, which a
// queue does not do. detectKink looks for that bend once per bin and takes
// it for a rate change (rateShift, steps.go).

// kinkBins is how many of the newest drift bins are fitted on their own to
// see the rate change: 16 s.
const kinkBins = 8

// kinkLongBins is how many are fitted when kinkBins do not show a change:
// 28 s, so that what followed stays under half the default window.
const kinkLongBins = 14

// kinkHistory is how many drift bins there must be before the newest
// kinkBins are weighed against them: 32 s. (At 48 s, a drift misread in
// the first minute after a start stayed for the bins to come: random:166
// seed 2, the fit walked from 466 to 679 ppm under correlated queues and
// a bloat, 40ms of error by the fifth minute, where compared sooner it
// settled near 400: p99 45.8 -> 18.1ms.)
const kinkHistory = 2 * kinkBins

// kinkSlack is how far the newest bins' slope may differ from the
// history's beyond their errors before the rate counts as changed.
const kinkSlack = 50e-6

// kinkSigmas is how many standard errors apart the slopes must be, and
// kinkRun on how many bins in a row: short fits to a few jittery minima
// stray further than their errors say now and then.
const (
	kinkSigmas = 5
	kinkRun    = 3
)

// detectKink compares the slope of the newest bins with the drift fitted
// over the whole history. A slew that starts or ends without a step of
// the floors the rise detector would see (on a jittery path a floor that
// rises at a few hundred ppm hides in the jitter for a long time) bends
// the floors there; both directions bend alike, which a queue does not.
func (e *Estimator) detectKink() Event {
	if e.driftHold > 0 && e.bending && !e.slewing && e.acquiring == 0 {
		// The fit waits for a one-way step's new segment (shiftBins): a
		// bend under way goes on meanwhile, and so does what it adds.
		e.bendErr = e.bendAdded()
		return EventNone
	}
	if e.slewing || e.acquiring > 0 || e.driftHold > 0 || !e.fitted || e.binN < kinkHistory {
		e.kinks, e.kinksLong, e.kinksOne, e.bendErr, e.bending = 0, 0, 0, 0, false
		return EventNone
	}
	// A sample below a floor may be a jump's first (the jump test waits
	// for JumpConfirm of them): a bin it ends is no slope to fit.
	if e.belowU > 0 || e.belowW > 0 {
		return EventNone
	}
	rK, seK, ok := e.regressBins(e.binN - kinkBins)
	if !ok {
		e.kinks, e.kinksLong, e.kinksOne, e.bendErr, e.bending = 0, 0, 0, 0, false
		return EventNone
	}
	d := e.dirSlopes
	// Long before a bend is sure, the offset may be off by what it adds up
	// to over the newest bins: the bound says so.
	since := e.bins[(e.binHead+e.binN-kinkBins)%numBins].start
	// A bend that goes on for longer began before the newest bins.
	e.bendErr = 0
	if diff := math.Abs(rK - e.r); diff > 2*math.Hypot(seK, e.rSE) {
		if !e.bending || e.bendSince > since {
			e.bendSince, e.bending = since, true
		}
		e.bendRate = diff
		e.bendErr = e.bendAdded()
	} else {
		e.bending = false
	}
	// Both directions bend, the same way and by as much: a clock. A queue
	// bends one, or each its own way.
	shortOK := e.kinked(rK, seK, d, kinkSigmas/2, kinkSlack/2)
	// A slew's end under a direction too scattered to show it (Wi-Fi
	// power save on the downlink: random:171) is seen in the other alone,
	// when the rate it shows is the one the slew left. Its run is its own.
	one := !shortOK && e.returning(rK, seK, d)
	rS, dS := rK, d
	// A rate change the newest bins are too few to tell from their
	// jitter (random:104: a 152 ppm slew's end under 8ms of uplink
	// jitter, the 16s slopes ±100 ppm) shows over the newest 28s, each
	// direction alone clearly bent. Bins bent over either length count
	// to that run, and it is taken only while the 16s fit bends both
	// directions alike too, short of its own error alone: a queue that
	// ramps one floor for longer leaves the other's 16s slope flat or
	// too scattered to weigh (random:1062, 8315).
	var rL float64
	longOK := false
	if (!shortOK || e.kinks+1 < kinkRun) && e.binN >= 3*kinkLongBins {
		var seL float64
		var ok bool
		rL, seL, ok = e.regressBins(e.binN - kinkLongBins)
		longOK = ok && e.kinked(rL, seL, e.dirSlopes, kinkSigmas, kinkSlack)
	}
	// A one-sided run starts at a one-sided bin and goes on through any
	// bin bent as a clock bends; the both-sided runs do not count the
	// one-sided bins (random:8552: with them, a bloat's drain made one).
	switch {
	case one || (e.kinksOne > 0 && (shortOK || longOK)):
		e.kinksOne++
	default:
		e.kinksOne = 0
	}
	if !shortOK && !longOK {
		e.kinks, e.kinksLong = 0, 0
	} else {
		e.kinks, e.kinksLong = e.kinks+1, e.kinksLong+1
		if !shortOK {
			e.kinks = 0
		}
	}
	run, long, oneSided := &e.kinks, false, false
	switch {
	case e.kinks >= kinkRun:
	case e.kinksLong >= kinkRun && longOK && e.bentAlike(rS, dS, kinkSigmas/2, kinkSlack/2):
		run, long = &e.kinksLong, true
		rK, since = rL, e.bins[(e.binHead+e.binN-kinkLongBins)%numBins].start
	case (one || shortOK) && e.kinksOne >= kinkRun:
		run, oneSided = &e.kinksOne, true
	default:
		return EventNone
	}
	span := 0
	for span < e.n && e.t[e.at(e.n-1-span)] >= since {
		span++
	}
	// Over the longer span, a bloat that bent one floor while the
	// other's jitter bent the same way by chance must not be taken: the
	// round trip says which (random:8963, 8552). Its run alone ends; the
	// bend the 16s fit measures stays in the bound.
	if (long || oneSided) && (span > e.n/2 || !e.roundTripHeld(span) || !e.nearShortest(rK, span)) {
		*run = 0
		return EventNone
	}
	if span < 2 || span > e.n/2 {
		e.kinks, e.kinksLong, e.kinksOne, e.bendErr, e.bending = 0, 0, 0, 0, false
		return EventNone
	}
	if !e.bendExplains(rK, span, since) {
		// Not yet: the bound keeps the bend's error, and the next bent
		// bin looks again.
		*run--
		return EventNone
	}
	e.kinks, e.kinksLong, e.kinksOne, e.bendErr, e.bending = 0, 0, 0, 0, false
	// One direction's envelope alone measures the rate it showed; the
	// other's, scattered, would throw shiftRate's (random:1498: a bloat
	// draining on that side took it 650 ppm off).
	e.rateShift(span, rK, oneSided, 0, 0)
	return EventClockShift
}

// kinked reports whether a fit of the newest bins, at rate rK with error
// seK and each direction's slopes d, has the rate changed: clearly beyond
// the errors, both directions the same way, each by more than each of its
// standard errors and slack, and by as much, and no faster than a clock is
// steered. (The 16s fit wants each direction 2σ + 25 ppm off: kinkSigmas/2
// is an integer constant's division.)
func (e *Estimator) kinked(rK, seK float64, d dirSlopes, each, slack float64) bool {
	return math.Abs(rK-e.r) > kinkSigmas*math.Hypot(seK, e.rSE)+kinkSlack && e.bentAlike(rK, d, each, slack)
}

// bentAlike is kinked but for the fit's own error: both directions bent
// from the drift the way rK is, each by more than each of its standard
// errors and slack, and by as much; rK no faster than a clock is steered.
func (e *Estimator) bentAlike(rK float64, d dirSlopes, each, slack float64) bool {
	bent := func(s, se float64) bool {
		return (s-e.r > 0) == (rK-e.r > 0) && math.Abs(s-e.r) > each*math.Hypot(se, e.rSE)+slack
	}
	return d.okU && d.okW && math.Abs(rK-e.r) <= maxShift &&
		bent(d.u, d.seU) && bent(d.w, d.seW) && math.Abs(d.u-d.w) <= 3*math.Hypot(d.seU, d.seW)+kinkSlack
}

// nearRate is how far a rate measured with standard error se may lie
// from a rate known with refSE and still be taken for it: three standard
// errors and half of kinkSlack.
func nearRate(se, refSE float64) float64 { return 3*math.Hypot(se, refSE) + kinkSlack/2 }

// returning reports whether the newest bins' rate rK, clearly changed,
// shows in one direction alone while the other's slope is too scattered to
// tell the two rates apart (and does not contradict rK), and rK is the
// rate the drift had before the newest clock shift, the two known well
// enough that the match says something (its margin under half the change
// and under kinkSlack): a slew ends by returning to it. A queue that ramps
// one floor has no reason to match it.
func (e *Estimator) returning(rK, seK float64, d dirSlopes) bool {
	change := math.Abs(rK - e.r)
	near := nearRate(seK, e.beforeSE)
	if !e.beforeOK || change <= kinkSigmas*math.Hypot(seK, e.rSE)+kinkSlack || change > maxShift ||
		math.Abs(rK-e.before) > near || near > min(change/2, kinkSlack) {
		return false
	}
	bent := func(s, se float64) bool {
		return (s-e.r > 0) == (rK-e.r > 0) && math.Abs(s-e.r) > kinkSigmas*math.Hypot(se, e.rSE)+kinkSlack
	}
	mute := func(ok bool, s, se float64) bool {
		return !ok || (2*se > math.Abs(rK-e.r) && math.Abs(s-rK) <= 2*se)
	}
	return (d.okU && bent(d.u, d.seU) && mute(d.okW, d.w, d.seW)) ||
		(d.okW && bent(d.w, d.seW) && mute(d.okU, d.u, d.seU))
}

// roundTripHeld reports whether the round trip's floor over the newest
// span samples is where it was over as many before them, within half its
// mean excess there: a clock's rate leaves the round trip as it was, and a
// queue that bends one floor lifts it (random:8963: a slew's end seen over
// kinkLongBins while a bloat built on the uplink; taken, it restarted the
// window on the bloat, 1.7 → 17 ms).
func (e *Estimator) roundTripHeld(span int) bool {
	return 2*span <= e.n && e.roundTripAsIn(e.n-2*span, span)
}

// roundTripAsIn reports whether the round trip's floor over the newest
// span samples is where it was over the samples [from, e.n−span), within
// half their mean excess over it (never under 2·tolMin).
func (e *Estimator) roundTripAsIn(from, span int) bool {
	older, excess := e.roundTripFloor(from, e.n-span)
	return e.shortestSince(span)-older <= max(excess/2, 2*tolMin)
}

// roundTripFloor returns the shortest round trip of the window's samples
// [from, to) (at least one) and their mean excess over it.
func (e *Estimator) roundTripFloor(from, to int) (floor, excess int64) {
	floor = math.MaxInt64
	var sum int64
	for k := from; k < to; k++ {
		i := e.at(k)
		rtt := e.ud[i] + e.wd[i]
		floor = min(floor, rtt)
		sum += rtt
	}
	return floor, sum/int64(to-from) - floor
}

// nearShortest reports whether the newest span samples' floors, at rate
// rK, add up to the shortest round trip the path has shown, within both
// states' tolerances.
func (e *Estimator) nearShortest(rK float64, span int) bool {
	short := e.shortestKnown()
	if short < 0 {
		return true
	}
	k := e.known[short]
	ku, kw := e.floorsAt(k)
	minU, minW := e.spanFloors(rK, span)
	tolU, tolW := e.floorTolerance()
	return minU+minW-ku-kw <= tolU+tolW+k.tolU+k.tolW
}

// spanFloors returns the newest span samples' floors, raw one-way deltas
// detrended at rate rK to the newest sample.
func (e *Estimator) spanFloors(rK float64, span int) (minU, minW int64) {
	end := e.t[e.at(e.n-1)]
	minU, minW = math.MaxInt64, math.MaxInt64
	for k := e.n - span; k < e.n; k++ {
		i := e.at(k)
		dt := float64(e.t[i] - end)
		minU = min(minU, e.u[i]-int64(rK*dt))
		minW = min(minW, e.w[i]+int64(rK*dt))
	}
	return minU, minW
}

// bendAdded is what the bend under way has added to the offset since it
// began, at its rate's distance from the drift.
func (e *Estimator) bendAdded() int64 {
	return int64(e.bendRate * float64(abs64(e.t[e.at(e.n-1)]-e.bendSince)))
}

// bendExplains reports whether the offset the newest span samples give at
// the new rate rK differs from the current estimate by no more than the
// bend can have added since it began: a rate change leaves the offset
// continuous. A queue that builds in one direction while the other's
// drains can bend both directions' minima alike, but the floors it leaves
// in the span put the offset far beyond what the bend adds up to (half the
// queue); restarting on them would throw the estimate that far.
func (e *Estimator) bendExplains(rK float64, span int, since int64) bool {
	end := e.t[e.at(e.n-1)]
	minU, minW := e.spanFloors(rK, span)
	moved := (minU-minW-e.asym)/2 - (e.modelOffset + int64(e.r*float64(end-int64(e.est.At))))
	bend := int64((rK - e.r) * float64(end-since))
	tolU, tolW := e.floorTolerance()
	return moved >= min(0, bend)-(tolU+tolW)/2 && moved <= max(0, bend)+(tolU+tolW)/2
}
