package clocksync

import (
	"math"
	"slices"
)

// A slew ends by returning to the rate it left, and a slew that starts
// again may take up the rate it had (the kernel's adjtime slews at a fixed
// 500 ppm). Either way the new rate is known before it shows: the drift
// the newest clock shift replaced (before).
// detectKink looks for any new rate and must fit the newest bins alone,
// so a change shows there only once most of those bins follow it (14–17 s
// at 100–400 ppm on 5G jitter: random:65, 92, 183, 188, up to 2 ms of
// error). detectReturn asks a narrower question, with far fewer samples:
// did both directions leave the level they held, at one moment, along the
// known rate? A hinge of known slope from a level measured beforehand
// needs a few bins, not a window of them; its moment, shared by both
// directions, is what a queue on one side does not fake.

// returnBins is how many of the newest bins the change may show in: 12 s.
const returnBins = 6

// returnHistory is how many bins before them give each direction's level
// and scatter: 16 s.
const returnHistory = 8

// returnSigmas is how far, in standard errors, the hinge must fit the
// newest bins better than the level alone (the square root of the fall in
// chi-square).
const returnSigmas = 6

// returnContra is how much worse (in chi-square) one side alone may fit
// the hinge than the level: 3 standard errors.
const returnContra = 9

// returnNoiseMin is the least scatter assumed of a direction's bin minima:
// on a path without jitter their scatter measures as nothing, and a hinge
// a few nanoseconds off must not count as a clock.
const returnNoiseMin = 20e-6 // s

// returnStep is the spacing of the moments tried for the hinge.
const returnStep = 0.2 // s

// returnRun is how many bins in a row must show the return, unless one
// shows it by returnSure standard errors: a fast slew's end (random:501,
// 533: 2.2 → 0.01 and 26 → 4.8ms) costs a third of a millisecond a
// second while the second bin is awaited.
const (
	returnRun  = 2
	returnSure = 12
)

// leftRate records the drift as the rate the clock left, to which a
// slew's end returns (a clock shift, or a new rate after a jump).
func (e *Estimator) leftRate() {
	e.before, e.beforeSE, e.beforeOK = e.r, e.rSE, e.fitted
	e.returnArmed = true
}

// detectReturn looks, once per bin, for the newest bins turning to the
// rate the newest clock shift left (before) and takes it for a rate change
// when they have on returnRun bins in a row (rateShift, steps.go). A step
// of the clock since that shift restarts the window and leaves before
// stale: a server migrated twice, stepped and slewed each time, slews the
// second time from the rate the first slew ended at, not the one it ran at
// (server-migration: taken for a return to 430 ppm from −268, 2.7ms).
func (e *Estimator) detectReturn() Event {
	// Until this test and the kink test can look, a short slew's end is
	// looked for in the bins since the restart (slewstop.go); where it
	// takes none, this test goes on as it would have.
	if e.stopArmed && (e.slewing || e.binN < kinkHistory) && e.jumpBins < 0 {
		if ev := e.detectStop(); ev != EventNone {
			return ev
		}
	} else {
		e.stops = 0
	}
	change := e.before - e.r
	if !e.beforeOK || !e.returnArmed || e.slewing || e.acquiring > 0 || e.driftHold > 0 || !e.fitted ||
		math.Abs(change) <= kinkSlack/2 || math.Abs(change) <= returnSigmas*math.Hypot(e.rSE, e.beforeSE) ||
		math.Abs(change) > maxShift || e.binN < returnBins+returnHistory {
		e.returns = 0
		return EventNone
	}
	tc, sure, ok := e.returnedAt(change)
	if !ok {
		e.returns = 0
		return EventNone
	}
	e.returns++
	if e.returns < returnRun && !sure {
		return EventNone
	}
	since := e.t0 + int64(tc*1e9)
	span := 0
	for span < e.n && e.t[e.at(e.n-1-span)] >= since {
		span++
	}
	// As for a bend: a queue that builds on one side while the other's
	// drains can tilt both alike; the round trip and the offset the span
	// gives at the new rate say which.
	if span < 2 || span > e.n/2 || !e.roundTripHeld(span) || !e.bendExplains(e.before, span, since) {
		return EventNone
	}
	e.returns = 0
	e.kinks, e.kinksLong, e.kinksOne, e.bendErr, e.bending = 0, 0, 0, 0, false
	e.rateShift(span, e.before, true, 0, 0)
	return EventClockShift
}

// hingeSide is one direction's newest bin minima, detrended by the drift
// and measured from the level the bins before them held, in units of
// their scatter there.
type hingeSide struct {
	x     [returnBins]float64 // time, s since t0
	z     [returnBins]float64 // excess over the level, in scatters
	slope float64             // the change, in scatters per second
}

