package clocksync

import "math"

// A restart of the window (a clock jump, a rate change, a silence) takes
// the floors afresh with A unchanged: the path is assumed the same. The
// round trip says whether it was: it does not depend on the clocks, so a
// round-trip floor that differs from the one before the restart, by more
// than the fewer samples explain, is a path that changed meanwhile — and
// how it split between the directions is unknown. Until the reacquisition
// ends the bound carries half that change; after, A's error does. A round
// trip that moved and came back is the same path: A is what it was before.

// reacquisition is the state before a restart of the window.
type reacquisition struct {
	on       bool
	rtt      int64 // the round-trip floor before
	n        int   // samples in the window before
	spU, spW int64 // the floors' spacing before
	// A and its error before: what the path had, if it is the same.
	asym, asymErr int64
	// The round trip moved since the acquisition ended, by twice the
	// floors' precision.
	away bool
	// It sat further from the one before than the precision explains at
	// the last look; longer than it, at any look since the restart.
	awayNow, wasAway bool
	// A's error from a jump the path could have made (a handover).
	pathErr int64
	// The shortest round trip of a sample in the window before, and of
	// one since: u + w, which neither the clock's rate nor a step moves.
	rttMin, rttSince int64
	// The acquisition is over and A took its error; the floors' excess
	// still counts until the window has refilled.
	ended bool
	// The round trip's move A's error took when the acquisition ended.
	taken int64
	// The path state before the restart: the offset it gives is what the
	// offset still is if the path, not the clock, made the jump, whose
	// size (pathErr) is measured against it again once, when the
	// acquisition ends (remeasure).
	ref       pathRef
	remeasure bool
	// How far each floor had risen by itself before a jump, its old
	// floor still in the window (pending.go): the path's, if the round
	// trip still holds it when the acquisition ends. pendA is A at the
	// restart.
	pendU, pendW, pendA int64
}

// markRestart records the state before a restart of the window, unless a
// reacquisition is already under way (its state is the older, trusted one).
func (e *Estimator) markRestart() {
	if e.reacq.on {
		e.reacq.ended = false // a new acquisition, on the older state
		return
	}
	if !e.refSet || e.n < recentMin {
		return
	}
	// The spacing the path state was confirmed with: the newest bound's
	// may count the very samples that moved the clock (held out below a
	// floor, they are still in the window) and be that move's size.
	e.reacq = reacquisition{on: true, rtt: e.rttFloor, n: e.n, spU: min(e.spU, e.ref.spU), spW: min(e.spW, e.ref.spW),
		asym: e.asym, asymErr: e.asymErr, rttMin: math.MaxInt64, rttSince: math.MaxInt64, ref: e.ref, remeasure: true}
	for k := 0; k < e.n; k++ {
		i := e.at(k)
		e.reacq.rttMin = min(e.reacq.rttMin, e.u[i]+e.w[i])
	}
}

// shorterSinceRestart returns how far a sample's round trip since the
// restart fell below every one in the window before it, past the floors'
// precision: fewer samples only raise the shortest, and no clock moves
// u + w, so the path changed. The floors' round trip (rtt, the sum of
// two floors each detrended by a drift that a rate change leaves unknown)
// can hide it in the drift's tolerance: random:3813, a one-way floor
// ramping 1.85ms down during a slew, taken for the slew's rate and half
// of it kept as error (0.95ms under a bound of 0.87 for 6 minutes).
func (r *reacquisition) shorterSinceRestart() int64 {
	if r.rttMin == math.MaxInt64 || r.rttSince == math.MaxInt64 {
		return 0
	}
	fall := r.rttMin - r.rttSince
	if fall <= tolMin+4*(r.spU+r.spW) {
		return 0
	}
	return fall
}

