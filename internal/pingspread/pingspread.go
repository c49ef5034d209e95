// Package pingspread spreads a steady ping schedule: each interval is the
// period plus an offset in [-spread, spread], so that the pings
// never keep one phase of a link's own period (a cable grant, a satellite
// frame). The offsets are a fixed function of the ping's number, the same
// for the transport and the accuracy harness, which paces netclock as the
// transport does: a run is reproducible, and the harness measures the
// schedule the transport keeps.
package pingspread

import "time"

// Offset returns ping n's offset from the steady period, uniform in
// [-spread, spread] over n; 0 if spread is not positive.
func Offset(n uint64, spread time.Duration) time.Duration {
	if spread <= 0 {
		return 0
	}
	// splitmix64's finalizer: consecutive n land far apart.
	x := n + 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return time.Duration(x%uint64(2*spread+1)) - spread
}
