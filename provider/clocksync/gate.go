package clocksync

import "time"

// Stall gate parameters: a sample whose round trip is more than
// max(gateMin, gateJitters × the jitter) above the floor is set aside,
// unless such samples go on for gateRun samples and gateHold: then the path
// itself is slower and they count. (One that contradicts the estimate ends
// the gate for its run at once.)
const (
	gateMin     = int64(50 * time.Millisecond)
	gateJitters = 8
	gateRun     = 16
	gateHold    = int64(3 * time.Second)
)

// gate reports whether a sample at client time t, its one-way deltas u
// and w, is to be set aside as stalled for its round trip. A paused
// server answers the pings queued during the pause all at once: their
// round trips say nothing about the clocks, and their delays must not
// reach the floors, the drift bins or the lead.
func (e *Estimator) gate(t, u, w int64) bool {
	if e.n < 16 || !e.est.Valid {
		return false
	}
	if u+w <= e.rttFloor+max(gateMin, gateJitters*int64(e.est.Jitter)) {
		e.gatedRun, e.ungated = 0, false
		return false
	}
	// Once a sample of the run has shown the clocks moved, the rest of
	// the run is no paused server's either: the bound it widened leaves
	// them room, but the jump test needs them.
	if e.ungated || e.contradicts(t, u, w) {
		e.gatedRun, e.ungated = 0, true
		return false
	}
	if e.gatedRun == 0 {
		e.gatedSince = t
	}
	e.gatedRun++
	return e.gatedRun < gateRun || t-e.gatedSince < gateHold
}

// contradicts reports whether a sample at client time t, its one-way
// deltas u and w, leaves the offset no room within the estimate's bound:
// neither delay is negative, so the offset lies in [−w, u]. Such a sample
// saw the clocks move, whatever its round trip: a paused server's queued
// answers have round trips as long as the pause, and room for any offset
// near the estimate. (random:130 seed 2 at 1 Hz: a 50 s suspend, its
// clock jump's samples lifted past the gate by a 247 ms bloat, were set
// aside for the gate's 16 samples, 16 s, under a bound of 66 ms: 50 s of
// error.)
func (e *Estimator) contradicts(t, u, w int64) bool {
	if !e.est.Valid || e.est.ErrorBound <= 0 {
		return false
	}
	off := int64(e.est.ServerTime(time.Duration(t))) - t
	b := int64(e.est.BoundAt(time.Duration(t)))
	return off-b > u || off+b < -w
}
