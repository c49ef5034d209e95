package clocksync

import (
	"math"
	"time"
)

// The path tracker decides what a move of the floors means. Only the sum of
// the two one-way delays is observable, so a floor that moves can be the
// clock (both floors move by the same amount in opposite directions) or the
// path (one or both floors move by themselves: a route change, a queue that
// outlasts the window). A clock move moves the offset; a path move must not,
// so the asymmetry term A absorbs it.
//
// The tracker compares the window's floors with a reference: the floors of
// the last state the path was seen stable in. It never follows a floor that
// moves gradually away from the reference, so a queue that builds and
// drains, however slowly, cannot walk the offset away: once the one-sided
// part of the move exceeds the floors' own uncertainty it is a path change.
// Every path state it has trusted is remembered, and a path that comes back
// to one (a route flap, a queue that drained) takes that state's A back
// exactly, so steps do not accumulate error.

// pathRef is a path state: the floors (as raw one-way deltas with the
// client times they were seen, so they can be detrended again whenever the
// drift is refitted), how uncertain they were, and the asymmetry A that
// held in it with its uncertainty.
type pathRef struct {
	uRaw, tu   int64
	wRaw, tw   int64
	tolU, tolW int64
	spU, spW   int64 // the spacing of the lowest samples when confirmed
	asym       int64
	asymErr    int64 // bound on the error of asym from inferred changes
	bound      int64 // the offset's statistical error bound when it was confirmed
	n          int   // samples in the window when it was confirmed
	// How far each floor has been let fall as convergence since.
	fellU, fellW int64
	at           int64 // client time the state was last confirmed
	// Each floor's mean excess, the jitter's scale, when confirmed.
	exU, exW int64
}

// pathEvent records a path change, so that a clock shift found later can
// take back the ones it caused.
type pathEvent struct {
	at     int64
	before pathRef
}

const (
	// refEvery is how often a stable path state's reference is renewed.
	refEvery = int64(10 * time.Second)
	// numKnown path states are remembered for undo.
	numKnown = 8
	// numPathLog path changes are remembered for a clock shift to undo.
	numPathLog = 16
	// acquireSamples is how many samples a fresh start converges on (the
	// offset follows the floors freely) before the path is tracked.
	acquireSamples = 64
	// acquireMin is the least client time an acquisition lasts (64
	// samples take 5.6s at 10 Hz after the transport's connect burst).
	acquireMin = int64(5 * time.Second)
	// ratedPeriod is the ping period the rules counted in samples were
	// set at (10 Hz): at under half that rate, an acquisition lasts no
	// longer than its samples take at it.
	ratedPeriod = 100 * time.Millisecond
)

// floorsAt returns a reference's floors detrended at the current drift.
func (e *Estimator) floorsAt(r pathRef) (fu, fw int64) {
	return r.uRaw - e.trend(r.tu), r.wRaw + e.trend(r.tw)
}

// makeRef builds a path state from the window's floors.
func (e *Estimator) makeRef(s scanned, tolU, tolW, now int64) pathRef {
	return pathRef{
		uRaw: s.minU + e.trend(s.tu), tu: s.tu,
		wRaw: s.minW - e.trend(s.tw), tw: s.tw,
		tolU: tolU, tolW: tolW, spU: e.spU, spW: e.spW, asym: e.asym, asymErr: e.asymErr, bound: e.holdErr(now), at: now, n: e.n,
		exU: e.exU, exW: e.exW,
	}
}

// remember stores a trusted path state, replacing the one it matches or
// else the oldest.
func (e *Estimator) remember(r pathRef) {
	fu, fw := e.floorsAt(r)
	slot := -1
	oldest := -1
	// The shortest state stays, however old: it is the one that queues
	// draining in both directions come back to (shortest.go).
	short := e.shortestKnown()
	for k := 0; k < e.knownN; k++ {
		if e.matches(e.known[k], fu, fw, r.tolU, r.tolW, r.at) {
			slot = k
			break
		}
		if k != short && (oldest < 0 || e.known[k].at < e.known[oldest].at) {
			oldest = k
		}
	}
	switch {
	case slot >= 0:
	case e.knownN < numKnown:
		slot = e.knownN
		e.knownN++
	default:
		slot = oldest
	}
	e.known[slot] = r
}

