package clocksync

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestStepHiddenInJitterIsTakenBack: the client clock steps back by less
// than the uplink's jitter. The downlink floor falls at once, the uplink's
// rise hides in its jitter, so the fall is first taken for a path change;
// the uplink's samples since then prove the clock, and the change is taken
// back as a jump. Meanwhile the bound covers the clock reading.
func TestStepHiddenInJitterIsTakenBack(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 96)), offset: time.Second, driftPPM: -25,
			up: 800 * time.Microsecond, down: 800 * time.Microsecond,
			jitUp: uniform(3600 * time.Microsecond), jitDn: uniform(200 * time.Microsecond),
			jumpAt: 5*time.Minute + 30*ms, jumpBy: -1700 * time.Microsecond}
		e := newEst(t)
		_, covered, total := feed(t, e, p, 0, 5*time.Minute, 20*time.Second, nil)
		c2, t2 := 0, 0
		_, c2, t2 = feed(t, e, p, 5*time.Minute, 6*time.Minute, 0, nil)
		covered, total = covered+c2, total+t2
		worst, _, _ := feed(t, e, p, 6*time.Minute, 8*time.Minute, 0, nil)
		if worst > 300*time.Microsecond {
			t.Errorf("seed %d: worst error %v from a minute after the step, want < 300µs", seed, worst)
		}
		if st := e.Stats(); st.Jumps != 1 {
			t.Errorf("seed %d: %d jumps, want 1 (stats %+v)", seed, st.Jumps, st)
		}
		wantCovered(t, covered, total, "seed %d", seed)
	}
}

// TestHandoverIsNotAClockStep: after an interruption both floors move,
// one down and the other up by about as much — what a clock step does too,
// but a step comes without an interruption. The path changed: the offset
// holds and no jump is taken.
func TestHandoverIsNotAClockStep(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 107)), offset: -3 * time.Second, driftPPM: 30,
			up: 30 * ms, down: 30 * ms, jitUp: exponential(ms), jitDn: uniform(ms)}
		e := newEst(t)
		feed(t, e, p, 0, 3*time.Minute, 0, nil)
		// An outage of 800ms, then the downlink is 8ms shorter and the
		// uplink 8ms longer.
		p.up, p.down = 38*ms, 22*ms
		worst, covered, total := feed(t, e, p, 3*time.Minute+800*ms, 6*time.Minute, 0, nil)
		if st := e.Stats(); st.Jumps != 0 {
			t.Errorf("seed %d: %d jumps after a handover, want 0 (stats %+v)", seed, st.Jumps, st)
		}
		if worst > time.Millisecond {
			t.Errorf("seed %d: worst error %v, want < 1ms", seed, worst)
		}
		wantCovered(t, covered, total, "seed %d", seed)
	}
}

// TestBoundNeverWiderThanTheRoundTrip: however many path changes widen
// A's error, the bound never exceeds what the newest samples alone allow:
// the offset lies between minus the downlink and the uplink.
func TestBoundNeverWiderThanTheRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	p := &path{rng: rand.New(rand.NewPCG(5, 6)), offset: 4 * time.Second, driftPPM: 50,
		up: 5 * ms, down: 5 * ms, jitUp: exponential(300 * time.Microsecond), jitDn: exponential(300 * time.Microsecond)}
	e := newEst(t)
	// Each direction's floor moves by itself every 20s. For a few seconds
	// after, the newest samples include the path before.
	var before time.Duration
	var movedAt time.Duration
	move := func(now time.Duration) {
		if now%(20*time.Second) == 0 && now > 0 {
			before, movedAt = p.up+p.down, now
			p.up = time.Duration(2+rng.IntN(6)) * ms
			p.down = time.Duration(2+rng.IntN(6)) * ms
		}
	}
	var widest time.Duration
	for now := time.Duration(0); now < 10*time.Minute; now += 100 * ms {
		move(now)
		if err := e.Observe(p.exchange(now)); err != nil {
			continue
		}
		if now < 20*time.Second {
			continue
		}
		// The hard bound: the round trip the newest samples allow (at
		// most both floors and the jitter's few ms), plus the margin for
		// drift.
		est := e.Estimate()
		widest = max(widest, est.ErrorBound)
		rtt := p.up + p.down
		if now-movedAt <= 5*time.Second+200*ms { // the newest 5 s, ends included
			rtt = max(rtt, before)
		}
		// A fresh fall in doubt is the one thing the bound carries beyond
		// the newest samples' hard bound: the clock's reading of it.
		lim := rtt + 5*ms
		if e.doubt.on && int64(p.client(now))-e.doubt.last <= recentWindow {
			lim += time.Duration(e.doubt.size)
		}
		if est.ErrorBound > lim {
			t.Fatalf("at %v: bound %v over the round trip's %v (stats %+v)", now, est.ErrorBound, lim, e.Stats())
		}
	}
	if e.Stats().PathChanges < 10 {
		t.Errorf("only %d path changes: the test did not exercise A's error", e.Stats().PathChanges)
	}
}

