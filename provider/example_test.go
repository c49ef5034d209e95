package provider_test

import (
	"fmt"
	"time"

	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/provider"
)

// A client provider steering toward an estimate of the server clock. In a
// game, transport feeds it estimates and ticksys calls AdvanceTime every
// frame; here both are done by hand.
func Example() {
	var now time.Duration // the client's clock, moved by hand here
	c, err := provider.NewSteered(provider.SteeredConfig{Clock: func() time.Duration { return now }})
	if err != nil {
		panic(err)
	}
	// The estimator's result: the server clock is 10s ahead of the
	// client's, 20ms away each way.
	est := provider.Estimate{Valid: true, Offset: 10 * time.Second,
		Uplink: 20 * time.Millisecond, Downlink: 20 * time.Millisecond}
	c.SetEstimate(est)

	// Predicted time runs the uplink and two ticks ahead of the server
	// clock, server time the downlink and one tick behind it.
	predicted, server := nettime.New(50, 0), nettime.New(50, 0)
	c.InitializeClient(&predicted, &server)
	fmt.Println("predicted", predicted, "server", server)

	// A new estimate puts the server 5ms further ahead: both times speed
	// up a little and close the gap smoothly.
	est.Offset += 5 * time.Millisecond
	c.SetEstimate(est)
	for range 3 {
		now += 20 * time.Millisecond
		c.AdvanceTime(&predicted, &server, 20*time.Millisecond)
		st := c.Status()
		fmt.Printf("scale %.4f, %v behind\n", st.PredictedScale, st.PredictedError)
	}

	// A step beyond HardResetThreshold (200ms) is not slewed: the times
	// jump, and AdvanceTime says so.
	est.Offset += 300 * time.Millisecond
	c.SetEstimate(est)
	now += 20 * time.Millisecond
	smooth := c.AdvanceTime(&predicted, &server, 20*time.Millisecond)
	fmt.Println("smooth", smooth, "predicted", predicted, "resets", c.Status().Resets)
	// Output:
	// predicted 503+0s@50Hz server 498+0s@50Hz
	// scale 1.0049, 4.902ms behind
	// scale 1.0048, 4.80596ms behind
	// scale 1.0047, 4.711841ms behind
	// smooth false predicted 522+5ms@50Hz resets 1
}

// The server's provider: time advances at exactly the real rate, and
// predicted time is server time.
func ExampleConstant() {
	var p provider.Provider = provider.Constant{}
	predicted, server := nettime.New(60, 0), nettime.New(60, 0)
	for range 60 {
		// Frames of exactly one tick each: 16.666667ms or 16.666666ms.
		p.AdvanceTime(&predicted, &server, server.FixedDelta())
	}
	fmt.Println(server, server.Duration(), predicted == server)
	// Output:
	// 60+0s@60Hz 1s true
}
