package clocksync

// The path changes since a jump. A slew whose start or end reads as a
// clock jump leaves the floors moving apart after it at the rate the jump
// did not take, and the path tracker takes the move for path changes, one
// a second or so on a quiet path (random:315 seed 1: 20 in 16 s after a
// slew's end read as a jump, A walked 6.7 ms). When a fit of the bins
// since the jump shows the rate, the changes are the clock's and are
// taken back; the log holds only the newest numPathLog changes, so the
// path state before the first since the jump is kept apart (trackPath).
//
// Taken back whole only where the round trip says they were the clock's:
// each sample's round trip, u + w, moves with neither the clock's rate
// nor a step, and a route that changed meanwhile moves it. Where it moved,
// a new rate seen in each direction by itself (sinceJumpFit) still takes
// back what the log holds, as before (a correlated queue lifts the newest
// samples' round trip too: random:392 seed 4, 2.5 → 3.0 ms taking none
// back); a slew's end seen only as the rate before it takes back none
// (random:1533 seed 4: a route flap 25 ms up among the changes since a
// real step, taken back with them, 3.8 → 10.6 ms). Where the samples from
// before the first change have left the window, the round trip cannot
// say, and what the log holds is taken back (random:23 at 50 Hz: 51
// changes in the minute after a slew's start read as a jump, a bloat's
// and a handover's among them; taken back whole, 2.5 → 3.2 ms).

// undoClockSinceJump takes back the path changes since the newest jump
// when they moved A the way a clock move of the floors' change a−b (move)
// would, and by no more, and reports whether it did. bent says that the
// new rate showed in each direction by itself (sinceJumpFit): a round
// trip that moved meanwhile then leaves the changes the log holds to be
// taken back, as before; else none.
func (e *Estimator) undoClockSinceJump(move int64, bent bool) bool {
	if !e.jumpPaths || e.jumpPathFrom >= e.pathLogN {
		return false
	}
	switch e.jumpRoundTrip() {
	case rttMoved:
		if !bent {
			return false
		}
	case rttHeld:
		dA := e.asym - e.jumpPathBefore.asym
		if dA == 0 || (dA > 0) != (move > 0) || abs64(dA) > abs64(move) {
			return false
		}
		e.undoPathChanges(e.jumpPathFrom, e.jumpPathBefore, 0)
		return true
	}
	if e.pathTookClock(e.jumpAt, move) == 0 {
		return false
	}
	e.undoPathChangesSince(e.jumpAt, 0)
	return true
}

// What the round trip says of the path changes since a jump.
const (
	rttUnknown = iota // the samples from before them have left the window
	rttHeld
	rttMoved
)

// jumpRoundTrip compares the round trip since the newest path change (its
// newest recentMin samples at least) with the one before the first since
// the newest jump: held within half the mean excess there (never under
// 2·tolMin), else moved.
func (e *Estimator) jumpRoundTrip() int {
	// The window's samples are in time order: those before the first
	// change since the jump, [0, before), and those since the newest,
	// [since, e.n).
	before := 0
	for before < e.n && e.t[e.at(before)] < e.jumpPathAt {
		before++
	}
	newest := e.pathLog[(e.pathLogN-1)%numPathLog].at
	since := e.n
	for since > before && e.t[e.at(since-1)] >= newest {
		since--
	}
	since = max(before, min(since, e.n-recentMin))
	if before == 0 || since == e.n {
		return rttUnknown
	}
	older, excess := e.roundTripFloor(0, before)
	if newer, _ := e.roundTripFloor(since, e.n); abs64(newer-older) <= max(excess/2, 2*tolMin) {
		return rttHeld
	}
	return rttMoved
}
