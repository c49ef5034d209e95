package clocksync

// A clock that moves lifts one floor and lowers the other by as much. When
// the other direction's newest samples all sit well above its floor (a
// route flapped up, a queue), the fall is hidden there, and the rise alone
// reads as a path change in the making, or as jitter: until the rise is
// looked at (steps.go, every riseHold), nothing in the bound covered it.
// random:1246: a server slew began while a queue held the uplink up; the
// downlink's rise went 35s unseen as a slew, and the offset fell 13ms
// behind under a bound of 1.4 to 2ms.

const (
	// hiddenSamples is how many of the newest samples show a rise: few
	// enough that a slew's ramp is not averaged away over them.
	hiddenSamples = 12
	// hiddenSpread is how many times the mean excess over hiddenSamples
	// a minimum must sit above its floor to be a rise, not jitter: for
	// exponential jitter the minimum of k samples sits above the floor by
	// more than c·mean/k with probability e^−c.
	hiddenSpread = 4
)

// hiddenRise returns how far one floor has risen over the newest
// hiddenSamples samples when the other direction's, over the same
// samples, sit further above its own: a clock move of that size whose
// other half they hide. It returns 0 when the other floor shows in place
// or neither rose beyond its jitter. fu and fw are the window's detrended
// floors, tolU and tolW their tolerances, meanU and meanW the mean excess
// of samples over them.
func (e *Estimator) hiddenRise(fu, fw, tolU, tolW, meanU, meanW int64) int64 {
	if e.n < hiddenSamples {
		return 0
	}
	// The minima only, not minDetrended's scan with its sums: this runs
	// every sample, and the scan cost 75 ns more per Observe.
	mu, mw := e.ud[e.at(e.n-1)], e.wd[e.at(e.n-1)]
	for k := 2; k <= hiddenSamples; k++ {
		i := e.at(e.n - k)
		mu, mw = min(mu, e.ud[i]), min(mw, e.wd[i])
	}
	riseU, riseW := mu-fu, mw-fw
	sigU := tolU + hiddenSpread*meanU/hiddenSamples
	sigW := tolW + hiddenSpread*meanW/hiddenSamples
	var hidden int64
	if riseW > sigW && riseU > max(sigU, riseW) {
		hidden = riseW
	}
	if riseU > sigU && riseW > max(sigW, riseU) {
		hidden = max(hidden, riseU)
	}
	return hidden
}
