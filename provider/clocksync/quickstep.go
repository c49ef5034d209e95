package clocksync

import (
	"math"
	"time"
)

// A clock step smaller than one side's jitter shows as the other side's
// floor falling; the doubt (doubt.go) then waits until the other side's
// minimum since, a loose measure of its rise on a soft floor (its lowest
// values sparse), is known to a quarter of the fall. On such floors that
// takes a minute or more, while the offset stays off by the step
// (random:126: a 5.6ms client step under a 9.2ms triangular uplink, the
// downlink a 5G radio's: 60s, and half the step for the rest of the run).
//
// The samples since the fall say more than their minimum does. Were it the
// path, the other side's delays would come as before, and some would land
// within half the fall of its floor: as many as the window before the fall
// makes likely. If quickExpected of them were due and none came, the path
// reading is out (e^−7, about 0.1%). That leaves the clock, or both floors
// moving by themselves by about as much, which a handover can do; so the
// quick decision also wants what a handover does not give: no
// interruption, the round trip back near where it was, a path that has
// held still for quickQuiet, and an estimator not itself settling or
// following a rate. Where any of these fails, the doubt decides as before.

const (
	// quickExpected is how many of the other side's samples the path
	// reading must have put within half the fall before their absence
	// proves the clock.
	quickExpected = 7
	// quickQuiet is how long the path must have held (no path change)
	// before a fall.
	quickQuiet = int64(10 * time.Minute)
	// quickBins is how much drift history (bins since a restart) the
	// quick decision wants: after a restart the floors and the rate are
	// still settling.
	quickBins = 30
	// quickGapBefore is how far before the fall the samples must have come
	// without an interruption, and quickGap the longest spacing, in
	// typical spacings, that is no interruption.
	quickGapBefore = int64(2 * time.Second)
	quickGap       = 2.5
)

// nearFloorBefore counts, for a doubt d just begun at client time now, the
// other side's samples older than the fall's recent window, and those of
// them that lay within half the fall of that side's floor.
func (e *Estimator) nearFloorBefore(d *doubt, floor, now int64) {
	other := e.ud
	if d.fellU {
		other = e.wd
	}
	for j := 0; j < e.n; j++ {
		i := e.at(j)
		if now-e.t[i] <= recentWindow {
			break
		}
		d.seen++
		if other[i]-floor < d.size/2 {
			d.near++
		}
	}
}

// quickStep reports whether the doubted fall, k samples on, with the other
// side risen by rise (at least the fall less the floors' precision prec),
// is a clock step by the quick test.
func (e *Estimator) quickStep(k int, rise, prec int64) bool {
	d := &e.doubt
	switch {
	case k < recentMin || d.gap || d.seen == 0 || prec > d.size/2:
		return false
	case float64(d.near)/float64(d.seen)*float64(k) < quickExpected:
		return false
	// The rise about the fall (the falling side's new floor, sparse on a
	// wide jitter, shows less than the whole step at first) and the round
	// trip back near where it was.
	case rise > 2*d.size+prec || d.mr-d.rtt > d.size/2+prec:
		return false
	// One fall, not a drain in parts, on floors that do not wander by as
	// much (a queue's), after no change of the path for quickQuiet.
	case d.parts != 1 || d.from != d.at || 8*max(e.slowU, e.slowW) > d.size || e.pathsSince(d.from-quickQuiet) != e.pathsSince(d.from):
		return false
	// Not while the estimator itself is settling or a rate is moving: a
	// slew's end also lowers one floor sample by sample.
	case d.at-e.freshAt < int64(e.cfg.Window) || e.binN < quickBins || e.bending || e.slewing || e.driftHold > 0:
		return false
	}
	if !e.unbrokenSince(d.at - quickGapBefore) {
		return false
	}
	// A step is done at once; a slew goes on lowering the floor it began
	// lowering (random:4707, 9084: slews under way, their first fall taken
	// for a step). The lower envelopes since the fall must show no rate
	// that adds a quarter of the fall over them.
	dr, ok := e.shiftRate(k)
	span := e.t[e.at(e.n-1)] - e.t[e.at(e.n-k)]
	return ok && math.Abs(dr)*float64(span) <= float64(d.size)/4
}

// unbrokenSince reports whether the window's samples since client time
// from came without a gap of more than quickGap typical spacings.
func (e *Estimator) unbrokenSince(from int64) bool {
	if e.n < 2 {
		return false
	}
	limit := int64(math.Ceil(quickGap * float64(e.span()) / float64(e.n-1)))
	for j := e.n - 1; j > 0; j-- {
		a, b := e.t[e.at(j-1)], e.t[e.at(j)]
		if b < from {
			break
		}
		if b-a > limit {
			return false
		}
	}
	return true
}