// TestStepShowingInPartsIsTakenBack: the client clock steps back by 40 ms
// while a 25 ms queue stands on the downlink; the queue drains 3 s later.
// The downlink floor shows the fall in two parts (15 ms, then 25 ms), the
// uplink the whole rise at once: a rise beyond the fall seen so far is no
// proof of the path, and the parts add up to the clock step.
func TestStepShowingInPartsIsTakenBack(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 149)), offset: 2 * time.Second, driftPPM: -12,
			up: 30 * ms, down: 30 * ms, jitUp: uniform(ms), jitDn: uniform(ms),
			jumpAt: 3*time.Minute + 50*ms, jumpBy: -40 * ms}
		queue := func(now time.Duration) {
			p.down = 30 * ms
			if now >= 2*time.Minute+55*time.Second && now < 3*time.Minute+3*time.Second {
				p.down += 25 * ms
			}
		}
		e := newEst(t)
		feed(t, e, p, 0, 3*time.Minute, 0, queue)
		feed(t, e, p, 3*time.Minute, 4*time.Minute, 0, queue)
		worst, covered, total := feed(t, e, p, 4*time.Minute, 6*time.Minute, 0, queue)
		if worst > 2*ms {
			t.Errorf("seed %d: worst error %v from a minute after the step, want < 2ms (stats %+v)", seed, worst, e.Stats())
		}
		wantCovered(t, covered, total, "seed %d", seed)
	}
}

// TestStallIsNoInterruption: samples the stall gate sets aside (a queue that
// swells for a second) leave a gap in the window but were heard: only a
// silence is an interruption, after which floor moves are taken for the
// path's.
func TestStallIsNoInterruption(t *testing.T) {
	tests := []struct {
		name    string
		stall   bool // the second's pings come back late (a swell), not at all
		wantGap bool
	}{
		{"swell", true, false},
		{"silence", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &path{rng: rand.New(rand.NewPCG(8, 8)), offset: time.Second, up: 10 * ms, down: 10 * ms,
				jitUp: uniform(ms), jitDn: uniform(ms)}
			e := newEst(t)
			feed(t, e, p, 0, 30*time.Second, 0, nil)
			for now := 30 * time.Second; now < 31*time.Second; now += 100 * ms {
				if !tc.stall {
					continue
				}
				s := p.exchange(now)
				s.ServerReceive += 300 * ms
				s.ServerSend += 300 * ms
				s.ClientReceive += 600 * ms
				if err := e.Observe(s); err != nil {
					t.Fatal(err)
				}
			}
			stalled := e.Stats().Stalled
			feed(t, e, p, 31*time.Second, 32*time.Second, 0, nil)
			if tc.stall && stalled == 0 {
				t.Fatalf("no sample was set aside as stalled")
			}
			if got := e.recentGap(); got != tc.wantGap {
				t.Errorf("recentGap() = %v, want %v", got, tc.wantGap)
			}
		})
	}
}

