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
	// fallBack is how many of the newest samples a fall of the other
	// direction is looked for in: the minimum of hiddenSamples of them
	// in a row, before the move, against the newest hiddenSamples'. A
	// rise shows only once hiddenSamples samples followed it, and a run
	// of samples can begin a few late (a reset at the move).
	fallBack = 3 * hiddenSamples
)

// hiddenRise returns how far one floor has risen over the newest
// hiddenSamples samples when the other direction's, over the same
// samples, sit further above its own, or fell by most of as much as it
// came: a clock move of that size whose other half they hide, or show
// against a level the window's floor does not, or sit so near their
// floor that their jitter may hide a fall as large. It returns 0 when the
// other floor shows in place, closer than its jitter could hide a fall,
// or neither rose beyond its jitter, and keeps, in fellU and fellW, which
// rise came with such a fall. fu and fw
// are the window's detrended floors, tolU and tolW their tolerances,
// meanU and meanW the mean excess of samples over them.
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
	// A rise the other direction was seen to fall by as it came stays
	// suspect as long as it lasts. Both moves must be twice the jitter's
	// threshold: the fall is measured from the highest of many minima,
	// and at the threshold itself they widened the named profiles'
	// bounds by 5% (congested's by 36%).
	e.fellU = riseU > sigU && (e.fellU || (riseU > 2*sigU && e.fellFrom(e.wd, mw, riseU, 2*sigW)))
	e.fellW = riseW > sigW && (e.fellW || (riseW > 2*sigW && e.fellFrom(e.ud, mu, riseW, 2*sigU)))
	// A floor seen in place does not rule the fall out either when its
	// jitter is so wide that a dozen samples' minimum may sit as far
	// above it as the fall took it below (random:3597, an uplink waiting
	// up to 13.6ms for a cellular grant: a 339 ppm slew's rise counted
	// for nothing for 8s, the offset 1.4ms off under 0.4 to 0.8ms).
	var hidden int64
	if riseW > sigW && (riseU > max(sigU, riseW) || e.fellW || riseU+riseW <= sigU) {
		hidden = riseW
	}
	if riseU > sigU && (riseW > max(sigW, riseU) || e.fellU || riseW+riseU <= sigW) {
		hidden = max(hidden, riseU)
	}
	return hidden
}

// fellFrom reports whether the other direction's delays d, whose newest
// hiddenSamples have minimum newest, fell by most of rise, and beyond its
// jitter sig, from the highest minimum of hiddenSamples of them in a row
// among the newest fallBack: the clock move's other half, seen against a
// level the window's floor may not show. random:5652: a client step came
// while the downlink sat raised by a rise not yet classified; its fall
// there stayed above the stale floor, and its uplink rise read as a
// one-sided path change for 44s, 24.9ms of error under 11 to 21ms.
func (e *Estimator) fellFrom(d []int64, newest, rise, sig int64) bool {
	if e.n < fallBack {
		return false
	}
	fall := e.highestMin(d) - newest
	return fall > sig && 3*fall >= 2*rise
}

// highestMin returns the highest minimum of hiddenSamples of d's newest
// fallBack values in a row (e.n >= fallBack), from running minima within
// blocks of hiddenSamples: for the run starting at k, the minimum from k
// to its block's end and from the next block's start to the run's end.
func (e *Estimator) highestMin(d []int64) int64 {
	var fromK [fallBack]int64 // the minimum from k to the end of k's block
	first := e.n - fallBack
	for b := fallBack - hiddenSamples; b >= 0; b -= hiddenSamples {
		m := d[e.at(first+b+hiddenSamples-1)]
		for k := b + hiddenSamples - 1; k >= b; k-- {
			m = min(m, d[e.at(first+k)])
			fromK[k] = m
		}
	}
	level, toK := fromK[0], int64(0)
	for k := 1; k+hiddenSamples <= fallBack; k++ {
		end := k + hiddenSamples - 1 // toK: from end's block start to end
		if end%hiddenSamples == 0 {
			toK = d[e.at(first+end)]
		} else {
			toK = min(toK, d[e.at(first+end)])
		}
		level = max(level, min(fromK[k], toK))
	}
	return level
}
