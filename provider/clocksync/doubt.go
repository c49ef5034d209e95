package clocksync

import (
	"math"
	"time"
)

// A floor that falls by itself is a path change only if the other floor did
// not rise by as much. A clock stepped back by less than the round trip
// shows first as one floor falling: the other side's rise hides in its
// jitter until enough samples have come, and the window's floor shows it
// only once the window has turned over. So a one-sided fall stays in doubt,
// with the bound widened by what the clock reading would move the offset,
// until the other side's samples since decide: one below half the rise
// proves the path; a rise beyond its noise proves the clock, and the change
// is taken back as a jump.

// doubt is a one-sided fall the path tracker took for a path change.
type doubt struct {
	on    bool
	fellU bool  // the uplink floor fell (else the downlink's)
	size  int64 // how far it fell
	tol   int64 // the other floor's own uncertainty
	// The other side's floor before the fall, raw (see pathRef).
	yRaw, ty int64
	at       int64 // client time of the change
	from     int64 // the path changes to take back if it was the clock
	last     int64 // client time of its newest part
	parts    int   // the falls it adds up
	first    int64 // the first one's size
	k        int   // samples since
	// The floors of the samples since, detrended, and their shortest
	// round trip (u + w); valid while minOK.
	mu, mw, mr int64
	minOK      bool
	// The samples stopped for a while just before: an interruption, as in
	// a handover or a re-route, which moves the path, not the clock.
	gap bool
	// The longest round trip before the fall, once found (longestBefore).
	longest   int64
	longestOK bool
	// The other side rose as a clock step makes it, after an interruption.
	clockLike bool
	// The path state before: its round trip, A and A's error. How far a
	// floor can fall is measured on them, not on the window's floors, which
	// mix samples from both sides of a step.
	rtt, asym, asymErr int64
	// The other side's level over the recentWindow before the fall, raw,
	// when it held steady clearly above its floor (a route flapped up, a
	// standing queue): a step lifts the other side from there, not from
	// its floor.
	preRaw, tPre int64
	preK         int
	preOK        bool
	// Of the other side's samples before the fall (seen), how many lay
	// within half the fall of its floor (near): what the path reading
	// expects among the samples since (quickstep.go).
	near, seen int
}

// floorPrec is how closely two floors' move is known: twice their
// spacings, and the timestamps' resolution.
func (e *Estimator) floorPrec() int64 {
	return 2*(e.spU+e.spW) + int64(50*time.Microsecond)
}

// doubtSettle is how long a fall assembled from parts must have stopped
// falling before the other side's rise decides it.
const doubtSettle = int64(2 * time.Second)

// doubtNoise scales the noise of the other side's minimum over k samples,
// n/k spacings above its floor, that a rise must exceed to prove the clock.
const doubtNoise = 6

