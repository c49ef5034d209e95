package clocksync

import "time"

// A clock moves the floors in one of two ways: a step, which the falling
// side's window floor shows at once (settling within its jitter over the
// first samples), or a slew, and no slew taken for one runs faster than
// maxShift. clockExplains (path.go) takes one floor falling while the
// other side's newest samples rose by about as much for the clock, and the
// offset follows the fall as it comes. A queue draining on one side while
// the other side's floor has just risen by itself (a route flapped up, a
// power-saving radio) matches that by chance, and then the offset follows
// the drain: random:108 seed 1, a downlink bloat draining at 3.8 ms/s 30 s
// after the uplink's route flapped up 27 ms, 16.6 ms of error within 6 s.
// What tells them apart is the pace: once settled, a fall that goes on
// faster than twice the fastest slew is no clock's.

// drain watches one run of falls that clockExplains took for the clock.
type drain struct {
	on      bool  // a run is being watched
	settled bool  // its settling time has passed; at and size are from then
	at      int64 // client time the run began, or settled
	began   int64 // client time the run began
	size    int64 // how far the floor had fallen then
	// Where a minimum of the newest q samples sat above each floor when
	// the run began, and how widely (recentBias): the lift's zero
	// (lift.go).
	q            int
	biasU, biasW int64
	iqU, iqW     int64
	biasOK       bool
	// The newest fall refused as a drain: a fall on that side moments
	// later is the same drain going on.
	seen   bool
	seenU  bool
	seenAt int64
}

const (
	// drainRate is the fastest a settled fall may go on and still be the
	// clock's: twice maxShift.
	drainRate = 2 * maxShift
	// drainSettle is how long a step's fall may take to settle: its first
	// samples sit up to the falling side's jitter above its new floor.
	drainSettle = int64(500 * time.Millisecond)
	// drainKeep is how long after a fall refused as a drain a fall on the
	// same side is taken for the same drain at once.
	drainKeep = int64(2 * time.Second)
	// drainWander is how many times the falling side's floor wander (its
	// bin-to-bin and its slow wander, floorwander.go) a settled fall may
	// still go on by beyond its pace: behind a queue on that side a step
	// settles as the queue comes down, and may take longer than
	// drainSettle (random:120 seed 2: a 23 ms server step behind a 28 ms
	// uplink queue, refused without it: 6 → 19 ms of error).
	drainWander = 2
)

// drains reports whether a one-sided move (pU, pW, beyond the tolerances
// tolU, tolW) that clockExplains took for the clock is a queue draining
// instead: a fall that, settled, goes on faster than drainRate, or one on
// the side of a drain refused moments ago. A fall in doubt on that side
// (doubt.go) is then the drain's first part, and ends as the path's.
func (e *Estimator) drains(pU, pW, tolU, tolW, now int64) bool {
	d := &e.drain
	fall, tol, uFell := abs64(pW), tolW+drainWander*(e.wanW+e.slowW), false
	if uMoves(pU, pW, tolU, tolW) {
		fall, tol, uFell = abs64(pU), tolU+drainWander*(e.wanU+e.slowU), true
	}
	switch {
	case d.seen && d.seenU == uFell && now-d.seenAt < drainKeep:
	case !d.on:
		d.on, d.settled, d.at, d.size, d.began = true, false, now, fall, now
		return false
	case !d.settled:
		if now-d.at >= drainSettle {
			d.settled, d.at, d.size = true, now, fall
		}
		return false
	case fall-d.size <= tol+int64(drainRate*float64(now-d.at)):
		return false
	}
	d.on, d.seen, d.seenU, d.seenAt = false, true, uFell, now
	if e.doubt.on && e.doubt.fellU == uFell {
		e.endDoubt()
	}
	return true
}
