package clocksync

// Queues only lengthen a round trip. Where a queue in each direction builds
// and drains for longer than the window (busy-hour LTE, a shared Wi-Fi), the
// window's floors move one side at a time and each move is taken for the
// path, held in A; the offset holds across them only as well as the drift
// is known, so over many moves A walks away. When the floors come back to
// the shortest round trip the path has shown, both are at their own floors
// again: that state's A holds again, and what the split moved since is the
// clock's. A known state is found again by its floors (matches), which the
// drift's error, after minutes of queues, moves too far; the round trip is
// no clock's, and finds the shortest state whatever the drift did.

// shortestKnown returns the known path state of the shortest round trip, or
// -1 if there is none.
func (e *Estimator) shortestKnown() int {
	short := -1
	var rtt int64
	for k := 0; k < e.knownN; k++ {
		ku, kw := e.floorsAt(e.known[k])
		if r := ku + kw; short < 0 || r < rtt {
			short, rtt = k, r
		}
	}
	return short
}

// backToShortest reports whether the path change to the floors used, from
// the state before (floors ru, rw, left by pU, pW beyond the clock part),
// is a return to the shortest known state, and returns that state: the
// round trip back at its own within the floors' tolerances, A away from its
// by more than them, and the split moved by no more than the drift's error
// can have moved it since.
func (e *Estimator) backToShortest(used scanned, before pathRef, ru, rw, pU, pW, tolU, tolW, now int64) (pathRef, bool) {
	short := e.shortestKnown()
	if short < 0 {
		return pathRef{}, false
	}
	k := e.known[short]
	ku, kw := e.floorsAt(k)
	tol := tolU + tolW + k.tolU + k.tolW
	switch {
	case k.at >= before.at || e.matches(k, ru, rw, tolU, tolW, now):
		// It is the state the path leaves: nothing to come back to.
		return pathRef{}, false
	case e.silent && e.silentAt > k.at:
		// An interruption since (a handover) can have moved each floor
		// by itself, to a round trip as short by chance (random:1635).
		return pathRef{}, false
	case e.leftMatches(k, ru, rw, pU, pW, tolU, tolW, now):
		return pathRef{}, false
	case abs64(used.minU+used.minW-ku-kw) > tol || abs64(e.asym-k.asym) <= tol:
		return pathRef{}, false
	}
	// Further than the drift's error reaches, the split moved by a step:
	// the clock's (doubt.go decides) or the path's.
	if c := abs64((used.minU-ku)-(used.minW-kw)) / 2; c > int64(3*e.boundSE()*float64(now-k.at))+tol/2 {
		return pathRef{}, false
	}
	// Another state as short with another A: no telling which.
	for j := 0; j < e.knownN; j++ {
		ju, jw := e.floorsAt(e.known[j])
		if j != short && ju+jw-ku-kw <= tol && abs64(e.known[j].asym-k.asym) > tol {
			return pathRef{}, false
		}
	}
	return k, true
}