// suspect puts a one-sided fall of size at client time now in doubt.
func (e *Estimator) suspect(fellU bool, size, tol, now int64) {
	if e.doubt.on {
		if e.doubt.fellU == fellU && (now-e.doubt.at < recentWindow || 4*size <= e.doubt.size) && e.doubt.parts < 8 &&
			max(e.doubt.size, size) > max(2*e.floorPrec(), int64(time.Millisecond)) {
			// The same floor falling further, moments later: one fall
			// seen in parts (a queue on that side drained meanwhile);
			// or by a fraction of the fall, however much later: the new
			// floor settling, on a jittery path, while the other side's
			// samples are still deciding. Only after a fall clearly
			// beyond the floors' precision (and a millisecond): a floor
			// that settles in small steps adds up to no step.
			e.doubt.size += size
			e.doubt.last = now
			e.doubt.parts++
			return
		}
		// Still undecided: it stays a possibility, one the next path
		// change's error must keep too.
		e.addAsymErr(2 * e.doubt.size)
	}
	// (A fall further than that direction's floor can fall is no path's,
	// interruption or not.)
	d := doubt{on: true, fellU: fellU, size: size, first: size, tol: tol, at: now, from: now, last: now, parts: 1,
		gap: e.recentGap() && e.pathCouldFall(fellU, size)}
	// The other side is measured from its floor before its own change, if
	// it changed a moment ago: a step can show first as that side's rise,
	// taken for a path change, and the fall is then the other half.
	before := e.ref
	if e.pathLogN > 0 {
		if last := e.pathLog[(e.pathLogN-1)%numPathLog]; now-last.at < recentWindow {
			before, d.from = last.before, last.at
		}
	}
	if fellU {
		d.yRaw, d.ty = before.wRaw, before.tw
	} else {
		d.yRaw, d.ty = before.uRaw, before.tu
	}
	bu, bw := e.floorsAt(before)
	// A's error as the floors tell it: its own, and twice the offset's.
	d.rtt, d.asym, d.asymErr = bu+bw, before.asym, before.asymErr+2*max(0, before.bound)
	fallen, floor := bw, bu
	if fellU {
		fallen, floor = bu, bw
	}
	e.levelBefore(&d, fallen-size/2, floor)
	if d.gap && e.resumedBefore(&d, fallen-size/2) {
		d.gap = false
	}
	e.nearFloorBefore(&d, floor, now)
	e.doubt = d
}

// resumedBefore reports whether the path had resumed, unmoved, after the
// newest silence and before the fall's first sample (below thr): a sample
// of the other side in between sat below half the rise the clock's
// reading needs. A move across an interruption shows on the first
// samples after it; one that comes later is no interruption's
// (random:10204 seed 3: a 0.7s loss burst 2.3s before a 19.7ms client
// step; the doubt waited on the path's reading for the rest of the run,
// 19.7ms of error). Not on floors whose slow wander (a queue's) is more
// than an eighth of the fall: the interruption is then all that keeps a
// queue's move, matched by chance, from deciding for the clock
// (random:219, 2017).
func (e *Estimator) resumedBefore(d *doubt, thr int64) bool {
	if 8*max(e.slowU, e.slowW) > d.size {
		return false
	}
	other := e.ud
	if d.fellU {
		other = e.wd
	}
	first := e.fallStart(d.fellU, thr, e.silentAt)
	if first < 0 {
		first = e.n - 1
	}
	ref := e.otherBefore(d)
	for k := first - 1; k >= 0 && e.t[e.at(k)] >= e.silentAt; k-- {
		if other[e.at(k)] < ref+d.size/2 {
			return true
		}
	}
	return false
}

// fallStart returns the window position of the earliest sample at or
// after client time since whose falling side (the uplink's if fellU) sat
// below thr, or -1 if none did.
func (e *Estimator) fallStart(fellU bool, thr, since int64) int {
	fallen := e.wd
	if fellU {
		fallen = e.ud
	}
	first := -1
	for k := e.n - 1; k >= 0 && e.t[e.at(k)] >= since; k-- {
		if fallen[e.at(k)] < thr {
			first = k
		}
	}
	return first
}

// otherBefore returns the other side's floor before the doubted fall,
// detrended as the window's samples are now.
func (e *Estimator) otherBefore(d *doubt) int64 {
	if d.fellU {
		return d.yRaw + e.trend(d.ty)
	}
	return d.yRaw - e.trend(d.ty)
}