// TestStepAfterSilenceStaysInTheBound: the client clock steps back by less
// than the downlink's delay right after a second of lost pings. The floors move
// equally and oppositely, as a clock makes them, but after an interruption
// that is read as the path (a handover moves the floors too): the offset
// is held, and the bound must keep the clock's reading for as long as
// that lasts.
func TestStepAfterSilenceStaysInTheBound(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		p := &path{rng: rand.New(rand.NewPCG(seed, 12)), offset: time.Second, driftPPM: -42,
			up: 47 * ms, down: 47 * ms, jitUp: uniform(ms), jitDn: exponential(3 * ms),
			jumpAt: 61*time.Second + 30*ms, jumpBy: -40 * ms}
		e := newEst(t)
		feed(t, e, p, 0, 60*time.Second, 0, nil)
		// 60-61 s: every ping lost.
		_, covered, total := feed(t, e, p, 61*time.Second, 5*time.Minute, 0, nil)
		if c := float64(covered) / float64(total); c < 0.99 {
			t.Errorf("seed %d: bound covers %.2f%% of the error, want >= 99%% (stats %+v)", seed, 100*c, e.Stats())
		}
	}
}

// TestStepPastTheFloorIsTheClock: right after a second of lost pings, the
// client clock steps back by 57 ms on a path of 47 ms each way. Read as
// the path, the downlink would have got shorter than nothing: however
// recent the interruption, that is the clock, taken as a jump.
func TestStepPastTheFloorIsTheClock(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4, 5} {
		p := &path{rng: rand.New(rand.NewPCG(seed, 12)), offset: time.Second, driftPPM: -42,
			up: 47 * ms, down: 47 * ms, jitUp: uniform(ms), jitDn: exponential(3 * ms),
			jumpAt: 61*time.Second + 30*ms, jumpBy: -57 * ms}
		e := newEst(t)
		feed(t, e, p, 0, 60*time.Second, 0, nil)
		// 60-61 s: every ping lost.
		worst, _, _ := feed(t, e, p, 61*time.Second, 5*time.Minute, 2*time.Minute, nil)
		if st := e.Stats(); st.Jumps == 0 {
			t.Errorf("seed %d: no jump (stats %+v)", seed, st)
		}
		if worst > 2*ms {
			t.Errorf("seed %d: worst error %v a minute after the step, want < 2ms", seed, worst)
		}
	}
}

// TestFallSettlingInPartsStaysOneDoubt: after a clock step on a jittery
// path the falling floor goes on settling lower, in small parts, for longer
// than a recent window, while the other side's rise takes many samples to
// show (random:104: a 5.4 ms fall, then 0.3 ms 6.7 s later). A small
// further fall of the same floor is part of the fall in doubt; a new doubt
// in its place lost the clock's reading. A large one that late is a change
// of its own. A step whose first part is small (the first samples after it
// queued on the falling side: random:322, a 3 ms server step seen as 0.7 ms
// and then 2.1 ms) is one fall too; two small parts are a floor settling,
// which adds up to no step.
func TestFallSettlingInPartsStaysOneDoubt(t *testing.T) {
	for _, tc := range []struct {
		name      string
		first     int64
		after     time.Duration
		size      int64
		wantSize  int64
		wantParts int
	}{
		{"small, late", int64(5400 * time.Microsecond), 7 * time.Second, int64(300 * time.Microsecond), int64(5700 * time.Microsecond), 2},
		{"large, late", int64(5400 * time.Microsecond), 7 * time.Second, int64(3 * ms), int64(3 * ms), 1},
		{"large, soon", int64(5400 * time.Microsecond), 2 * time.Second, int64(3 * ms), int64(8400 * time.Microsecond), 2},
		{"small first part, large soon", int64(700 * time.Microsecond), time.Second, int64(2100 * time.Microsecond), int64(2800 * time.Microsecond), 2},
		{"small parts, soon", int64(300 * time.Microsecond), time.Second, int64(300 * time.Microsecond), int64(300 * time.Microsecond), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEst(t)
			e.suspect(true, tc.first, int64(ms), 0)
			e.suspect(true, tc.size, int64(ms), int64(tc.after))
			if got := e.doubt; !got.on || got.size != tc.wantSize || got.parts != tc.wantParts {
				t.Errorf("doubt %+v, want on, size %v, %d parts", got, time.Duration(tc.wantSize), tc.wantParts)
			}
		})
	}
}

