package clocksync

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func TestScratchDrain(t *testing.T) {
	p := &path{rng: rand.New(rand.NewPCG(7, 7)), offset: -4 * time.Second, driftPPM: 20,
		up: 15 * ms, down: 15 * ms, jitUp: exponential(ms), jitDn: exponential(ms)}
	e := newEst(t)
	for now := time.Duration(0); now < 6*time.Minute; now += 100 * ms {
		var q time.Duration
		switch s := now - 60*time.Second; {
		case s < 0:
		case s < 40*time.Second:
			q = s / 400
		case s < 100*time.Second:
			q = 100 * ms
		case s < 200*time.Second:
			q = 100*ms - (s-100*time.Second)/1000
		}
		p.up = 15*ms + q
		e.Observe(p.exchange(now))
		ev := e.LastEvent()
		if ev != EventNone || now%(5*time.Second) == 0 {
			est := e.Estimate()
			ru, rw := e.floorsAt(e.ref)
			fmt.Printf("%6.1f ev=%-12s st=%-8s err=%8.3f bound=%7.3f asym=%7.3f asymErr=%.3f r=%.1f ref=(%.3f,%.3f) fell=%d/%d tol=%d\n", now.Seconds(), ev, e.State(), float64(errAt(est, p, now+30*ms))/1e6, float64(est.ErrorBound)/1e6, float64(e.asym)/1e6, float64(e.asymErr)/1e6, e.r*1e6, float64(ru)/1e6, float64(rw)/1e6, e.ref.fellU, e.ref.fellW, e.ref.tolU)
		}
	}
}