// matches reports whether floors fu, fw (with uncertainties tu, tw, seen at
// now) are path state k again: each floor within both uncertainties plus
// what the drift's error can have moved it since.
func (e *Estimator) matches(k pathRef, fu, fw, tu, tw, now int64) bool {
	ku, kw := e.floorsAt(k)
	// The drift's error since k moves both floors; once it could move them
	// by more than their own uncertainty, another state would match as
	// well, and a false match claims A's old certainty.
	slack := int64(3 * e.boundSE() * float64(abs64(now-k.at)))
	if slack > 3*min(tu, k.tolU) || slack > 3*min(tw, k.tolW) {
		return false
	}
	return abs64(fu-ku) <= tu+k.tolU+slack && abs64(fw-kw) <= tw+k.tolW+slack
}

// leftMatches reports whether known state k matches the floors ru, rw of
// the state the path left as well as it matches the new ones, after a move
// pU, pW on a side whose floor is hard (its spacing far below the
// tolerance, which is then tolMin). There, a move past the tolerance is the
// path's, not the floor's wander, and k cannot tell a return from it: taken
// for one, A stays and the offset takes half the move, under a bound that
// knows nothing of it (random:2382: 0.074ms of error under 0.04ms). Where
// the spacing sets the tolerance, a floor wanders that far on the same
// path, and such a match is what keeps A through it (ue-bad-both,
// leo-satellite: their bounds ×2.3 and ×2.5 without it).
func (e *Estimator) leftMatches(k pathRef, ru, rw, pU, pW, tolU, tolW, now int64) bool {
	hard := func(p, tol, sp int64) bool { return abs64(p) > tol && 2*tolSpacings*sp < tolMin }
	return (hard(pU, tolU, e.spU) || hard(pW, tolW, e.spW)) && e.matches(k, ru, rw, tolU, tolW, now)
}

