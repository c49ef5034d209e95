package clocksync

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/netclock/netclock/provider"
)

// TestStraddlerAfterATakenJumpIsDropped: the client's clock steps back by
// nearly the round trip on a 233ms path pinged at 20 Hz, whose downlink has
// a long tail. A ping sent before the step whose downlink took long comes
// in after the jump is taken, the acquisition on the new clock under way:
// its uplink delta, of the old clock, sits a step below every new one, and
// taken for the uplink's floor it put half the step into the offset
// (random:4449 seed 5 at 20 Hz: 114ms of error under a bound of 3ms for
// 52s). The samples are fed in the order they arrive, as a client gets
// them. (On seeds 3, 10, 36 and 39 of this path one such ping comes in
// before the jump is taken, overtaken by the short ones the gate holds,
// and decides that they were the path's: 120ms of error, open. Taken as
// deciding nothing, it made two runs of random:1..2400 worse, with
// reordering.)
func TestStraddlerAfterATakenJumpIsDropped(t *testing.T) {
	for _, seed := range []uint64{38} {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			p := &path{rng: rand.New(rand.NewPCG(seed, 17)), offset: 3 * time.Second, driftPPM: -9,
				up: 116 * ms, down: 116 * ms, jitUp: uniform(1200 * time.Microsecond), jitDn: exponential(40 * ms),
				jumpAt: 600*time.Second + 17*ms, jumpBy: -228 * ms}
			type arrival struct {
				at time.Duration // true time the answer arrives
				s  provider.Sample
			}
			var all []arrival
			for now := time.Duration(0); now < 660*time.Second; now += 50 * ms {
				t2 := now + p.up + p.jitUp(p.rng)
				t4 := t2 + p.down + p.jitDn(p.rng)
				all = append(all, arrival{t4, provider.Sample{ClientSend: p.client(now), ServerReceive: t2, ServerSend: t2, ClientReceive: p.client(t4)}})
			}
			slices.SortFunc(all, func(a, b arrival) int { return int(a.at - b.at) })
			e := newEst(t)
			var worst time.Duration
			for _, a := range all {
				if e.Observe(a.s) != nil || a.at < 601*time.Second {
					continue
				}
				worst = max(worst, abs(errAt(e.Estimate(), p, a.at)))
			}
			if worst > 5*ms {
				t.Errorf("worst error %v from 1s after the step, want < 5ms", worst)
			}
		})
	}
}
