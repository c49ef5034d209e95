package main

import (
	"fmt"
	"time"
)

// The figures the attack report prints: the median (the upper one of an
// even count) and a quantile of the good clients' errors, and memory in
// MiB.
func Example() {
	errs := []time.Duration{40 * time.Microsecond, 90 * time.Microsecond, 50 * time.Microsecond, 70 * time.Microsecond}
	fmt.Println(median(errs), quantile(errs, 0.99), mib(12<<20+100<<10))
	// Output:
	// 70µs 90µs 12.1 MiB
}