// TestFallDeeperThanTheDelayIsTheClock: the client clock steps forward by
// less than the round trip while a queue holds the uplink. The downlink's
// floor rises by the step at once; the uplink's falls only as the queue
// drains, in parts, and never all of it within seconds — read side by
// side, a path change. But the uplink's floor falls further than its whole
// delay: no path does that, so the clock stepped (random:699).
func TestFallDeeperThanTheDelayIsTheClock(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 699)), offset: 2 * time.Second, driftPPM: 6,
			up: 35 * ms, down: 35 * ms,
			jitUp: queue(12*ms, 8*ms, 2*time.Second), jitDn: exponential(500 * time.Microsecond),
			jumpAt: 3*time.Minute + 40*ms, jumpBy: 60 * ms}
		e := newEst(t)
		feed(t, e, p, 0, 3*time.Minute, 0, nil)
		_, covered, total := feed(t, e, p, 3*time.Minute, 8*time.Minute, 0, nil)
		worst, _, _ := feed(t, e, p, 8*time.Minute, 10*time.Minute, 0, nil)
		if worst > 5*ms {
			t.Errorf("seed %d: worst error %v from 5 minutes after the step, want < 5ms (half the step is 30ms)", seed, worst)
		}
		if st := e.Stats(); st.Jumps == 0 {
			t.Errorf("seed %d: no jump (stats %+v)", seed, st)
		}
		wantCovered(t, covered, total, "seed %d", seed)
	}
}

// TestUndecidedDoubtStaysInTheReference: a fall still in doubt when
// another one comes stays a possibility, as A's error; the reference
// state and the episode keep it too, or the next path change, which
// measures A's error from there, drops it (random:881: 53 ms of A's error
// lost, coverage 55%).
func TestUndecidedDoubtStaysInTheReference(t *testing.T) {
	e := newEst(t)
	e.doubt = doubt{on: true, fellU: true, size: int64(3 * ms)}
	e.suspect(false, int64(2*ms), 0, int64(time.Minute))
	want := int64(6 * ms)
	if e.asymErr != want || e.ref.asymErr != want || e.episode.asymErr != want {
		t.Errorf("A's error %v, in the reference %v, in the episode %v; want %v in each",
			time.Duration(e.asymErr), time.Duration(e.ref.asymErr), time.Duration(e.episode.asymErr), time.Duration(want))
	}
	if !e.doubt.on || e.doubt.fellU || e.doubt.size != int64(2*ms) {
		t.Errorf("doubt %+v, want the new fall's", e.doubt)
	}
}

// TestStepDuringARaisedRouteStaysInTheBound: the client clock steps back
// while the uplink's route is flapped up (21ms longer for a minute). The
// downlink floor falls by the step, and the uplink rises by it from the
// raised level, far above its floor: against the floor the rise looks like
// no step's. The fall is the clock or a path change with the uplink
// rising by itself as much; no ping tells which, so whichever the
// estimator takes, its bound must cover the other.
func TestStepDuringARaisedRouteStaysInTheBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		seed uint64
		step time.Duration
	}{
		{"13ms", 1, -13 * ms},
		{"13ms again", 2, -13 * ms},
		{"8ms", 3, -8 * ms},
		{"18ms", 4, -18 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &path{rng: rand.New(rand.NewPCG(tc.seed, 3314)), offset: 6 * time.Second, driftPPM: 11,
				up: 11 * ms, down: 11 * ms, jitUp: exponential(60 * time.Microsecond), jitDn: exponential(100 * time.Microsecond),
				jumpAt: 4*time.Minute + 30*time.Second + 30*ms, jumpBy: tc.step}
			e := newEst(t)
			flap := func(now time.Duration) {
				if now >= 4*time.Minute && now < 5*time.Minute {
					p.up = 32 * ms
				} else {
					p.up = 11 * ms
				}
			}
			_, covered, total := feed(t, e, p, 0, 7*time.Minute, 20*time.Second, flap)
			if frac := float64(covered) / float64(total); frac < 0.99 {
				t.Errorf("bound covered %.2f%%, want >= 99%% (stats %+v)", 100*frac, e.Stats())
			}
		})
	}
}