// pathMovedSinceRestart returns what the bound carries, as it does A's
// error, of a path that may have moved since the restart: how far the
// round-trip floor rtt moved, if further than the floors' precision
// explains (the fewer samples since the restart sit higher above the
// floor), and until the window has refilled at least how far rtt sits
// above the floor before; 0 without a restart. When the acquisition ends,
// the move becomes A's error, and a round trip that moved and came back
// puts A back to what it was.
func (e *Estimator) pathMovedSinceRestart(rtt, tolU, tolW int64, changed bool) int64 {
	r := &e.reacq
	if !r.on {
		return 0
	}
	// A path change that takes a round trip that had moved since the
	// restart back to what it was before, within the floors' precision, is
	// the path back in the state it had then (a route flap that came on
	// with the jump, and went): A is what it was. Moved during the
	// acquisition counts too: a queue that came on with a suspend's jump
	// drains, the floor's drop ends the acquisition and reads as a path
	// change (random:5334 at 20 Hz: A took the drain, 7.4ms of error).
	tight := tolU + tolW + 4*(r.spU+r.spW)
	if r.ended && abs64(rtt-r.rtt) > 2*tight {
		r.away = true
	}
	if changed && (r.away || r.wasAway) && abs64(rtt-r.rtt) <= tight && e.asym != r.asym {
		err := r.asymErr
		if !r.away {
			// Back from a move seen only while acquiring, on floors of a
			// few samples: likely the same path, but A keeps what it
			// undoes as its error in case it was not.
			err = max(err, abs64(e.asym-r.asym))
		}
		e.takeAsym(r.asym, err)
	}
	i := e.at(e.n - 1)
	r.rttSince = min(r.rttSince, e.u[i]+e.w[i])
	shorter := r.shorterSinceRestart()
	scale := int64(max(1, r.n/max(1, e.n)))
	slack := tolU + tolW + 4*scale*(r.spU+r.spW)
	d := abs64(rtt - r.rtt)
	// Within the precision the path may be the same, and then the new
	// floors sit above the old ones by what the fewer samples left them:
	// the offset can be off by half that sum, which the spacing of a few
	// samples of a soft floor understates. It stays in the bound until
	// the window holds as many samples as before.
	over := max(0, rtt-r.rtt)
	if d <= slack {
		d = 0
	}
	d = max(d, shorter)
	wasAway := r.awayNow
	r.awayNow = d > 0
	// Longer, as behind a queue that came on with the jump; not shorter,
	// which no queue makes (random:3813's ramp: 68.6% taken for a return).
	r.wasAway = r.wasAway || rtt-r.rtt > slack
	if e.acquiring == 0 && !r.ended {
		held := false
		if p := r.pendU + r.pendW; p > 0 {
			// The rise pending at the jump was the path's if the round
			// trip still holds it, to within a quarter (a bloat may have
			// drained a part: random:9054 seed 1), and A takes it, half
			// of it as its error; else it ended meanwhile (random:8465
			// seed 4: a 28.6ms downlink flap that went back as a server
			// step came) or is draining (random:1476: a 285ms uplink
			// bloat, 42% of its rise gone; taken, A held it while the
			// drain was followed as the young window's convergence, 16 ->
			// 49ms). Only while A is as the restart left it: a return of
			// the round trip may have moved it already. (Taken at the
			// restart and put back here where the round trip did not hold
			// it, the rise cost the acquisition's seconds wherever it had
			// ended with the jump: random:12988 seeds 1 and 2, 0.1 -> 3.4
			// ms p99, two such jumps.)
			if held = 4*abs64(rtt-r.rtt-p) <= p && e.asym == r.pendA; held {
				d = 0
				e.takeAsym(e.asym+r.pendU-r.pendW, e.asymErr)
				e.addAsymErr(p / 2)
			}
			r.pendU, r.pendW = 0, 0
		}
		if !held && d == 0 && wasAway && e.asym != r.asym {
			// The round trip came back to what it was before the restart
			// as the acquisition ended (a queue or Wi-Fi power save that
			// came on with the jump, and went): the same path, whose A
			// holds again, not the change A took for it.
			e.takeAsym(r.asym, max(r.asymErr, e.asymErr))
		}
		e.addAsymErr(d)
		r.ended, r.taken = true, d
	}
	if r.ended && r.remeasure && r.pathErr > 0 {
		// The jump the path could have made, measured again on the
		// acquisition's floors rather than the few samples that showed
		// it: had the path made it, the offset is still the one the state
		// before gave, and off by all it moved (random:8123: a handover
		// taken for an 11.3ms jump whose first samples said 10.9).
		bu, bw := e.floorsAt(r.ref)
		moved := (e.floorU-e.floorW-e.asym)/2 - (bu-bw-r.ref.asym)/2
		r.pathErr, r.remeasure = max(r.pathErr, 2*abs64(moved)), false
	}
	if r.ended {
		if 8*e.n >= 7*r.n { // (lost pings leave it a few short)
			// The window holds as many samples as before: a round trip
			// that moved past half the floors' precision now says the
			// jump the path could have made was the path's, at least in
			// part. (Half: a clock keeps the round trip to within a few
			// spacings, while a handover on soft 5G floors moved it by
			// 1.5ms against a precision of 1.8ms, and dropping the
			// path's reading then left 7ms of error under 6ms.)
			if 2*abs64(rtt-r.rtt) > tight || shorter > 0 {
				e.addAsymErr(r.pathErr)
			}
			// As many samples leave the floors no higher than before, so
			// a round trip still apart by more than their precision is a
			// path that moved, split between the directions in a way no
			// ping tells: A keeps the move, less what it took when the
			// acquisition ended (random:9226: a downlink floor 3.3ms up,
			// not yet out of the window when a server step restarted it;
			// the acquisition's few samples explained the move, and A
			// kept none of it: 1.9ms of error under 1.5 for two minutes).
			// The shortest round trips, which no drift tilts, must agree:
			// the floors before a slew was seen, detrended at the old
			// rate, sit apart by as much as it moved them over the window
			// (clock-slew: its bound ×1.05 without).
			moved := abs64(rtt - r.rtt)
			if r.rttMin != math.MaxInt64 && r.rttSince != math.MaxInt64 {
				moved = min(moved, abs64(r.rttSince-r.rttMin))
			}
			if moved > tight {
				e.addAsymErr(max(0, moved-r.taken))
			}
			r.on = false
			return 0
		}
		return over + r.pathErr
	}
	return max(d, over) + r.pathErr
}

// takeAsym sets A and its error, in the reference state too: the next
// path change holds the offset from there.
func (e *Estimator) takeAsym(a, err int64) {
	e.asym, e.asymErr = a, err
	e.ref.asym, e.ref.asymErr = a, err
}

// addAsymErr adds to A's error, in the reference state and the episode
// too: a path change measures A's error from there.
func (e *Estimator) addAsymErr(d int64) {
	e.asymErr += d
	e.ref.asymErr += d
	e.episode.asymErr += d
	for k := 0; k < e.knownN; k++ {
		if e.known[k].at == e.ref.at {
			e.known[k].asymErr += d
		}
	}
}
