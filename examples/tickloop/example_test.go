package main

import (
	"fmt"
	"time"

	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/ticksys"
)

// What the demo does, in virtual time: a client whose first estimate is
// 80 ms off gets a better one, and its provider slews both timelines onto
// their targets, with no reset and every tick fired once.
func Example() {
	var now time.Duration
	client, err := provider.NewSteered(provider.SteeredConfig{Clock: func() time.Duration { return now }})
	if err != nil {
		fmt.Println(err)
		return
	}
	estimate := provider.Estimate{Valid: true, Offset: 42 * time.Second, Uplink: 25 * time.Millisecond,
		Downlink: 35 * time.Millisecond}
	first := estimate
	first.Offset += 80 * time.Millisecond
	client.SetEstimate(first)
	sys, err := ticksys.New(ticksys.Config{TickRate: 60, Provider: client})
	if err != nil {
		fmt.Println(err)
		return
	}
	client.SetEstimate(estimate)
	var last int64
	inOrder, resets := true, 0
	sys.OnNetworkTick(func(ev ticksys.TickEvent) {
		inOrder = inOrder && (last == 0 || ev.Predicted.Tick() == last+1)
		last = ev.Predicted.Tick()
	})
	sys.OnReset(func(ticksys.ResetEvent) { resets++ })
	for range 60 * 20 { // 20 s of 60 Hz frames
		now += time.Second / 60
		sys.Advance(time.Second / 60)
	}
	st := client.Status()
	fmt.Println("ticks in order:", inOrder, "resets:", resets)
	fmt.Println("on target within 1 ms:", st.PredictedError.Abs() < time.Millisecond && st.ServerError.Abs() < time.Millisecond)
	// Output:
	// ticks in order: true resets: 0
	// on target within 1 ms: true
}