// TestRestartKeepsAnUndecidedDoubt: a restart of the window (a jump, a
// silence) drops the samples that would decide a doubt. A keeps the
// clock's reading of the fall as its error, unless the path change it
// doubted was already taken back.
func TestRestartKeepsAnUndecidedDoubt(t *testing.T) {
	const size = int64(3 * ms)
	for _, tc := range []struct {
		name      string
		on        bool
		undone    bool
		clockLike bool
		restart   func(e *Estimator)
		want      int64
	}{
		{"jump", true, false, false, func(e *Estimator) { e.restart(e.n, int64(time.Minute), 0) }, size},
		{"silence", true, false, false, func(e *Estimator) { e.startAfresh() }, size},
		{"clock-like", true, false, true, func(e *Estimator) { e.restart(e.n, int64(time.Minute), 0) }, 2 * size},
		{"change taken back", true, true, false, func(e *Estimator) { e.restart(e.n, int64(time.Minute), 0) }, 0},
		{"no doubt", false, false, false, func(e *Estimator) { e.restart(e.n, int64(time.Minute), 0) }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEst(t)
			at := int64(time.Minute)
			e.pathLog[0] = pathEvent{at: at}
			e.pathLogN = 1
			if tc.undone {
				e.pathLogN = 0
			}
			e.doubt = doubt{on: tc.on, size: size, at: at, from: at, clockLike: tc.clockLike}
			tc.restart(e)
			if e.doubt.on {
				t.Error("the doubt is still on after the restart")
			}
			if e.asymErr != tc.want || e.ref.asymErr != tc.want {
				t.Errorf("A's error %v, in the reference %v; want %v", time.Duration(e.asymErr), time.Duration(e.ref.asymErr), time.Duration(tc.want))
			}
		})
	}
}

// TestDoubtIgnoresAFallNoPathMakes: the other side's floor falling by more
// than its whole delay is a clock step under way, not a sign that the
// doubted fall was the path's; a fall the path can make is.
func TestDoubtIgnoresAFallNoPathMakes(t *testing.T) {
	d := doubt{fellU: false, rtt: int64(17500 * time.Microsecond)}
	for _, tc := range []struct {
		fall time.Duration
		want bool
	}{
		{ms, true},
		{8 * ms, true},
		{9 * ms, false},
		{1670 * ms, false},
	} {
		if got := d.otherCouldFall(int64(tc.fall)); got != tc.want {
			t.Errorf("otherCouldFall(%v) on a 17.5ms round trip = %v, want %v", tc.fall, got, tc.want)
		}
	}
}

// TestRiseBeyondADoubtedFallStaysInTheBound: the uplink's route flaps up
// 23.7ms, and half a second later, a few pings lost, the client clock
// steps 30.5ms. Against its floor from before the flap the uplink fell by
// only 6.8ms, in doubt, while the downlink rose by the whole step; after
// the interruption the doubt ends as the path, and the downlink's rise
// waits for the window. The rise may be the clock's, its fall hidden behind
// the flap, so once the doubt has ended the bound keeps it while it lasts
// (random:8331: 30.5ms of error under 19.6 for 45s).
func TestRiseBeyondADoubtedFallStaysInTheBound(t *testing.T) {
	const step = 3 * time.Minute
	for seed := uint64(1); seed <= 8; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 83)), offset: 5 * time.Second, driftPPM: -32,
			up: 19500 * time.Microsecond, down: 19500 * time.Microsecond, jitUp: exponential(3 * ms), jitDn: uniform(8 * ms),
			jumpAt: step + 500*ms, jumpBy: 30500 * time.Microsecond}
		e := newEst(t)
		feed(t, e, p, 0, step, 0, nil)
		p.up += 23700 * time.Microsecond
		covered, total := 0, 0
		// Until the flap ends, before the downlink's rise leaves the window.
		for now := step; now < step+44*time.Second; now += 100 * ms {
			if now > step+400*ms && now < step+800*ms {
				continue // the pings lost around the step
			}
			if e.Observe(p.exchange(now)) != nil {
				continue
			}
			if now < step+10*time.Second {
				continue // the doubt, whose bound counts only the fall
			}
			est := e.Estimate()
			recv := now + p.up + p.down
			total++
			if abs(errAt(est, p, recv)) <= est.BoundAt(p.client(recv)) {
				covered++
			}
		}
		if frac := float64(covered) / float64(total); frac < 0.99 {
			t.Errorf("seed %d: bound covered %.2f%% once the doubt ended, want >= 99%% (stats %+v)", seed, 100*frac, e.Stats())
		}
	}
}