// trackPath compares the window's floors with the reference path state and
// returns EventPathChange when the path moved; it sets e.asym so that a
// path move leaves the offset where it was.
func (e *Estimator) trackPath(used scanned, tolU, tolW, now int64) Event {
	e.liftU, e.liftW, e.liftErr = 0, 0, 0
	if !e.refSet || e.acquiring > 0 {
		// Converging: the offset follows the floors; A stays. The floors'
		// uncertainty only shrinks while converging: a swell of the
		// spacing (a step under way) must not widen it.
		// (The spacing means something from a dozen samples on.)
		keep := e.refSet && e.acquiring < acquireSamples-1 && e.ref.n >= 16
		if keep {
			tolU, tolW = min(tolU, e.ref.tolU), min(tolW, e.ref.tolW)
		}
		spU, spW := e.ref.spU, e.ref.spW
		e.ref = e.makeRef(used, tolU, tolW, now)
		if keep {
			e.ref.spU, e.ref.spW = min(spU, e.ref.spU), min(spW, e.ref.spW)
		}
		e.refSet = true
		e.anchor = e.ref
		e.lone.on = false
		return EventNone
	}
	if e.lone.on {
		e.undoLoneFall(now, tolU, tolW)
	}
	ru, rw := e.floorsAt(e.ref)
	dU, dW := used.minU-ru, used.minW-rw
	// The clock part (clockPart), and the rest, the path's.
	c := clockPart(dU, dW, max(tolU, e.ref.tolU), max(tolW, e.ref.tolW))
	pU, pW := dU-c, dW+c
	// While old samples leave the window the floors' spacing (and so the
	// current tolerance) swells; the reference's is the steadier measure.
	tolU, tolW = max(tolMin, min(tolU, e.ref.tolU)), max(tolMin, min(tolW, e.ref.tolW))
	if abs64(pU) <= tolU && abs64(pW) <= tolW {
		return e.samePath(used, tolU, tolW, now)
	}
	rec := e.recent(now, ru-tolU, rw-tolW)
	// A floor that falls through a single sample is the minimum still
	// settling (convergence); a path that got shorter, or a queue that
	// drains, brings many samples below the old floor. Follow the first.
	// But only so far: the minimum settles by a few spacings, while a
	// queue that drains slowly moves the floor down one sample at a time
	// for as long as it drains.
	//
	// In the first window after a start the floors are not yet the path's:
	// behind a queue that builds and drains they fall, in many samples, as
	// far as the queue swings from bin to bin. Follow that too, and keep
	// half of it in the bound: it may have been the path after all.
	if pU < -tolU && e.followFall(true, pU, rec.belowU, tolU, tolW, used, now) {
		pU = 0
	}
	if pW < -tolW && e.followFall(false, pW, rec.belowW, tolW, tolU, used, now) {
		pW = 0
	}
	if abs64(pU) <= tolU && abs64(pW) <= tolW {
		return e.samePath(used, tolU, tolW, now)
	}
	// The window's floors lag a rise by the window and follow a fall at
	// once, so a clock that slews shows as one floor falling alone. The
	// recent floors see both sides move at the same time: a move they
	// explain as the clock's is left to the drift tracker and the
	// clock-shift detector. Past the clock part the window's floors already
	// show: the recent floors are compared with the reference moved by it.
	// Unless the fall goes on faster than a clock moves: a queue draining
	// (drain.go), the path's.
	explained := e.clockExplains(rec, ru+c, rw-c, pU, pW, tolU, tolW)
	drained := explained && e.drains(pU, pW, tolU, tolW, now)
	if !explained {
		e.drain.on = false
	}
	if explained && !drained {
		// A clock move under way: the offset follows it now, not when
		// the window has turned over (lift.go).
		e.lift(rec, used, pU, pW, tolU, tolW, now)
		return EventNone
	}
	// The path changed. The offset is the reference state's, moved by the
	// clock part; A takes the rest — unless the path is back in a state
	// seen before, whose A is known.
	before := e.ref
	theta := (ru-rw-e.ref.asym)/2 + c
	e.asym = used.minU - used.minW - 2*theta
	// Holding the offset across the change carries its error, as it was
	// in the last stable state and grown by the drift's error since, into
	// A. Changes in quick succession are one episode (a floor that moves
	// over seconds): they share the state before it.
	if e.pathLogN == 0 || now-e.lastPathAt >= refEvery {
		e.episode = e.ref
	}
	e.lastPathAt = now
	grown := int64(3 * e.boundSE() * float64(abs64(now-e.episode.at)))
	e.asymErr = e.episode.asymErr + 2*(e.episode.bound+grown)
	matched := false
	var back pathRef // the known state the path is back in
	for k := 0; k < e.knownN; k++ {
		if e.matches(e.known[k], used.minU, used.minW, tolU, tolW, now) && !e.leftMatches(e.known[k], ru, rw, pU, pW, tolU, tolW, now) {
			e.asym, e.asymErr = e.known[k].asym, e.known[k].asymErr
			matched, back = true, e.known[k]
			break
		}
	}
	if !matched {
		if k, ok := e.backToShortest(used, before, ru, rw, pU, pW, tolU, tolW, now); ok {
			// A's error keeps the path's reading: that the floors moved
			// by themselves to a split as long.
			held := e.asym
			e.asym = k.asym
			e.asymErr = max(k.asymErr, e.asymErr+abs64(held-k.asym))
		}
	}
	// A fall on one side alone may be the clock, the other side's rise
	// still hidden in its jitter (doubt.go). A return to a known state is
	// no such doubt, nor a drain (drain.go); a return to the shortest one
	// by the round trip alone still may be.
	switch {
	case matched, drained:
	case pU < -tolU && abs64(pW) <= tolW:
		e.suspect(true, -pU, tolW, now)
	case pW < -tolW && abs64(pU) <= tolU:
		e.suspect(false, -pW, tolU, now)
	}
	e.ref = e.makeRef(used, tolU, tolW, now)
	switch {
	case matched && back.at > e.anchor.at:
		// A state renewed since the path was last confirmed is that
		// state still, its floors moved by what its renewals let in: the
		// leak goes on counting from where it was confirmed (random:6687,
		// a 0.3ms downlink fall, half of it let in sub-tolerance and then
		// matched to the reference's own renewal: 0.16ms of error under a
		// bound that forgot it, 50%).
	case matched:
		// Back in a state seen before, whose A holds only as far as the
		// floors are its own: the leak counts from its floors, not from
		// wherever within the tolerances they came back to (random:4164:
		// an uplink floor back from 15.2ms to 0.4ms below where it had
		// been, 0.19ms of error under a bound of 0.16 for 3 minutes).
		e.anchor = back
	default:
		e.anchor = e.ref
	}
	if !e.jumpPaths {
		e.jumpPaths, e.jumpPathFrom, e.jumpPathAt, e.jumpPathBefore = true, e.pathLogN, now, before
	}
	e.pathLog[e.pathLogN%numPathLog] = pathEvent{at: now, before: before}
	e.pathLogN++
	e.stats.PathChanges++
	return EventPathChange
}