// levelBefore finds the other side's level over the recentWindow before
// the first sample that fell below thr (the fall's start), and keeps it in
// d when it held steady (the two halves' minima agree within their noise)
// clearly above the floor it had before.
func (e *Estimator) levelBefore(d *doubt, thr, floor int64) {
	other := e.ud
	if d.fellU {
		other = e.wd
	}
	first := e.fallStart(d.fellU, thr, e.t[e.at(e.n-1)]-2*recentWindow)
	if first <= 0 {
		return
	}
	start := e.t[e.at(first)]
	older, newer := int64(math.MaxInt64), int64(math.MaxInt64)
	var at int64 // when the lower of the two was seen
	kp := 0
	for k := first - 1; k >= 0 && start-e.t[e.at(k)] <= recentWindow; k-- {
		i := e.at(k)
		v := other[i]
		if start-e.t[i] > recentWindow/2 {
			older = min(older, v)
		} else {
			newer = min(newer, v)
		}
		if v <= min(older, newer) {
			at = e.t[i]
		}
		kp++
	}
	if kp < 2*recentMin || older == math.MaxInt64 || newer == math.MaxInt64 {
		return
	}
	sp := e.spU
	if d.fellU {
		sp = e.spW
	}
	// Each half's minimum sits up to its noise above the level.
	noise := doubtNoise * int64(max(1, 2*e.n/kp)) * sp
	prec := e.floorPrec()
	level := min(older, newer)
	if abs64(older-newer) > prec+noise || level-floor <= prec+noise {
		return
	}
	d.preK, d.preOK, d.tPre = kp, true, at
	if d.fellU {
		d.preRaw = level - e.trend(at)
	} else {
		d.preRaw = level + e.trend(at)
	}
}

