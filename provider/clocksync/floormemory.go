package clocksync

import "math"

// The floors the window has lost. A window's floor rises whenever its
// lowest samples leave it, on a soft floor or one whose low values are
// rare, and the spacing of the window's lowest samples (the statistical
// bound's measure) cannot see it; the drift history (the bins' minima)
// still saw the lower values. On the same path the true floor is at least
// that low. The same path means: the same one-way segment, A unchanged
// since (no path change inferred), and no clock move in between (a jump or
// a rate change restarts the history; a move the path tracker follows as
// it happens, by lifting a floor, starts the memory afresh).
//
// The estimate takes the lower floor if it was seen within the last three
// windows: older bins lean on the drift over longer than its wander
// allows (at four, random:60's 0.53 ppm/min of wander cost ×2.2). The
// bound keeps it for four, and also counts rare low values
// from before A last changed: one sample far below the rest of its bin is
// no path state, and a tracker that took such a value's coming and going
// for a path that changed and came back (a known state, whose A it takes
// back exactly) must not claim the higher floor is the true one.

// lostFloors is how far the window's floors sit above the drift history's
// lowest: near, as the estimate takes it; far, as the bound does.
type lostFloors struct {
	nearU, nearW int64
	farU, farW   int64
}

// floorMemory returns how far the window's floors fu, fw sit above the
// lowest the drift history saw (see above), less what the drift's error
// can have moved those since; 0 when they sit no higher.
func (e *Estimator) floorMemory(fu, fw, now int64) lostFloors {
	// A clock move the path tracker follows by lifting a floor (path.go)
	// moves the floors with A unchanged: what came before is no lower
	// floor of this path.
	moving := e.liftU != 0 || e.liftW != 0
	if e.asym != e.memAsym || !e.memOK || moving {
		if e.asym != e.memAsym || moving {
			e.memAsym, e.memSince = e.asym, now
		}
		e.historyFloors(now)
		e.memOK = true
	}
	above := func(f, low int64) int64 {
		if low == math.MaxInt64 {
			return 0
		}
		return max(0, f-low)
	}
	return lostFloors{
		nearU: above(fu, e.memNear[0]), nearW: above(fw, e.memNear[1]),
		farU: above(fu, e.memFar[0]), farW: above(fw, e.memFar[1]),
	}
}

// historyFloors sets memNear and memFar to each direction's lowest
// detrended bin minimum on the current path segment, raised by three
// standard errors of the drift over its age (MaxInt64 without one):
// memNear of the last nearWindows windows since memSince; memFar of the
// last farWindows windows since memSince or, before, of rare low values
// (a minimum more than isolatedK spacings below its bin's second lowest).
func (e *Estimator) historyFloors(now int64) {
	e.memNear = [2]int64{math.MaxInt64, math.MaxInt64}
	e.memFar = e.memNear
	se := 3 * e.boundSE()
	gapU, gapW := tolMin+isolatedK*e.spU, tolMin+isolatedK*e.spW
	win := int64(e.cfg.Window)
	for k := 0; k < e.binN; k++ {
		bn := e.bins[(e.binHead+k)%numBins]
		age := abs64(now - bn.start)
		if age > farWindows*win {
			continue
		}
		same, near := bn.start >= e.memSince, age <= nearWindows*win
		if bn.segU == e.segU && !bn.skipU {
			v := bn.minU - e.trend(bn.tu) + int64(se*float64(abs64(now-bn.tu)))
			if same && near {
				e.memNear[0] = min(e.memNear[0], v)
			}
			if same || bn.min2U != math.MaxInt64 && bn.min2U-bn.minU > gapU {
				e.memFar[0] = min(e.memFar[0], v)
			}
		}
		if bn.segW == e.segW && !bn.skipW {
			v := bn.minW + e.trend(bn.tw) + int64(se*float64(abs64(now-bn.tw)))
			if same && near {
				e.memNear[1] = min(e.memNear[1], v)
			}
			if same || bn.min2W != math.MaxInt64 && bn.min2W-bn.minW > gapW {
				e.memFar[1] = min(e.memFar[1], v)
			}
		}
	}
}

const (
	// isolatedK is how many of the window's lowest samples' spacings a
	// bin's lowest value must sit below its second lowest to be a rare
	// low value.
	isolatedK = 8
	// nearWindows and farWindows are how many windows back the estimate
	// and the bound search the drift history.
	nearWindows = 3
	farWindows  = 4
)
