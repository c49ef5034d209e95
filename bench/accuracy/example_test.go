package main

import (
	"fmt"
	"os"
)

// Two seed systems on the fiber profile for 20 simulated seconds: the run
// is deterministic (virtual time, seed 1), so it prints the same table on
// every machine. go run ./bench/accuracy -profile fiber -duration 20s
// -warmup 5s -systems ngo,median11 prints it too.
func Example() {
	if err := run([]string{"-profile", "fiber", "-duration", "20s", "-warmup", "5s", "-systems", "ngo,median11"}, os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// profile fiber, seed 1, 20 s simulated
	//     system  kind  ping s  p50 ms  p99 ms  p99.9 ms  max ms  converge s  resets  bound cov  rate p99 ppm  reversals/min
	//        ngo  seed       1   3.750   9.983     9.999   9.999       19.15       0          -         10042         1600.0
	//   median11  seed       1   0.155   0.604     0.609   0.609        0.02       0          -           548           16.0
}
