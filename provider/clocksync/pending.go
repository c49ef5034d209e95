package clocksync

import "math"

// A rise that lasted as a path change must (RiseConfirm samples and
// riseHold) waits for its old floor to leave the window before the path
// tracker takes it: until then the window's floor is right for the offset.
// A clock jump's restart drops that floor, and the floors after it hold
// the rise with A unchanged: a route that flapped up 10 s before a 2 s
// client step (random:8629 seeds 1 and 2) left half the flap, 7.5 ms, in
// the offset until it flapped back. The rise was the path's: the jump
// keeps it, and A takes it when the acquisition ends if the round trip
// still holds it (reacquire.go).

// pendingRises returns how far each floor, fu and fw before the jump, had
// risen by itself over the samples right before the jump's span of the
// newest samples: the minimum of the run of samples back to where they
// sat nearer the floor than the level the newest RiseConfirm held (that
// level beyond the path tracker's tolerance), if the run lasted as a rise
// must. Not the rise detector's threshold: frozen when its run began, at
// twice the mean excess, it stood at 16 ms after a handover had lifted
// both floors on random:2292, and only one side's rise was taken; nor the
// tolerance, which jitter clears for minutes before a flap.
//
// Not a rise that is half a clock step's, the other half hidden: a fall in
// doubt, or a round trip that rose by less than three quarters of it
// (Wi-Fi power save hid a 3.7 ms server step's downlink fall on
// random:10). Nor a spread that widened rather than a floor that moved: a
// queue or Wi-Fi power save, whose run sits above its own minimum, on
// average, by as much as that minimum sits above the old floor (power
// save on random:9190 seed 3: a 13.7 ms rise under 36 ms of mean excess,
// taken, 6 ms of error for ten minutes). At four times the rise instead
// of once, random:1..600 ×0.9912 (65 runs better by over 5%, 31 worse)
// and 8001..9400 ×0.9749 (202 / 62); once, ×0.9932 (29 / 10) and
// ×0.9776 (108 / 21): less gain, a third of the losses.
func (e *Estimator) pendingRises(span int, fu, fw int64) (pu, pw int64) {
	first := e.n - span
	if first < 1 || e.doubt.on {
		return 0, 0
	}
	tolU, tolW := e.floorTolerance()
	rc := e.cfg.RiseConfirm
	side := func(d []int64, floor, tol int64) int64 {
		if first < rc {
			return 0
		}
		// The level the newest samples before the span hold, and the run
		// back to where the samples sat nearer the floor than to it.
		level := int64(math.MaxInt64)
		for j := first - rc; j < first; j++ {
			level = min(level, d[e.at(j)])
		}
		if level-floor <= tol {
			return 0
		}
		k, m := first, int64(math.MaxInt64)
		for k > 0 && d[e.at(k-1)] > floor+(level-floor)/2 {
			k--
			m = min(m, d[e.at(k)])
		}
		if k == 0 || first-k < rc || e.t[e.at(first-1)]-e.t[e.at(k)] < int64(riseHold) {
			return 0
		}
		var excess int64
		for j := k; j < first; j++ {
			excess += d[e.at(j)] - m
		}
		if excess/int64(first-k) >= m-floor {
			return 0
		}
		before, _ := e.roundTripFloor(0, k)
		during, _ := e.roundTripFloor(k, first)
		if 4*(during-before) < 3*(m-floor) {
			return 0
		}
		return m - floor
	}
	return side(e.ud, fu, tolU), side(e.wd, fw, tolW)
}
