package harness_test

import (
	"fmt"
	"time"

	"github.com/netclock/netclock/bench/harness"
	"github.com/netclock/netclock/netsim"
)

// A perfect network whose uplink takes 10 ms: sent exactly 10 ms before
// its tick, an input is on time (the tick-start oracle); a client sending
// at its frames needs a lead of 10 ms plus its frames' phase to the ticks
// (the frame oracle). netclock's fixed buffers put every input on time.
// Its adaptive buffers (models[0]) are measured too.
func ExampleBufferOptions() {
	p := netsim.Profile{Name: "ten-ms", Up: netsim.LinkSpec{Base: 10 * time.Millisecond},
		Down: netsim.LinkSpec{Base: 10 * time.Millisecond}}
	rep, err := harness.Run(harness.Options{Profile: p, Duration: time.Minute,
		Systems: []harness.System{harness.Netclock()}, Buffers: &harness.BufferOptions{}})
	if err != nil {
		panic(err)
	}
	r := rep.Results[0]
	fmt.Printf("tick-start oracle: send %.0f ms before the tick\n", *r.OracleTickSendLeadMS)
	fmt.Printf("frame oracle: lead %.0f ms, inputs %.0f ms early\n", *r.OracleSendLeadMS, *r.OracleLeadMS)
	b := r.Buffers[1]
	fmt.Printf("%s: %.0f%% on time, %.0f%% starved\n", b.Model, 100*b.InputsOnTime, 100*b.StarvedFrames)
	// Output:
	// tick-start oracle: send 10 ms before the tick
	// frame oracle: lead 17 ms, inputs 7 ms early
	// netclock-fixed: 100% on time, 0% starved
}

// The hindsight oracle over a handful of one-way delays (ms): 99% of five
// inputs on time needs all five.
func ExampleOracleLead() {
	fmt.Println(harness.OracleLead([]float64{12, 9, 30, 10, 11}, 0.99))
	fmt.Println(harness.OracleLead([]float64{12, 9, 30, 10, 11}, 0.8))
	// Output:
	// 30
	// 12
}
