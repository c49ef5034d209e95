package clocksync

import "time"

// Every sample puts the offset between −(its downlink delta) and its uplink
// delta, so A, the split of the round trip, lies within ±the round-trip
// floor: no direction's delay is below zero. The path tracker builds A from
// the moves it took for the path, and the offset is clamped into the
// interval the floors allow. A beyond the limit by a little is a reading
// about right whose size overshot, which the clamp mends (random:320 seed
// 3: A at 51ms on a 37ms round trip as an uplink bloat drained, the offset
// 0.5ms off). A beyond it by more than half the round trip is a reading
// gone wrong: a clock step taken for the path while a queue hid the other
// side's move (random:1069 seed 3: a 153ms client step inside a 267ms
// uplink bloat; once the bloat drained A sat at −307ms on a 174ms round
// trip, and the clamp held the offset at the interval's edge, 87ms off,
// for 12 minutes), an acquisition inside a queue whose drain A then took
// (random:8535 seed 1), or the drift's error that correlated queues walk A
// with. Which of its moves were wrong no floor tells. The path is taken to
// have the longer direction the reading says, by an unknown amount: A goes
// to the middle of that side, half the round trip, and its error to all
// the interval it could be in. (A to 0, the middle of the interval, as at
// a start, lowers the median error more but costs more runs their p99:
// paths whose one direction is most of the round trip, which the sign
// keeps. The accuracy log has the numbers.)
//
// Only where the round trip is back at the shortest any sample has had: a
// queue makes one direction most of the round trip, and A next to the
// limit is then the path's (random:11647, a 190ms downlink bloat on a
// 2.7ms path). The shortest is a single sample's round trip, which no clock
// moves, so window floors that straddle a step (their sum below any
// sample's round trip) do not count as the path at its shortest either
// (random:8089: a −6.5ms server step left a window floor of 0.55ms on a
// 6.7ms path; taken for the shortest, A's error shrank to it and the bound
// covered 98% of the time).

// (Not while a restart's reacquisition is under way: A is its to keep or
// put back, reacquire.go.)

// limitHold is how long A must stay beyond the limit before the reading
// is dropped: a floor that settles crosses it for a moment.
const limitHold = int64(2 * time.Second)

// dropBeyondLimit drops the path reading when A has stayed beyond the
// round-trip floor rtt, by more than half of it and than the floors'
// tolerances and the drift's tilt, for limitHold, while rtt is the
// shortest a sample has shown.
func (e *Estimator) dropBeyondLimit(rtt, tolU, tolW, now int64) {
	if e.n > 0 {
		i := e.at(e.n - 1)
		e.shortRTT = min(e.shortRTT, e.u[i]+e.w[i])
	}
	if !e.refSet || e.acquiring > 0 || e.reacq.on || rtt <= 0 || abs64(rtt-e.shortRTT) > max(2*tolMin, e.shortRTT/4) ||
		abs64(e.asym)-rtt <= max(tolU+tolW+e.driftTilt(), rtt/2) {
		e.limitSince = -1
		return
	}
	if e.limitSince < 0 {
		e.limitSince = now
	}
	if now-e.limitSince < limitHold {
		return
	}
	e.limitSince = -1
	half := rtt / 2
	if e.asym < 0 {
		half = -half
	}
	// From the middle of one side, the far end of the other is 1.5 round
	// trips away.
	e.takeAsym(half, rtt+rtt/2+tolU+tolW)
	e.anchor, e.episode = e.ref, e.ref
	// The states remembered hold the dropped reading's A, and the path
	// changes logged would take it back.
	e.forgetPaths()
	e.pathLogN, e.jumpPaths = 0, false
	e.stats.AsymResets++
}