// TestStepAboveALowRaisedLevelIsAJump: the downlink's route flaps up
// 2.4ms, and 10s later the client clock steps forward 5.7ms. The downlink
// rises by the step from the raised level, as a step lifts it; against
// its floor, by more. Taken for the path, the offset would keep the whole
// step for as long as that path holds; taken for the jump it keeps half
// the raised level while the flap lasts (random:79: 5.4ms of error for 13
// minutes). (The uplink's floor moved 11.5ms a minute in, as there.)
func TestStepAboveALowRaisedLevelIsAJump(t *testing.T) {
	const step = 3*time.Minute + 10*time.Second
	const flapAt, flapEnd = step - 10*time.Second, step + 30*time.Second
	for seed := uint64(1); seed <= 8; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 79)), offset: -3 * time.Second, driftPPM: -23,
			up: 3900 * time.Microsecond, down: 3900 * time.Microsecond,
			jitUp: uniform(0), jitDn: exponential(1300 * time.Microsecond),
			jumpAt: step + 30*ms, jumpBy: 5700 * time.Microsecond}
		e := newEst(t)
		move := func(now time.Duration) {
			ramp := min(1, max(0, (now-62*time.Second).Seconds()/7.7))
			p.up = 3900*time.Microsecond + time.Duration(ramp*float64(11500*time.Microsecond))
			p.down = 3900 * time.Microsecond
			if now >= flapAt && now < flapEnd {
				p.down += 2400 * time.Microsecond
			}
		}
		_, covered, total := feed(t, e, p, 0, flapEnd+10*time.Second, 20*time.Second, move)
		worst, c2, t2 := feed(t, e, p, flapEnd+10*time.Second, 5*time.Minute, 0, move)
		covered, total = covered+c2, total+t2
		if worst > time.Millisecond {
			t.Errorf("seed %d: worst error %v from 10s after the flap, want < 1ms (stats %+v)", seed, worst, e.Stats())
		}
		wantCovered(t, covered, total, "seed %d", seed)
	}
}

// TestStepAfterLossIsAJump: a loss burst silences the pings for 700ms and
// the path resumes unmoved; 2.3s later the client clock steps by less than
// the round trip. The interruption came before the samples that show the
// path unmoved, so it is no handover's: the step is taken as a jump, not
// held as a possible path change for the rest of the run.
func TestStepAfterLossIsAJump(t *testing.T) {
	for _, tc := range []struct {
		seed uint64
		by   time.Duration
	}{{1, 19700 * time.Microsecond}, {2, -19700 * time.Microsecond}, {3, 12 * ms}, {4, -30 * ms}} {
		p := &path{rng: rand.New(rand.NewPCG(tc.seed, 41)), offset: 2 * time.Second, driftPPM: 117,
			up: 60 * ms, down: 60 * ms, jitUp: exponential(200 * time.Microsecond), jitDn: uniform(100 * time.Microsecond),
			jumpAt: 5*time.Minute + 3*time.Second, jumpBy: tc.by}
		e := newEst(t)
		feed(t, e, p, 0, 5*time.Minute, 0, nil)
		feed(t, e, p, 5*time.Minute+700*ms, 6*time.Minute, 0, nil)
		worst, covered, total := feed(t, e, p, 6*time.Minute, 8*time.Minute, 0, nil)
		if st := e.Stats(); st.Jumps != 1 {
			t.Errorf("step %v: %d jumps, want 1 (stats %+v)", tc.by, st.Jumps, st)
		}
		if worst > 500*time.Microsecond {
			t.Errorf("step %v: worst error %v from a minute after the step, want < 500µs", tc.by, worst)
		}
		wantCovered(t, covered, total, "step %v", tc.by)
	}
}
