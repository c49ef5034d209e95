package clocksync

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func TestScratchDrift(t *testing.T) {
	p := &path{rng: rand.New(rand.NewPCG(0, 7)), offset: 11 * time.Second, driftPPM: 500,
		up: 30 * time.Millisecond, down: 30 * time.Millisecond, jitUp: uniform(10 * time.Millisecond), jitDn: uniform(10 * time.Millisecond)}
	e := newEst(t)
	for at := time.Duration(0); at < 120*time.Second; at += 100 * time.Millisecond {
		e.Observe(p.exchange(at))
		ev := e.LastEvent()
		if ev != EventNone || at%(2*time.Second) == 0 {
			est := e.Estimate()
			fmt.Printf("%6.1f ev=%-12s err=%8.3f bound=%7.3f asym=%7.3f r=%.1fppm se=%.1f n=%d bins=%d\n", at.Seconds(), ev, float64(errAt(est, p, at+60*time.Millisecond))/1e6, float64(est.ErrorBound)/1e6, float64(e.asym)/1e6, e.r*1e6, e.rSE*1e6, e.n, e.binN)
		}
	}
}