// followFall reports whether a fall p (< 0) of the uplink's floor (u) or
// the downlink's, seen by below of the newest samples, is the floor
// converging (see trackPath), and if so moves the reference onto it. One
// followed only because the window is young (or, in it, a lone sample's:
// lonefall.go) stays in doubt and, by half, in the bound.
func (e *Estimator) followFall(u bool, p int64, below int, tol, tolOther int64, used scanned, now int64) bool {
	fell, wander, ex := &e.ref.fellW, e.wanW, e.ref.exW
	if u {
		fell, wander, ex = &e.ref.fellU, e.wanU, e.ref.exU
	}
	settling := below < settledBelow && *fell-p <= tol
	first := now-e.freshAt < int64(e.cfg.Window)
	young := first && *fell-p <= youngK*wander
	lone := first && !settling && !young && below < settledBelow && *fell-p <= loneFallK*ex
	if !settling && !young && !lone {
		return false
	}
	if lone && !e.lone.on {
		e.lone = loneFall{on: true, u: u, at: now, ref: e.ref, anchor: e.anchor, doubt: e.doubt, youngErr: e.youngErr, asym: e.asym, asymErr: e.asymErr}
	}
	if !settling {
		e.youngErr += -p / 2
		e.suspect(u, -p, tolOther, now)
	}
	*fell -= p
	if u {
		e.ref.uRaw, e.ref.tu = used.minU+e.trend(used.tu), used.tu
	} else {
		e.ref.wRaw, e.ref.tw = used.minW-e.trend(used.tw), used.tw
	}
	if !settling {
		e.anchor = e.ref // in youngErr
	}
	return true
}

// recentWindow is the stretch of newest samples whose floors tell a clock
// move from a path move; settledBelow of them below a floor's reference
// make its fall a change rather than the minimum settling.
const (
	recentWindow = int64(5 * time.Second)
	recentMin    = 16
	recentMax    = 256
	settledBelow = 3
	// youngK times the floor's wander (floorwander.go) is how far a floor
	// may fall as convergence in the first window after a start.
	youngK = 8
	// youngWander times the two floors' bin-to-bin wander is added to the
	// bound in the first window, slowWander times their slow wander always.
	youngWander = 2
	slowWander  = 1
)

// recentSummary describes the newest samples (recentWindow of them, at
// least recentMin): their floors, how many there were, and how many lie
// below the given thresholds in each direction.
type recentSummary struct {
	mu, mw         int64
	k              int
	belowU, belowW int
	// The floors of the newest recentMin samples alone: a clock that has
	// just started to move shows there first.
	su, sw int64
}

func (e *Estimator) recent(now, thrU, thrW int64) recentSummary {
	r := recentSummary{mu: math.MaxInt64, mw: math.MaxInt64, su: math.MaxInt64, sw: math.MaxInt64}
	for ; r.k < min(e.n, recentMax); r.k++ {
		i := e.at(e.n - 1 - r.k)
		if r.k >= recentMin && now-e.t[i] > recentWindow {
			break
		}
		u, w := e.ud[i], e.wd[i]
		r.mu, r.mw = min(r.mu, u), min(r.mw, w)
		if r.k < recentMin {
			r.su, r.sw = min(r.su, u), min(r.sw, w)
		}
		if u < thrU {
			r.belowU++
		}
		if w < thrW {
			r.belowW++
		}
	}
	return r
}

