package clocksync

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func TestScratchJit(t *testing.T) {
	p := &path{rng: rand.New(rand.NewPCG(1, 7)), offset: 11 * time.Second, driftPPM: 40,
		up: 20 * time.Millisecond, down: 20 * time.Millisecond, jitUp: uniform(24 * time.Millisecond), jitDn: uniform(24 * time.Millisecond)}
	e := newEst(t)
	for at := time.Duration(0); at < 600*time.Second; at += 100 * time.Millisecond {
		e.Observe(p.exchange(at))
		if ev := e.LastEvent(); ev != EventNone || at%(20*time.Second) == 0 {
			est := e.Estimate()
			fmt.Printf("%6.1f ev=%-12s err=%8.3f bound=%7.3f asym=%7.3f asymErr=%.3f r=%.1f pc=%d sp=%d/%d tol=%d/%d\n", at.Seconds(), ev, float64(errAt(est, p, at+44*time.Millisecond))/1e6, float64(est.ErrorBound)/1e6, float64(e.asym)/1e6, float64(e.asymErr)/1e6, e.r*1e6, e.stats.PathChanges, e.spU, e.spW, e.ref.tolU, e.ref.tolW)
		}
	}
}
