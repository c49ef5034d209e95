package jitnet_test

import (
	"fmt"

	"github.com/netclock/netclock/bench/jitnet"
)

// The server's counts of one client after a warm-up: 1188 inputs came
// before their tick, 12 after it (and their ticks ran without them), and 3
// never came.
func ExampleInputStats() {
	s := jitnet.InputStats{OnTime: 1188, Late: 12, Missing: 15}
	fmt.Printf("inputs on time %.1f%%, %d ticks without an input\n", 100*s.OnTimeRate(), s.Missing)
	// Output:
	// inputs on time 99.0%, 15 ticks without an input
}
