package clocksync

// A restart of the window (a clock jump, a rate change, a silence) takes
// the floors afresh with A unchanged: the path is assumed the same. The
// round trip says whether it was: it does not depend on the clocks, so a
// round-trip floor that differs from the one before the restart, by more
// than the fewer samples explain, is a path that changed meanwhile — and
// how it split between the directions is unknown. Until the reacquisition
// ends the bound carries half that change; after, A's error does.

// reacquisition is the state before a restart of the window.
type reacquisition struct {
	on       bool
	rtt      int64 // the round-trip floor before
	n        int   // samples in the window before
	spU, spW int64 // the floors' spacing before
}

// markRestart records the state before a restart of the window, unless a
// reacquisition is already under way (its state is the older, trusted one).
func (e *Estimator) markRestart() {
	if e.reacq.on || !e.refSet || e.n < recentMin {
		return
	}
	e.reacq = reacquisition{on: true, rtt: e.rttFloor, n: e.n, spU: e.spU, spW: e.spW}
}

// pathMovedSinceRestart returns how far the round-trip floor rtt moved
// since the restart, if further than the floors' precision explains (the
// fewer samples since the restart sit higher above the floor); 0 without a
// restart. When the reacquisition ends, the move becomes A's error.
func (e *Estimator) pathMovedSinceRestart(rtt, tolU, tolW int64) int64 {
	r := &e.reacq
	if !r.on {
		return 0
	}
	scale := int64(max(1, r.n/max(1, e.n)))
	slack := tolU + tolW + 4*scale*(r.spU+r.spW)
	d := abs64(rtt - r.rtt)
	if d <= slack {
		d = 0
	}
	if e.acquiring == 0 {
		e.asymErr += d
		r.on = false
		return 0
	}
	return d
}
