package clocksync

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestSlowPingsAcquireNoLongerThanAtTenHz: the estimator's rules count
// samples, and were set at 10 Hz. Pinged at 1 Hz, a start's or a jump's
// acquisition of 64 samples took a minute, and a slew's 256 over four:
// blind to path changes all along, and after a slew to its end. When
// pings come at under half of 10 Hz, an acquisition now lasts no longer
// than its samples take at 10 Hz.
func TestSlowPingsAcquireNoLongerThanAtTenHz(t *testing.T) {
	tests := []struct {
		name  string
		event time.Duration // when the acquisition starts (true time)
		setup func(p *path)
		want  time.Duration // it is over by then after the event
	}{
		{"start", 0, func(*path) {}, 10 * time.Second},
		{"clock jump", 3 * time.Minute, func(p *path) { p.jumpAt, p.jumpBy = 3*time.Minute, 200*ms }, 10 * time.Second},
		{"slew", 3 * time.Minute, func(p *path) { p.slewFrom, p.slewTo, p.slewPPM = 3*time.Minute, 5*time.Minute, 400 }, 90 * time.Second},
	}
	for _, tt := range tests {
		for seed := uint64(1); seed <= 3; seed++ {
			p := &path{rng: rand.New(rand.NewPCG(seed, 70)), offset: 2 * time.Second, driftPPM: 15,
				up: 10 * ms, down: 10 * ms, jitUp: uniform(2 * ms), jitDn: uniform(2 * ms)}
			tt.setup(p)
			e := newEst(t)
			var began, ended time.Duration = -1, -1
			for at := time.Duration(0); at < 10*time.Minute && ended < 0; at += time.Second {
				if err := e.Observe(p.exchange(at)); err != nil {
					t.Fatal(err)
				}
				acq := e.State() == StateAcquire
				switch {
				case acq && began < 0 && at >= tt.event:
					began = at
				case !acq && began >= 0:
					ended = at
				}
			}
			if began < 0 || ended < 0 {
				t.Errorf("%s, seed %d: acquisition began at %v, ended at %v; want one that ends (stats %+v)", tt.name, seed, began, ended, e.Stats())
				continue
			}
			if d := ended - tt.event; d > tt.want {
				t.Errorf("%s, seed %d: acquiring until %v after the event, want <= %v", tt.name, seed, d, tt.want)
			}
		}
	}
}

// TestLostPingsDoNotCutAnAcquisitionShort: at 10 Hz with a third of the
// pings lost, 64 samples take over 9 s; the acquisition keeps them all
// (its rules want the samples), where one cut at the 6.4 s they take at
// 10 Hz ended on 40-45.
func TestLostPingsDoNotCutAnAcquisitionShort(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 71)), offset: -time.Second, driftPPM: -30,
			up: 20 * ms, down: 20 * ms, jitUp: exponential(2 * ms), jitDn: exponential(2 * ms)}
		loss := rand.New(rand.NewPCG(seed, 72))
		e := newEst(t)
		got := 0
		for at := time.Duration(0); at < time.Minute; at += 100 * ms {
			if loss.Float64() < 1.0/3 {
				continue
			}
			if err := e.Observe(p.exchange(at)); err != nil {
				t.Fatal(err)
			}
			got++
			if e.State() != StateAcquire {
				break
			}
		}
		if got < acquireSamples {
			t.Errorf("seed %d: the acquisition ended on sample %d, want %d", seed, got, acquireSamples)
		}
	}
}

// TestSlowPingsSeeASoftFloor: the soft floor's excess (softExcess) was read
// only off a window of 64 samples or more, which at 1 Hz a 60 s window
// never holds: on a floor whose density thins out toward it (two uniform
// jitters added), the bound never took it. It is read off 32 once the
// window spans nearly all of Window.
func TestSlowPingsSeeASoftFloor(t *testing.T) {
	tri := func(w time.Duration) func(*rand.Rand) time.Duration {
		return func(r *rand.Rand) time.Duration { return time.Duration(r.Int64N(int64(w)) + r.Int64N(int64(w))) }
	}
	for _, interval := range []time.Duration{time.Second, 100 * ms} {
		for seed := uint64(1); seed <= 3; seed++ {
			p := &path{rng: rand.New(rand.NewPCG(seed, 73)), offset: time.Second, driftPPM: 20,
				up: 5 * ms, down: 5 * ms, jitUp: tri(4 * ms), jitDn: tri(4 * ms)}
			e := newEst(t)
			run(t, e, p, 0, 3*time.Minute, interval, 0)
			if e.heldSoftU.v == 0 && e.heldSoftW.v == 0 {
				t.Errorf("pinged every %v, seed %d: no soft floor seen on either side", interval, seed)
			}
		}
	}
}
