package clocksync

// A clock move under way shows on the falling side's window floor at
// once, and on the rising side only in its newest samples until the
// samples from before it have left the window. While the clock explains a
// fall (clockExplains), the offset follows the rising side's newest
// samples: the lift, as far as the fall.
//
// The newest recentMin samples say it sooner than the last 5 s of them: a
// slew's rising side is lowest at the oldest, and 5 s of it sat below most
// of the rise (random:469 seed 5, a 195 ppm client slew beside a
// downlink's Pareto jitter: 0.4 ms of error for 10 s). But a minimum of so
// few samples sits above the floor by itself, by a few spacings on a soft
// floor and by what a correlated queue swings over seconds (random:45:
// 3 to 5 ms), so the lift is what lies past where such a minimum sat
// before the run of falls began (recentBias, taken once when it begins:
// later stretches hold the move itself). Where those minima were spread
// wider than the fall, they cannot say it, and the last 5 s's minimum
// lifts as before (random:1963 seed 2, a 361 ppm client slew under Wi-Fi
// power save, followed by the newest minimum alone: p99 0.52 -> 2.6 ms).

// lift sets the rising side's lift for a one-sided fall (pU or pW, beyond
// its tolerance) that the clock explains, from the recent samples rec and
// the window's floors used, and liftErr, how far it may be off: at least
// the 5 s minimum's lift, as the bias taken off may be the move's.
func (e *Estimator) lift(rec recentSummary, used scanned, pU, pW, tolU, tolW, now int64) {
	// At slow pings the window holds too few stretches of recentMin for
	// their median (60 at 1 Hz): fewer samples make more stretches, and
	// at least 16 recent ones span 16 s there. Never more than the window
	// holds (after an outage, a sample or two).
	q := max(1, min(rec.k, recentMin))
	if (e.n-q)/q < minBiasChunks {
		q = max(1, min(e.n, max(4, e.n/(minBiasChunks+1))))
	}
	d := &e.drain
	if d.began == now {
		d.q = q
		d.biasU, d.biasW, d.iqU, d.iqW, d.biasOK = e.recentBias(q)
	}
	// The rising side's newest minimum, its 5 s one and its window floor,
	// and where and how widely a newest minimum sat before the run.
	nu, nw := rec.su, rec.sw
	if q != recentMin {
		nu, nw = e.minDetrended(e.n-q, e.n)
	}
	newest, recent, floor, bias, spread, fall := nw, rec.mw, used.minW, d.biasW, d.iqW, abs64(pU)
	lift := &e.liftW
	if !uMoves(pU, pW, tolU, tolW) {
		newest, recent, floor, bias, spread, fall = nu, rec.mu, used.minU, d.biasU, d.iqU, abs64(pW)
		lift = &e.liftU
	}
	wide := min(max(0, recent-floor), fall)
	*lift, e.liftErr = wide, wide
	if d.biasOK && q == d.q && spread <= fall {
		*lift = min(max(0, newest-floor-bias), fall)
		e.liftErr = max(*lift, wide)
	}
}
