package netsim_test

import (
	"fmt"
	"time"

	"github.com/netclock/netclock/netsim"
)

// One packet each way on a named profile: the uplink's floor is 40ms, the
// downlink's 10ms, and jitter adds under half a millisecond.
func Example() {
	p, ok := netsim.ProfileByName("fixed-asymmetry")
	if !ok {
		panic("no such profile")
	}
	up, down, err := p.NewLinks(1) // one seed fixes the whole run
	if err != nil {
		panic(err)
	}
	sent := time.Second // true time
	var arrivals []time.Duration
	for _, dir := range []struct {
		name string
		link *netsim.Link
	}{{"up", up}, {"down", down}} {
		arrivals = dir.link.SendAppend(arrivals[:0], sent) // none if lost, two if duplicated
		for _, at := range arrivals {
			fmt.Println(dir.name, (at - sent).Truncate(time.Millisecond))
		}
	}
	// Output:
	// up 40ms
	// down 10ms
}
