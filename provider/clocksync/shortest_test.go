package clocksync

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestBackToShortest: a path change whose floors have the shortest known
// state's round trip again takes that state's A, unless something says the
// path may have moved by itself.
func TestBackToShortest(t *testing.T) {
	sec := int64(time.Second)
	ref := func(u, w, asym time.Duration, at int64) pathRef {
		return pathRef{uRaw: int64(u), wRaw: int64(w), tolU: int64(ms), tolW: int64(ms), asym: int64(asym), at: at}
	}
	shortest := ref(20*ms, 20*ms, 0, 100*sec)
	queued := ref(35*ms, 20*ms, 15*ms, 200*sec) // the uplink's queue outlasted the window
	type setup struct {
		known    []pathRef
		before   pathRef
		fu, fw   time.Duration // the floors now
		asym     time.Duration // A as the change held the offset
		silentAt int64         // an interruption's end, 0: none
	}
	base := func() setup {
		// Back at the shortest round trip, the split 1ms from its (within
		// the drift's reach over 400s), A walked 8ms away.
		return setup{known: []pathRef{shortest, queued}, before: queued, fu: 21 * ms, fw: 19 * ms, asym: 8 * ms}
	}
	for _, tc := range []struct {
		name   string
		change func(*setup)
		want   bool
	}{
		{"back at the shortest round trip", func(*setup) {}, true},
		{"round trip still longer", func(s *setup) { s.fu = 26 * ms }, false},
		{"A already the shortest's", func(s *setup) { s.asym = ms }, false},
		{"split moved further than the drift reaches", func(s *setup) { s.fu, s.fw = 30*ms, 10*ms }, false},
		{"an interruption since", func(s *setup) { s.silentAt = 300 * sec }, false},
		{"an interruption before it", func(s *setup) { s.silentAt = 50 * sec }, true},
		{"the state being left", func(s *setup) { s.known, s.before = []pathRef{shortest}, shortest }, false},
		{"another as short with another A", func(s *setup) {
			s.known = append(s.known, ref(25*ms, 15500*time.Microsecond, 10*ms, 250*sec))
		}, false},
		{"another as short with the same A", func(s *setup) {
			s.known = append(s.known, ref(25*ms, 15500*time.Microsecond, 0, 250*sec))
		}, true},
		{"nothing known", func(s *setup) { s.known = nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.change(&s)
			e := newEst(t)
			e.fitted, e.rSE = true, 5e-6
			e.spU, e.spW = int64(ms)/8, int64(ms)/8 // soft floors: leftMatches does not apply
			e.knownN = copy(e.known[:], s.known)
			e.asym = int64(s.asym)
			e.silent, e.silentAt = s.silentAt != 0, s.silentAt
			used := scanned{minU: int64(s.fu), minW: int64(s.fw)}
			ru, rw := e.floorsAt(s.before)
			got, ok := e.backToShortest(used, s.before, ru, rw, used.minU-ru, used.minW-rw, int64(ms), int64(ms), 500*sec)
			if ok != tc.want {
				t.Fatalf("backToShortest = %v, want %v", ok, tc.want)
			}
			if ok && got.at != shortest.at {
				t.Errorf("took the state seen at %ds, want the shortest (%ds)", got.at/sec, shortest.at/sec)
			}
		})
	}
}

// TestRememberKeepsTheShortest: a full memory forgets its oldest state, but
// never the shortest one.
func TestRememberKeepsTheShortest(t *testing.T) {
	e := newEst(t)
	e.fitted, e.rSE = true, 1e-6
	at := func(k int) int64 { return int64(k+1) * int64(time.Minute) }
	for k := range numKnown {
		// Each a queue 3ms deeper than the last; the first, the oldest,
		// the shortest.
		d := int64(20*ms) + int64(k)*int64(3*ms)
		e.remember(pathRef{uRaw: d, wRaw: int64(20 * ms), tolU: int64(ms) / 10, tolW: int64(ms) / 10, at: at(k)})
	}
	e.remember(pathRef{uRaw: int64(80 * ms), wRaw: int64(20 * ms), tolU: int64(ms) / 10, tolW: int64(ms) / 10, at: at(numKnown)})
	var kept []int64
	for _, k := range e.known[:e.knownN] {
		kept = append(kept, k.at/int64(time.Minute))
	}
	slices.Sort(kept)
	want := []int64{1, 3, 4, 5, 6, 7, 8, 9} // the second oldest went
	if !slices.Equal(kept, want) {
		t.Errorf("kept the states of minutes %v, want %v", kept, want)
	}
}

// TestQueuesBothWaysComeBackToTheShortest: a queue in each direction that
// builds and drains over tens of seconds (busy-hour LTE, the lte-busy-hour
// profile) moves the floors one side at a time, each move held in A. Held
// across minutes of a drift the queues blur, A walked away and the offset
// with it: p99 17.3 ms by the median of seven seeds, 40.9 ms at worst. The
// floors' returns to the shortest round trip took its A back (14.2 and
// 24.2 ms). Since a doubt no longer restarts the window on samples a queue
// held all along (doubt.go), it is 21.4 and 46.7 ms: here those restarts,
// on samples since a fall of the queue, had helped by chance; over the
// random scenarios they cost far more than they gave (random:2194 39 →
// 11 ms). The limits hold the present figures.
func TestQueuesBothWaysComeBackToTheShortest(t *testing.T) {
	var p99s []float64
	for seed := uint64(1); seed <= 7; seed++ {
		p := &path{rng: rand.New(rand.NewPCG(seed, 77)), offset: -7 * time.Second, driftPPM: 27,
			up: 35 * ms, down: 35 * ms, jitUp: queue(20*ms, 15*ms, 20*time.Second), jitDn: queue(15*ms, 12*ms, 30*time.Second)}
		e := newEst(t)
		var errs []float64
		for now := time.Duration(0); now < 20*time.Minute; now += 100 * ms {
			if err := e.Observe(p.exchange(now)); err != nil {
				t.Fatal(err)
			}
			if now >= 2*time.Minute {
				errs = append(errs, math.Abs(float64(errAt(e.Estimate(), p, now+p.up+p.down))/1e6))
			}
		}
		slices.Sort(errs)
		p99s = append(p99s, errs[len(errs)*99/100])
	}
	slices.Sort(p99s)
	t.Logf("p99 |error| by seed: %.1f ms", p99s)
	if m, worst := p99s[len(p99s)/2], p99s[len(p99s)-1]; m > 22 || worst > 48 {
		t.Errorf("p99 |error| median %.1f ms, worst %.1f ms; want <= 22 and <= 48", m, worst)
	}
}