// weighDoubt looks at the newest sample's evidence and returns
// EventClockJump when it proves the doubted fall was the clock.
func (e *Estimator) weighDoubt() Event {
	d := &e.doubt
	if !d.on {
		return EventNone
	}
	d.k++
	k := min(d.k, e.n)
	// The floors since the fall, kept up to date sample by sample; scanned
	// again when the drift was refitted (the detrended values moved) or
	// samples since the fall have left the window.
	var mu, mw, mr int64
	if i := e.at(e.n - 1); d.minOK && d.k <= e.n {
		mu, mw, mr = min(d.mu, e.ud[i]), min(d.mw, e.wd[i]), min(d.mr, e.ud[i]+e.wd[i])
	} else {
		mu, mw = e.minDetrended(e.n-k, e.n)
		mr = e.shortestSince(k)
	}
	d.mu, d.mw, d.mr, d.minOK = mu, mw, mr, true
	rise, sp := mu-e.otherBefore(d), e.spU
	if d.fellU {
		rise, sp = mw-e.otherBefore(d), e.spW
	}
	// A clock step lifts the other side by the size of the fall, to
	// within both floors' precision, and its minimum over k samples sits
	// up to the noise above that. Less, or more beyond the noise, is the
	// path (a handover moves each floor by itself).
	prec := e.floorPrec()
	noise := doubtNoise * int64(max(1, e.n/k)) * sp
	// A fall longer than every round trip before it is no path's: its
	// direction's delay was at most each sample's round trip. Whatever the
	// other side shows yet, and however young the window (random:103 seed 2
	// at 1 Hz: a 2.5 s server step 10 s after a restart, the jump test not
	// armed again yet; the uplink's few samples since, behind a queue,
	// rose 23ms short of the fall, which read as the path: 1.25 s of error
	// for 15 s).
	if k >= e.cfg.JumpConfirm && d.size-prec > e.longestBefore(d) {
		e.doubtWasClock(k, 0)
		return EventClockJump
	}
	if rise < d.size-prec {
		// The other side fallen further than its whole delay is no path
		// of either reading but a clock step, whose restart drops the
		// doubt (dropDoubt); it proves nothing of the fall.
		if rise < 0 && !d.otherCouldFall(-rise) {
			return EventNone
		}
		if rise < d.size/2 || k >= recentMin {
			e.endDoubt()
		}
		return EventNone
	}
	// A fall deeper than that direction's whole delay before it is no
	// path's: with the other side risen too, the clock stepped — by at
	// least the fall, the rest of it perhaps still hidden behind a queue
	// on the falling side. (The path cannot have done it, so A keeps no
	// error for it.)
	if k >= recentMin && d.size > 4*prec && rise <= 2*d.size+prec+noise &&
		d.at-e.freshAt >= int64(e.cfg.Window) && !d.couldFall(d.size-prec) {
		e.doubtWasClock(k, 0)
		return EventClockJump
	}
	// A rise beyond the fall is no proof of the path while the fall may
	// still be showing: the falling side's minimum over the few samples
	// since sits above its new floor (a power-saving radio, a queue on
	// that side), and a further fall moments later adds to this one
	// (suspect). After that, it is.
	if rise > d.size+prec+noise {
		// Measured from the level the other side held just before the
		// fall (a route flapped up, a standing queue), the rise can be the
		// step's. Then the fall is the clock or the path, and nothing
		// here tells which: a jump restarts the window on the raised
		// level and costs half of it while it lasts (a return within the
		// window puts A back, reacquire.go), taking the path costs the
		// whole step for as long as the path holds. So a level raised by
		// no more than the fall is taken as the clock's; a higher one as
		// the path's, A keeping the clock's reading as its error
		// (endDoubt; random:348, a 1.6ms step during a 12ms flap, cost
		// 6.2ms as a jump).
		if d.preOK && k >= recentMin && !d.gap && noise <= d.size/4 && prec <= d.size/2 {
			var pre int64
			if d.fellU {
				pre = mw - (d.preRaw + e.trend(d.tPre))
			} else {
				pre = mu - (d.preRaw - e.trend(d.tPre))
			}
			preNoise := noise + doubtNoise*int64(max(1, e.n/d.preK))*sp
			if abs64(pre-d.size) <= prec+preNoise {
				d.clockLike = true
				// (random:79: a 5.7ms client step while the downlink's
				// route was flapped up 2.4ms, taken for the path: 5.4ms
				// of error for 13 minutes.) The round trip rose by the
				// level then, and by no more, as no clock moves it. And
				// no queue or handover can have made it: one fall, with
				// no path change just before (a drain shows in parts),
				// on floors whose slow wander (a queue's, floorwander.go)
				// is an eighth of it or less, and no interruption among
				// the newest samples. Queues and handovers matched the
				// level by chance without these: random:2239 (an uplink
				// bloat draining during a downlink flap), 7900
				// (correlated queues under a bloat), 4076 (a handover
				// during an uplink flap), 5216 at 20 Hz (a queue whose
				// slow wander was a quarter of the fall).
				if lvl := rise - pre; lvl <= d.size && abs64(d.mr-d.rtt-lvl) <= prec+preNoise &&
					d.parts == 1 && d.from == d.at && 8*max(e.slowU, e.slowW) <= d.size && !e.recentGap() {
					e.doubtWasClock(k, d.size)
					return EventClockJump
				}
			}
		}
		if e.t[e.at(e.n-1)]-d.last > recentWindow {
			// Taken for the path while the other side rose beyond the
			// fall, the fall may be a step's whose rest still hides in
			// the falling side's jitter: the state before it stays the one
			// last confirmed, and the bound counts the fall as leaked from
			// there (path.go) until the next path change.
			if j := e.pathsSince(d.from); !d.gap && j < e.pathLogN {
				e.anchor = e.pathLog[j%numPathLog].before
			}
			// The rise beyond the fall may be the clock's too, its fall
			// hidden on the falling side behind a level raised just before
			// (random:8331): it stays in the bound while it lasts
			// (hidden.go).
			if d.fellU {
				e.fellW = true
			} else {
				e.fellU = true
			}
			e.endDoubt()
		}
		return EventNone
	}
	if e.quickStep(k, rise, prec) {
		e.doubtWasClock(k, d.size)
		return EventClockJump
	}
	// Both readings must be told apart: the rise beyond what the floors'
	// precision and the noise allow without it.
	if k < recentMin || noise > d.size/4 || prec > d.size/2 || rise < d.size/2 {
		return EventNone
	}
	if d.gap {
		// The clock's reading, overruled by the interruption: should the
		// doubt end, A keeps it as its error.
		d.clockLike = true
		return EventNone
	}
	// The samples since are the restart's: a clock step leaves the round
	// trip where it was, and if none of them came back to it (a queue
	// built meanwhile), their floors are the queue's, not the path's
	// (hand-written dsl-upload: a 0.7 ms doubt decided 28 s later, inside
	// a 250 ms uplink bloat, restarted on it: 47 ms of error). Wait for
	// one that does.
	if d.mr-d.rtt > d.size+prec+noise {
		return EventNone
	}
	// A fall assembled from small parts (a queue on that side draining)
	// adds up to any size, and meets a rise the other side made by itself
	// (a route flap) by chance, to fall on past it moments later: wait
	// until it has stopped falling (hand-written dsl-upload, an uplink
	// bloat's drain during a downstream flap: seed 4 23.4 -> 7.4 ms). Not
	// while a rate is seen moving: a slew lowers one floor part by part
	// too, and its rise keeps pace (random:8742, 8963).
	if 2*d.first < d.size && e.t[e.at(e.n-1)]-d.last < doubtSettle && !e.bending && !e.slewing {
		return EventNone
	}
	// The other side rose with the fall: the clock stepped. No ping can
	// tell that from each floor moving by itself by the same amount, so A
	// keeps that possibility as its error.
	e.doubtWasClock(k, d.size)
	return EventClockJump
}