// clockExplains reports whether the recent floors move the two directions
// apart by about as much as the window's one-sided move (pU, pW): a clock
// that slews, not a path that changed.
func (e *Estimator) clockExplains(rec recentSummary, ru, rw, pU, pW, tolU, tolW int64) bool {
	// A round trip that has been moving the way of the fall says it is
	// the path's, whatever the other side's few newest samples show
	// (rtttrend.go).
	if e.rttTrends(pU, pW, tolU, tolW) {
		return false
	}
	// The minimum of k samples sits about n/k spacings above the floor.
	// The spacing is the smaller of now's and the reference's, as it
	// swells while old samples leave the window. The drift's error is no
	// part of it: it moves the two floors oppositely, as the clock does.
	scale := int64(max(1, e.n/max(1, rec.k)))
	tU := max(tolMin, 4*scale*min(e.spU, e.ref.spU))
	tW := max(tolMin, 4*scale*min(e.spW, e.ref.spW))
	dU, dW := rec.mu-ru, rec.mw-rw
	// The rising side may show the move only in its newest samples
	// (their minimum sits higher above the floor: n/recentMin spacings).
	if short := int64(max(1, e.n/recentMin)); true {
		if d := rec.sw - rw; abs64(pU) > tolU && d > dW {
			dW, tW = d, max(tW, 4*short*min(e.spW, e.ref.spW))
		}
		if d := rec.su - ru; abs64(pW) > tolW && d > dU {
			dU, tU = d, max(tU, 4*short*min(e.spU, e.ref.spU))
		}
	}
	// The other direction's recent floor moved the opposite way by about
	// as much as this one's window floor.
	// (At least half as much, whatever the noise allows: a path that
	// changed leaves the other direction where it was.)
	// The rising side's window floor may have begun to follow too, as the
	// samples from before the move leave the window.
	switch {
	case uMoves(pU, pW, tolU, tolW):
		return (dU < 0) == (pU < 0) && (dW < 0) != (pU < 0) && 2*abs64(dW) >= abs64(pU) && abs64(dW+pU) <= tU+tW
	case uMoves(pW, pU, tolW, tolU):
		return (dW < 0) == (pW < 0) && (dU < 0) != (pW < 0) && 2*abs64(dU) >= abs64(pW) && abs64(dU+pW) <= tU+tW
	}
	return false
}

// uMoves reports whether the move is the uplink floor's (pU, beyond its
// tolerance tolU): the downlink's stays within its own, or moves the other
// way by less.
func uMoves(pU, pW, tolU, tolW int64) bool {
	return abs64(pU) > tolU && (abs64(pW) <= tolW || (pU < 0) != (pW < 0) && abs64(pW) < abs64(pU))
}

// samePath renews the reference of a path that has not changed now and
// then, so that it follows the clock (the drift's error) and the floors'
// convergence — but never continuously: a gradual one-sided move must add
// up to a change.
func (e *Estimator) samePath(used scanned, tolU, tolW, now int64) Event {
	if now-e.ref.at >= refEvery {
		e.ref = e.makeRef(used, tolU, tolW, now)
		e.remember(e.ref)
	}
	return EventNone
}

// holdErr is the offset's statistical error bound now (without A's error),
// or the hard bound before there is one.
func (e *Estimator) holdErr(now int64) int64 {
	if e.bound >= 0 {
		return e.bound
	}
	if e.est.Valid {
		return int64(e.est.ErrorBound) + int64(e.est.ErrorGrowthPPM*float64(max(0, now-int64(e.est.At)))/1e6)
	}
	return 0
}

