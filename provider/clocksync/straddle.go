package clocksync

// The straddle gate. A ping sent before the client's clock stepped back
// and answered after it reads a round trip short by the step, its uplink's
// delta of the old clock and its downlink's of the new one. Taken in, it
// lowers the downlink's floor alone, and its uplink, which did not rise,
// vetoes the jump (random:43 pinged at 50 Hz: five such samples, a 57.5ms
// step taken for a path change, 48ms of error under a bound of a third of
// that). So a sample whose round trip is far below the floor, its uplink
// delta at its floor and its downlink's short by the shortfall, is held.
// Such samples were all sent within one round trip before the step: held
// samples followed by one whose downlink delta stays low (the step's other
// half) are dropped, and otherwise count, in order; so do short round
// trips that go on longer than a round trip (a shorter downlink).
type straddleVerdict int

const (
	straddleNone straddleVerdict = iota // an ordinary sample
	straddleHold                        // hold it
	straddlePath                        // count the held samples, then it
	straddleDrop                        // drop it: it straddled a jump already taken
)

// afterJump is what the straddle gate knows of a backward step of the
// client's clock the window last restarted on, while the acquisition after
// it runs: the gate's floors are then the new clock's few samples, and a
// ping sent before the step and answered after it carries the old clock's
// uplink delta, below every new one by about the step, which the
// acquisition would take for the uplink's floor.
type afterJump struct {
	rise   int64 // how far the step lifted the uplink's floor (0: no such jump)
	floorU int64 // the uplink's detrended floor before it
	first  int64 // client send time of the first sample kept after it
}

// markJump arms the gate for the acquisition after a jump that moved the
// uplink's floor by a and the downlink's by b, the first sample kept after
// it sent at client time first: only a step of the client's clock back
// lifts the uplink and lowers the downlink, and leaves pings in flight
// across it.
func (e *Estimator) markJump(a, b, first int64) {
	e.afterJump = afterJump{}
	if a > 0 && b < 0 {
		e.afterJump = afterJump{rise: a, floorU: e.floorU, first: first}
	}
}

// straddledJump reports whether a sample sent at client time sent with
// detrended uplink delta ud, coming in during the acquisition after a
// backward step, was sent before it: its send time, of the old clock,
// less the step, comes before the first sample kept after the step, and
// its uplink delta sits nearer the floor before the step than where the
// step lifted it. random:4449 seed 5 at 20 Hz: a 228ms client step back on
// a 233ms round trip, and a ping sent before it whose downlink took 383ms
// came in after the jump was taken; the acquisition took its uplink delta
// for the floor, 114ms of error under a bound of 3ms for 52s.
func (e *Estimator) straddledJump(sent, ud int64) bool {
	j := &e.afterJump
	return j.rise > 0 && sent-j.rise < j.first && ud < j.floorU+j.rise/2
}

// heldMax is how many samples the straddle gate holds at most: 32 pings
// within a round trip (300ms at 100 Hz).
const heldMax = 32

type heldSample struct{ tc, u, w int64 }

// straddle judges a sample sent at client time sent with round trip rtt and
// detrended one-way deltas ud, wd.
func (e *Estimator) straddle(sent, rtt, ud, wd int64) straddleVerdict {
	switch {
	case e.acquiring == 0:
		e.afterJump.rise = 0 // the acquisition it was armed for is over
	case e.straddledJump(sent, ud):
		return straddleDrop
	}
	if e.n < 16 || !e.est.Valid || e.acquiring > 0 {
		return e.endShortRun()
	}
	short := e.rttFloor - rtt
	if short <= 0 && e.heldN == 0 {
		return straddleNone // most samples: no round trip below the floor
	}
	tu, tw := e.floorTolerance()
	// A straddler's uplink delta is of the old clock, at or above its
	// floor, and its downlink's is short by the whole shortfall.
	if short <= 2*(tu+tw) || ud < e.floorU-2*tu || wd > e.floorW-short/2 {
		if e.heldN == 0 {
			return straddleNone
		}
		// No straddler. After a step its downlink's delta stays below
		// the floor by about the held samples' shortfall (its uplink's
		// rose as much): they straddled it. Back at the floor, they
		// were the path's (a queue that drained a moment).
		if wd < e.floorW-max(2*tw, e.shortBy/2) {
			e.stats.Straddled += int64(e.heldN)
			e.heldN = 0
			return straddleNone
		}
		return straddlePath
	}
	if e.heldN == 0 {
		e.shortSince, e.shortBy = sent, short
	}
	e.shortBy = min(e.shortBy, short)
	if e.heldN < heldMax && sent-e.shortSince <= e.rttFloor+gateJitters*int64(e.est.Jitter) {
		return straddleHold
	}
	return straddlePath
}

// endShortRun lets what the straddle gate holds count: the estimator is
// not in a state to tell.
func (e *Estimator) endShortRun() straddleVerdict {
	if e.heldN > 0 {
		return straddlePath
	}
	return straddleNone
}
