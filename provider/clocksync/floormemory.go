package clocksync

import "math"

// The floors the window has lost: a floor the window no longer reaches
// was still seen lower by the drift history. On the same path (A
// unchanged since), the true floor is at least that low, so the window's
// floor sits at least that far above it: its lowest samples left the
// window, on a soft floor or one whose low values are rare, which the
// spacing of the window's lowest samples (the statistical bound's measure)
// cannot see. Before A last changed the floors may have been another
// path's, except for a rare low value: one sample far below the rest of
// its bin is no path state, and a path tracker that took its coming and
// going for a path that changed and came back (a known state, taken back
// exactly) must not claim the higher floor is the true one.

// floorMemory returns how far the window's floors fu, fw sit above the
// lowest the drift history saw on the same path segment (see above), less
// what the drift's error can have moved those since; 0 when they sit no
// higher.
func (e *Estimator) floorMemory(fu, fw, now int64) (dU, dW int64) {
	if e.asym != e.memAsym || !e.memOK {
		if e.asym != e.memAsym {
			e.memAsym, e.memSince = e.asym, now
		}
		e.memU, e.memW = e.historyFloors(now)
		e.memOK = true
	}
	if e.memU != math.MaxInt64 {
		dU = max(0, fu-e.memU)
	}
	if e.memW != math.MaxInt64 {
		dW = max(0, fw-e.memW)
	}
	return dU, dW
}

// historyFloors returns each direction's lowest detrended bin minimum on
// the current path segment, since memSince or, before, only of rare low
// values (a minimum more than isolatedK spacings below its bin's second
// lowest), raised by three standard errors of the drift over its age
// (MaxInt64 without one).
func (e *Estimator) historyFloors(now int64) (lu, lw int64) {
	lu, lw = math.MaxInt64, math.MaxInt64
	se := 3 * e.boundSE()
	gapU, gapW := tolMin+isolatedK*e.spU, tolMin+isolatedK*e.spW
	for k := 0; k < e.binN; k++ {
		bn := e.bins[(e.binHead+k)%numBins]
		if now-bn.start > memoryAge*int64(e.cfg.Window) {
			continue
		}
		same := bn.start >= e.memSince
		if bn.segU == e.segU && !bn.skipU && (same || bn.min2U != math.MaxInt64 && bn.min2U-bn.minU > gapU) {
			lu = min(lu, bn.minU-e.trend(bn.tu)+int64(se*float64(now-bn.tu)))
		}
		if bn.segW == e.segW && !bn.skipW && (same || bn.min2W != math.MaxInt64 && bn.min2W-bn.minW > gapW) {
			lw = min(lw, bn.minW+e.trend(bn.tw)+int64(se*float64(now-bn.tw)))
		}
	}
	return lu, lw
}

// isolatedK is how many of the window's lowest samples' spacings a bin's
// lowest value must sit below its second lowest to be a rare low value.
const isolatedK = 8

// memoryAge is how many windows back the history is searched.
const memoryAge = 4