// longestBefore returns the longest round trip (u + w, which no clock
// moves) of the window's samples before the doubted fall, or MaxInt64 if
// there is none; found once per doubt (samples leave the window, none
// come before the fall).
func (e *Estimator) longestBefore(d *doubt) int64 {
	if d.longestOK {
		return d.longest
	}
	r, any := int64(0), false
	for k := 0; k < e.n; k++ {
		i := e.at(k)
		if e.t[i] >= d.at {
			break
		}
		r, any = max(r, e.u[i]+e.w[i]), true
	}
	if !any {
		r = math.MaxInt64
	}
	d.longest, d.longestOK = r, true
	return r
}

// shortestSince returns the shortest round trip (u + w, which no clock
// moves) of the newest k samples.
func (e *Estimator) shortestSince(k int) int64 {
	r := int64(math.MaxInt64)
	for j := max(0, e.n-k); j < e.n; j++ {
		i := e.at(j)
		r = min(r, e.ud[i]+e.wd[i])
	}
	return r
}

// doubtWasClock takes the doubted fall for a clock step: the path changes
// it was taken for are taken back and only the k samples since kept, as
// for a jump; A's error grows by aErr.
func (e *Estimator) doubtWasClock(k int, aErr int64) {
	d := &e.doubt
	d.on = false
	e.undoPathChangesSince(d.from, 0)
	// The restart compares the round trip with the one before the step,
	// which the window's floors, mixing both sides of it, understate.
	e.rttFloor = d.rtt
	rise := d.size // the uplink's, when the downlink fell (the client's clock stepped back)
	if d.fellU {
		rise = -rise
	}
	e.markJump(rise, -rise, e.sentAt(e.n-k))
	e.restart(k, min(d.at, e.t[e.at(e.n-k)]), -rise)
	e.forgetPaths()
	e.addAsymErr(aErr)
	e.acquire(acquireSamples)
	e.firstAcq = false
	e.stats.Jumps++
}

// couldFall reports whether the path can have made the doubted floor fall
// by size: no further than that direction's whole delay in the state
// before (see pathCouldFall).
func (d *doubt) couldFall(size int64) bool { return d.canFall(d.fellU, size) }

// otherCouldFall reports whether the path can have made the other side's
// floor fall by size, in the state before the doubted fall.
func (d *doubt) otherCouldFall(size int64) bool { return d.canFall(!d.fellU, size) }

