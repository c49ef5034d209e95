package netsim_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/netclock/netclock/netsim"
)

// A random scenario is a pure function of its seed; its description lists
// what was drawn.
func ExampleRandomProfile() {
	p := netsim.RandomProfile(4)
	fmt.Println(p.Name)
	fmt.Println(p.Validate() == nil)
	fmt.Println(strings.Split(p.Description, "; ")[0])
	// Output:
	// random-4
	// true
	// rtt 99.5ms (up 49.7ms, down 49.7ms)
}

// An empirical jitter from a histogram in the text format: the delay is the
// base plus a draw above the histogram's floor.
func ExampleParseHistogram() {
	h, err := netsim.ParseHistogram(strings.NewReader("3.0\t10\n3.5\t30\n4.0\t5\n6.0\t0\n"))
	if err != nil {
		panic(err)
	}
	spec := netsim.LinkSpec{Base: 10 * time.Millisecond, Jitter: netsim.JitterSpec{Kind: netsim.JitterEmpirical, Histogram: h}}
	l, err := netsim.NewLink(spec, netsim.DirUp, nil, 1)
	if err != nil {
		panic(err)
	}
	lo, hi := time.Hour, time.Duration(0)
	for i := range 1000 {
		now := time.Duration(i) * time.Millisecond
		d := l.Send(now)[0] - now
		lo, hi = min(lo, d), max(hi, d)
	}
	fmt.Println(h.Floor(), lo >= 10*time.Millisecond, hi < 13*time.Millisecond)
	// Output: 3ms true true
}
