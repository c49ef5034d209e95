package transport

import (
	"math"
	"time"

	"github.com/netclock/netclock/internal/wire"
)

// Saturating arithmetic for where a time from the network meets a local
// clock. A peer may send any stamp in range (nettime's ±MaxDuration, or
// any int64 in a pong), and plain subtraction would wrap around: an age
// of −292 years read as +292.

// subSat returns a − b, clamped to the range of time.Duration.
func subSat(a, b time.Duration) time.Duration {
	d := a - b
	// Overflow iff the operands' signs differ and the result's sign is
	// not a's.
	if (a >= 0) != (b >= 0) && (d >= 0) != (a >= 0) {
		if a >= 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return d
}

// maxPongTime bounds the server times a pong may carry (about ±73 years
// from tick 0): the estimator adds and subtracts up to four times of a
// sample, which cannot overflow within this bound whatever the server
// sends. A server clock farther from tick 0 is not a netclock server's.
const maxPongTime = time.Duration(math.MaxInt64 / 4)

// pongTimesInRange reports whether p's server times are within
// ±maxPongTime.
func pongTimesInRange(p wire.Pong) bool {
	in := func(d time.Duration) bool { return d >= -maxPongTime && d <= maxPongTime }
	return in(p.ServerReceive) && in(p.ServerSend)
}
