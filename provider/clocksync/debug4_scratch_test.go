package clocksync

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func TestScratchSlew(t *testing.T) {
	p := &path{rng: rand.New(rand.NewPCG(6, 6)), offset: -4 * time.Second, driftPPM: 20,
		up: 9 * time.Millisecond, down: 9 * time.Millisecond, jitUp: uniform(2 * time.Millisecond), jitDn: uniform(2 * time.Millisecond),
		slewFrom: 60 * time.Second, slewTo: 180 * time.Second, slewPPM: 500}
	e := newEst(t)
	for at := time.Duration(0); at < 300*time.Second; at += 100 * time.Millisecond {
		e.Observe(p.exchange(at))
		if ev := e.LastEvent(); ev != EventNone {
			est := e.Estimate()
			fmt.Printf("%6.1f ev=%-12s err=%8.3f bound=%7.3f asym=%7.3f r=%.1f pc=%d\n", at.Seconds(), ev, float64(errAt(est, p, at+18*time.Millisecond))/1e6, float64(est.ErrorBound)/1e6, float64(e.asym)/1e6, e.r*1e6, e.stats.PathChanges)
		}
	}
}
