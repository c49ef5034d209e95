package clocksync

import "math"

// A slew's end can first show as a clock jump: on a quiet path the floors
// leave their tolerances within seconds of it, before the kink and return
// tests have the bins to see a rate change (random:315 seed 1: a −482 ppm
// server slew's end read as a jump 7 s after it). The jump drops the
// drift history, the drift being a slew's (jumphistory.go), but keeps the
// slew's rate, and the floors go on moving apart at it: the path tracker
// takes each part for a one-way path change, A walked 6.7 ms in 16 s, and
// each change held the drift fit for a new segment's bins (shiftBins), so
// nothing refitted the rate until the changes paused. A kept the walk for
// the rest of the run: 3.35 ms of error under a 13 ms bound.
//
// So after such a jump the bins since it are fitted even while a one-way
// step holds the fit, and a fit that shows the rate the clock ran at
// before the slew, apart from the slew's beyond both errors, is taken: the
// jump was the slew's end, and the path changes since it that the new
// rate explains are taken back (jumppaths.go), as after a jump whose bins
// showed a new rate (dropBeforeJump). The first refit taken after the
// jump decides; one that keeps the slew's rate says the slew went on.

// armEndJump marks a jump that dropped the drift history while the drift
// was apart from the rate before the newest clock shift, by more than
// both are uncertain (as the return test wants, slewend.go).
func (e *Estimator) armEndJump() {
	d := math.Abs(e.r - e.before)
	e.endJump = e.fitted && e.beforeOK && d > kinkSlack && d > returnSigmas*math.Hypot(e.rSE, e.beforeSE)
}

// endJumpMoved reports whether a refit's rate r (standard error se) at
// client time now, which moved the drift beyond its noise if moved, shows
// the jump armEndJump marked to be the slew's end, and if so takes back
// the path changes since it that the rate explains.
func (e *Estimator) endJumpMoved(r, se float64, now int64, moved bool) bool {
	if !e.endJump {
		return false
	}
	ends := moved && e.endsSlew(r, se)
	e.endJump = false
	if !ends {
		return false
	}
	return e.undoClockSinceJump(int64(2*(r-e.r)*float64(now-e.jumpAt)), false)
}

// endJumpFit reports whether the drift is to be fitted for endJump's sake
// alone: on the bins since the jump only.
func (e *Estimator) endJumpFit() bool {
	return e.endJump && e.binsDone == e.binN
}

// endsSlew reports whether a fit of the bins since the jump endJump marks,
// at rate r (standard error se), is the rate the clock ran at before the
// slew and not the slew's: precise enough to tell the two apart.
func (e *Estimator) endsSlew(r, se float64) bool {
	return e.endJumpFit() && math.Abs(r-e.before) <= max(kinkSlack/2, returnSigmas*math.Hypot(se, e.beforeSE)) &&
		math.Abs(r-e.r) > max(kinkSlack, returnSigmas*math.Hypot(se, e.rSE))
}