// returnedAt looks for one moment tc (s since t0) in the newest returnBins
// bins from which both directions' minima follow the drift changed by
// change, and not the drift as it is: the hinge at the best tc must fit
// them as well as their scatter allows, and better than the level alone by
// returnSigmas; sure if by returnSure.
func (e *Estimator) returnedAt(change float64) (tc float64, sure, ok bool) {
	var sides [2]hingeSide
	for dir := range sides {
		if !e.hingeSide(dir, change, &sides[dir]) {
			return 0, false, false
		}
	}
	chi := func(d int, tc float64) float64 {
		s, c := &sides[d], 0.0
		for b := range returnBins {
			r := s.z[b] - s.slope*max(0, s.x[b]-tc)
			c += r * r
		}
		return c
	}
	first := sides[0].x[0] - 2 // the newest bins' first started up to a bin earlier
	last := max(sides[0].x[returnBins-1], sides[1].x[returnBins-1])
	best, bestChi := 0.0, math.Inf(1)
	for tc := first; tc < last; tc += returnStep {
		if c := chi(0, tc) + chi(1, tc); c < bestChi {
			best, bestChi = tc, c
		}
	}
	noneU, noneW := chi(0, math.Inf(1)), chi(1, math.Inf(1))
	none := noneU + noneW
	bestU, bestW := chi(0, best), chi(1, best)
	// Far better than none; neither side, alone, better without it (a
	// queue or a path step on one side, the other flat); and as good as
	// the scatter allows (its 99.9th percentile at 2·returnBins points is
	// about 33), or near enough where the change is many scatters deep
	// (the scatter of bin minima under a soft floor, read off eight bins,
	// is a rough measure).
	const fitMax = 2*returnBins + 3*4.9 + 6
	// A hinge at the first moment tried may have begun before it, or be
	// no hinge at all: a floor that stepped before the newest bins fits a
	// ramp from their start about as well as it fits anything (starlink
	// seed 5: a downlink reallocation taken for a return, 15.7ms).
	if best < first+returnStep/2 {
		return 0, false, false
	}
	if none-bestChi < returnSigmas*returnSigmas ||
		bestU > noneU+returnContra || bestW > noneW+returnContra ||
		bestChi > fitMax+none/10 {
		return 0, false, false
	}
	// A server clock that gains faster on the client's raises the uplink's
	// delays as measured and lowers the downlink's (and the other way
	// round); a queue raises, and only a queue that drains lowers. The
	// side the change lowers must show it on its own where its scatter
	// lets it (random:104 seed 3: an uplink under 8ms of jitter rose as the
	// end of a slew would have raised it, the downlink flat). Where it
	// cannot (random:553: a downlink under 25ms of jitter), the rising
	// side alone must fit the hinge as well as its scatter allows, and
	// twice as clearly.
	fall, noneF, bestF := 1, noneW, bestW
	if change < 0 {
		fall, noneF, bestF = 0, noneU, bestU
	}
	if noneF-bestF < returnContra {
		s := &sides[fall]
		could := 0.0
		for b := range returnBins {
			d := s.slope * max(0, s.x[b]-best)
			could += d * d
		}
		if could >= returnContra || bestChi > fitMax || none-bestChi < 2*returnSigmas*returnSigmas {
			return 0, false, false
		}
	}
	return best, none-bestChi >= returnSure*returnSure, true
}

// hingeSide fills h with direction dir's newest returnBins bin minima,
// detrended by the drift, less the median of the returnHistory bins before
// them, over the scatter of those (their median deviation, widened for the
// median's own error). It is not ok where a bin lies on another path
// segment than the others or straddles a step.
func (e *Estimator) hingeSide(dir int, change float64, h *hingeSide) bool {
	var hist [returnHistory]float64
	first := e.binN - returnBins
	seg := 0
	for k := first - returnHistory; k < e.binN; k++ {
		y, t, sg, skip := e.binFloor(dir, k)
		if skip || (k > first-returnHistory && sg != seg) {
			return false
		}
		seg = sg
		x := float64(t-e.t0) / 1e9
		z := y - e.r*x
		if k < first {
			hist[k-(first-returnHistory)] = z
		} else {
			h.x[k-first], h.z[k-first] = x, z
		}
	}
	slices.Sort(hist[:])
	level := (hist[returnHistory/2-1] + hist[returnHistory/2]) / 2
	var dev [returnHistory]float64
	for i, v := range hist {
		dev[i] = math.Abs(v - level)
	}
	slices.Sort(dev[:])
	sigma := max(1.4826*(dev[returnHistory/2-1]+dev[returnHistory/2])/2, returnNoiseMin)
	sigma *= math.Sqrt(1 + 1.25*1.25/returnHistory)
	for b := range returnBins {
		h.z[b] = (h.z[b] - level) / sigma
	}
	h.slope = change / sigma
	return true
}