// canFall is pathCanFall in the state before the doubted fall.
func (d *doubt) canFall(uFell bool, size int64) bool {
	return d.rtt <= 0 || pathCanFall(uFell, size, d.rtt, max(-d.rtt, min(d.rtt, d.asym)), d.asymErr)
}

// pathCouldFall reports whether the path can have made the uplink's floor
// (uFell) or the downlink's fall by size: no further than that direction's
// whole delay, which is at most (round trip ± (A + its error))/2. A clock
// step can move a floor by any amount.
func (e *Estimator) pathCouldFall(uFell bool, size int64) bool {
	return pathCanFall(uFell, size, e.rttFloor, e.asym, e.asymErr)
}

// pathCanFall reports whether a path of round trip rtt and asymmetry asym
// (within asymErr) can have made the uplink's floor (uFell) or the
// downlink's fall by size: by less than that direction's whole delay.
func pathCanFall(uFell bool, size, rtt, asym, asymErr int64) bool {
	if !uFell {
		asym = -asym
	}
	return 2*size < rtt+asym+asymErr
}

// gapSamples is how far back recentGap looks for an interruption.
const gapSamples = 32

// recentGap reports whether the newest samples came after an interruption:
// a silence, longer than gapLimit, that ended within the last gapSamples.
// Samples the stall gate set aside (a queue that swells) end no silence
// but count as heard: the path was never interrupted.
func (e *Estimator) recentGap() bool {
	if e.n < 2 || !e.silent {
		return false
	}
	return e.silentAt >= e.t[e.at(max(0, e.n-gapSamples))]
}

// riseAfterGapSamples is how many samples before a rise's first an
// interruption may have ended for riseAfterGap: the rise shows only once
// enough samples sit above the old floor, a few after the path moved.
const riseAfterGapSamples = 8

// riseAfterGap reports whether the newest span samples' rise began at an
// interruption: one ended no more than riseAfterGapSamples before the
// span's first sample and no later than its third. A handover moves both
// floors across its silence, one up and the other down, as a slew's start
// does over seconds; a rise that began there is taken for the clock only
// if it ramps within its span (rampsWithin). A loss burst during a slew
// that the rise merely followed (random:222 seed 4) still ramps.
func (e *Estimator) riseAfterGap(span int) bool {
	if !e.silent || span >= e.n {
		return false
	}
	first := e.n - span
	return e.silentAt >= e.t[e.at(max(0, first-riseAfterGapSamples))] && e.silentAt <= e.t[e.at(min(e.n-1, first+2))]
}

// gapLimit is how long a silence must last to be an interruption: four
// typical spacings of the window's samples, and at least 100ms.
func (e *Estimator) gapLimit() int64 {
	typical := int64(0)
	if e.n >= 2 {
		typical = e.span() / int64(e.n-1)
	}
	return max(4*typical, int64(100*time.Millisecond))
}

// endDoubt ends a doubt the other side's samples took for the path; one
// the clock's reading matched but an interruption overruled stays A's
// error.
func (e *Estimator) endDoubt() {
	if e.doubt.clockLike {
		// Into the reference state and the episode too: a path change
		// measures A's error from there.
		e.addAsymErr(2 * e.doubt.size)
	}
	e.doubt.on = false
}

// dropDoubt ends a doubt undecided: a restart of the window (a jump, a
// silence) drops the samples that would have decided it. A keeps the
// clock's reading as its error, unless the path change it doubted was
// taken back meanwhile (random:6849: a slew's first 2.9ms taken for a
// downlink fall moments before a server step; the step's restart kept A
// and dropped the doubt, 1.4ms of error under a bound of 1.2 for 18
// minutes).
func (e *Estimator) dropDoubt() {
	if e.doubt.on && e.pathsSince(e.doubt.at) < e.pathLogN {
		if e.doubt.clockLike {
			e.endDoubt()
			return
		}
		e.addAsymErr(e.doubt.size)
	}
	e.doubt.on = false
}
