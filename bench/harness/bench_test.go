package harness

import (
	"testing"
	"time"

	"github.com/netclock/netclock/netsim"
)

// BenchmarkRandomScenario runs every system on four random scenarios for
// 20 simulated minutes each: the cost of four suite runs.
func BenchmarkRandomScenario(b *testing.B) {
	for range b.N {
		for s := uint64(1); s <= 4; s++ {
			Run(Options{Profile: netsim.RandomProfile(s), Seed: 1, Duration: 20 * time.Minute, Systems: AllSystems()})
		}
	}
}
