package main

import "time"

// The table row of a measurement: 4 ticks at 60 Hz whose callbacks ran 0.1
// to 0.4 ms after their tick starts, one of them a catch-up, for 2 ms of CPU
// in 100 ms, while the hypervisor stole 1 of the machine's 40 clock ticks.
func Example() {
	r := result{late: []time.Duration{400 * time.Microsecond, 100 * time.Microsecond, 200 * time.Microsecond,
		300 * time.Microsecond}, catchUps: 1, cpu: 2 * time.Millisecond, wall: 100 * time.Millisecond,
		stolen: stolen{steal: 1, total: 40}}
	r.print(60)
	// Output:
	//     60       4   0.300ms   0.400ms   0.400ms   0.400ms   0.400ms        1     500µs   2.0%   2.5%
}
