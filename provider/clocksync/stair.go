package clocksync

// After a jump that may have been a slew's start or end, the floors can
// go on moving apart at the rate the jump did not take, and one floor's
// move shows as one-way steps, one every second or so on a quiet path
// (random:315 seed 1: 20 in 16 s). Each step starts a drift segment of
// its own, whose intercept takes the step out of the fit, and holds the
// fit for the segment's first bins: a staircase that is a ramp then hides
// its slope from the fit that would show the rate, until it pauses. So
// after such a jump (its bins since still weighed, jumphistory.go, or a
// slew's end not yet decided, endjump.go), a step that follows one of its
// sign in the same direction within stairGap, by no more than a clock at
// maxShift moves in between, is the ramp's next part: it starts no
// segment and holds nothing; and a step that does hold the fit still
// lets the bins since the jump be weighed (fit, drift.go), taken only by
// their own tests. (Everywhere, not only after a jump, the stair took
// queues' drains for slopes: random:8001..9400 44 runs worse by over 5%
// against 42 better, random:9161 seed 3 1.7 → 6.8 ms. After a jump it
// still can: random:9072 seed 2, a bloat's drain 14 s after a server
// step, 3.4 → 12.0 ms.)

// stairGap is how soon after a one-way step another of its sign may be
// a ramp's next part.
const stairGap = 2 * binDuration

// stairPart reports whether a one-way step d of direction dir (0 the
// uplink, 1 the downlink; 0: none) at client time stepAt is a ramp's next
// part (see above), and records it.
func (e *Estimator) stairPart(dir int, d, stepAt int64) bool {
	if d == 0 {
		return false
	}
	sign := int64(1)
	if d < 0 {
		sign = -1
	}
	prevAt, prevSign := e.stairAt[dir], e.stairSign[dir]
	e.stairAt[dir], e.stairSign[dir] = stepAt, sign
	gap := stepAt - prevAt
	return (e.jumpBins >= 0 || e.endJump) && prevSign == sign && gap <= stairGap &&
		float64(abs64(d)) <= maxShift*float64(gap)
}