// undoPathChangesSince takes back the path changes absorbed since client
// time t: a clock shift found later explains the moves they absorbed. That
// is an inference too: A keeps what it took back as its error, or pathErr
// where that is larger (what the path would have moved A by), in case they
// were the path after all.
func (e *Estimator) undoPathChangesSince(t, pathErr int64) {
	k := e.pathsSince(t)
	if k == e.pathLogN {
		return
	}
	e.undoPathChanges(k, e.pathLog[k%numPathLog].before, pathErr)
}

// undoPathChanges takes back the path changes from log index k on, back to
// the path state before them, as undoPathChangesSince does.
func (e *Estimator) undoPathChanges(k int, before pathRef, pathErr int64) {
	if e.jumpPaths && k <= e.jumpPathFrom {
		e.jumpPaths = false
	}
	was, wasErr := e.asym, e.asymErr
	e.asym, e.asymErr = before.asym, before.asymErr
	e.ref, e.anchor = before, before
	e.stats.PathChanges -= int64(e.pathLogN - k)
	e.pathLogN = k
	e.asymErr = max(wasErr, e.asymErr+max(abs64(was-e.asym), pathErr))
}

// pathMovedSince returns how far the path changes logged since t moved A.
func (e *Estimator) pathMovedSince(t int64) int64 {
	k := e.pathsSince(t)
	if k == e.pathLogN {
		return 0
	}
	return e.asym - e.pathLog[k%numPathLog].before.asym
}

// pathsSince returns the log index of the oldest path change still logged
// at or after t, or pathLogN if there is none.
func (e *Estimator) pathsSince(t int64) int {
	oldest := max(0, e.pathLogN-numPathLog)
	k := e.pathLogN
	for k > oldest && e.pathLog[(k-1)%numPathLog].at >= t {
		k--
	}
	return k
}

// pathTookClock returns how far the path changes since t moved A, when
// they moved it the way a clock move of the floors' change a−b (move)
// would, and by no more: part of that move, taken for the path; else 0.
func (e *Estimator) pathTookClock(t, move int64) int64 {
	dA := e.pathMovedSince(t)
	if dA == 0 || (dA > 0) != (move > 0) || abs64(dA) > abs64(move) {
		return 0
	}
	return abs64(dA)
}

// forgetPaths drops the remembered path states: after the clock jumped,
// shifted its rate or went unseen for a window, the floors they were seen
// at no longer compare with today's.
func (e *Estimator) forgetPaths() { e.knownN = 0 }

// driftSE is the drift's standard error, or the prior's before a fit.
func (e *Estimator) driftSE() float64 {
	if !e.fitted {
		return priorDriftSE
	}
	return e.rSE
}

// boundSE is the drift's standard error as the bound takes it: never less
// than the recent history's alone (see driftFit).
func (e *Estimator) boundSE() float64 {
	if !e.fitted {
		return priorDriftSE
	}
	return max(e.rSE, e.rSEBound)
}

// leaked is how far the floors fu, fw moved apart from the path state's
// own, the clock's part aside, by moves that each stayed within the
// tolerance: the reference's renewals and a floor settling let them into
// the offset one at a time, and together they can be a path's move (a
// one-way floor that ramps down over seconds, random:2382). The offset's
// error moves by half of it.
func (e *Estimator) leaked(fu, fw, tolU, tolW int64) int64 {
	au, aw := e.floorsAt(e.anchor)
	dU, dW := fu-au, fw-aw
	c := clockPart(dU, dW, max(tolU, e.anchor.tolU), max(tolW, e.anchor.tolW))
	return abs64((dU-c)-(dW+c)) / 2
}

// clockPart is the clock's part of the floors' moves dU, dW: equal and
// opposite, within the floors' tolerances and a quarter of the moves.
// Opposite moves of different sizes are two one-way changes (a handover
// moves each direction's floor by itself), not a clock step and a change.
func clockPart(dU, dW, tolU, tolW int64) int64 {
	if (dU < 0) == (dW < 0) || dU == 0 || dW == 0 || abs64(dU+dW) > tolU+tolW+max(abs64(dU), abs64(dW))/4 {
		return 0
	}
	c := min(abs64(dU), abs64(dW))
	if dU < 0 {
		c = -c
	}
	return c
}
