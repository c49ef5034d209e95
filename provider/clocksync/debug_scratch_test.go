package clocksync

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func TestScratchStep(t *testing.T) {
	debugShift = func(a, b, c int64) {
		fmt.Printf("shift at %.1f du=%.3f dw=%.3f\n", float64(a)/1e9, float64(b)/1e6, float64(c)/1e6)
	}
	p := &path{rng: rand.New(rand.NewPCG(6, 6)), offset: -4 * time.Second, driftPPM: 20,
		up: 15 * time.Millisecond, down: 15 * time.Millisecond, jitUp: exponential(time.Millisecond), jitDn: exponential(time.Millisecond)}
	e := newEst(t)
	for at := time.Duration(0); at < 300*time.Second; at += 100 * time.Millisecond {
		if at >= 60*time.Second && at < 100*time.Second && at%(2*time.Second) == 0 {
			p.up += 5 * time.Millisecond
		}
		e.Observe(p.exchange(at))
		if at >= 69600*time.Millisecond && at < 69800*time.Millisecond && false {
			e.dumpBins()
		}
		ev := e.LastEvent()
		if ev != EventNone || at%(5*time.Second) == 0 {
			est := e.Estimate()
			ru, rw := e.floorsAt(e.ref)
			fmt.Printf("%6.1f ev=%-12s err=%8.3f bound=%7.3f asym=%7.3f asymErr=%6.3f ref=(%.3f,%.3f) r=%.1fppm sp=%.3f/%.3f\n", at.Seconds(), ev, float64(errAt(est, p, at+40*time.Millisecond))/1e6, float64(est.ErrorBound)/1e6, float64(e.asym)/1e6, float64(e.asymErr)/1e6, float64(ru)/1e6, float64(rw)/1e6, e.r*1e6, float64(e.spU)/1e6, float64(e.spW)/1e6)
		}
	}
}

func (e *Estimator) dumpBins() {
	for k := 0; k < e.binN; k++ {
		bn := e.bins[(e.binHead+k)%numBins]
		fmt.Printf("  bin %2d start=%.1f minU=%.3f minW=%.3f segU=%d segW=%d\n", k, float64(bn.start)/1e9, float64(bn.minU)/1e6, float64(bn.minW)/1e6, bn.segU, bn.segW)
	}
}
