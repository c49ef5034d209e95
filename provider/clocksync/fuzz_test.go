package clocksync

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// FuzzObservePath feeds a synthetic path with what the fuzzer picks: the
// jitter of each direction, a slew, a clock step at some sample and a
// one-way floor step at another. Whatever the sequence, the estimate stays
// valid, finite and its bound non-negative.
func FuzzObservePath(f *testing.F) {
	f.Add(uint64(1), int64(2e6), int64(5e6), int64(741e6), uint16(600), int64(3e6), uint16(900), int16(-216), uint16(300))
	f.Add(uint64(7), int64(0), int64(0), int64(-3879e6), uint16(400), int64(-2e6), uint16(390), int16(0), uint16(0))
	f.Fuzz(func(t *testing.T, seed uint64, jitUp, jitDn, step int64, stepAt uint16, floor int64, floorAt uint16, slewPPM int16, slewAt uint16) {
		jitUp, jitDn = jitUp%int64(time.Second), jitDn%int64(time.Second)
		if jitUp < 0 || jitDn < 0 {
			return
		}
		p := &path{rng: rand.New(rand.NewPCG(seed, 1)), offset: 3 * time.Second, driftPPM: 20,
			up: 10 * ms, down: 10 * ms, jitUp: uniform(time.Duration(jitUp)), jitDn: exponential(time.Duration(jitDn)),
			jumpAt: time.Duration(stepAt)*100*ms + 50*ms, jumpBy: time.Duration(step % int64(10*time.Second)),
			slewFrom: time.Duration(slewAt) * 100 * ms, slewTo: time.Duration(slewAt)*100*ms + 30*time.Second, slewPPM: float64(slewPPM % 1000)}
		e, _ := New(Config{})
		for k := range 2000 {
			now := time.Duration(k) * 100 * ms
			if k == int(floorAt) {
				p.down = max(ms, p.down+time.Duration(floor%int64(100*ms)))
			}
			if e.Observe(p.exchange(now)) != nil {
				continue
			}
			est := e.Estimate()
			if !est.Valid || est.ErrorBound < 0 || math.IsNaN(est.DriftPPM) || math.IsInf(est.DriftPPM, 0) ||
				math.IsNaN(est.ErrorGrowthPPM) || est.ErrorGrowthPPM < 0 {
				t.Fatalf("sample %d: estimate %+v", k, est)
			}
		}
	})
}
