package harness_test

import (
	"fmt"
	"time"

	"github.com/netclock/netclock/bench/harness"
	"github.com/netclock/netclock/netsim"
)

// netclock alone on a path whose uplink is 30ms longer than its downlink:
// no two-way method can see that, and the error is half of it.
func Example() {
	p, _ := netsim.ProfileByName("fixed-asymmetry")
	rep, err := harness.Run(harness.Options{Profile: p, Duration: 2 * time.Minute,
		Systems: []harness.System{harness.Netclock()}})
	if err != nil {
		panic(err)
	}
	r := rep.Results[0]
	fmt.Printf("%s: median |error| %.0f ms\n", r.System, r.SharedErrorMS.P50)
	// Output:
	// netclock: median |error| 15 ms
}
