package main

import (
	"fmt"
	"time"
)

// The latency histogram: every sample recorded once, its quantiles read
// back in microseconds (to the histogram's resolution).
func Example() {
	h := newHist()
	for i := 1; i <= 100; i++ {
		h.record(time.Duration(i) * 10 * time.Microsecond)
	}
	d := h.dist()
	fmt.Printf("count %d, min %.0f µs, max %.0f µs, mean %.0f µs\n", d.Count, d.MinUS, d.MaxUS, d.MeanUS)
	// Output:
	// count 100, min 10 µs, max 1000 µs, mean 505 µs
}
