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

// Adaptive buffers sized from the measured one-way delays, then corrected
// by the server's feedback. In a game the transport feeds both; here they
// are made up.
func ExampleAdaptive() {
	a, err := provider.NewAdaptive(provider.AdaptiveConfig{}) // 99% on time
	if err != nil {
		panic(err)
	}
	tick := time.Second / 60
	est := provider.Estimate{Valid: true, Uplink: 20 * time.Millisecond, Downlink: 25 * time.Millisecond}
	fmt.Println(a.State())
	// 100 pings: the uplink takes 20ms, 1 in 10 takes 40ms; the
	// downlink 25ms, 1 in 50 takes 60ms.
	for i := range 100 {
		up, down := 20*time.Millisecond, 25*time.Millisecond
		if i%10 == 0 {
			up = 40 * time.Millisecond
		}
		if i%50 == 0 {
			down = 60 * time.Millisecond
		}
		t1 := time.Duration(i) * 100 * time.Millisecond
		a.ObserveSample(provider.Sample{ClientSend: t1, ServerReceive: t1 + up, ServerSend: t1 + up,
			ClientReceive: t1 + up + down}, est)
	}
	server, client := a.Buffers(tick)
	// ServerBuffer: the 99th percentile of the uplink delays above the
	// estimate's uplink, and a tick for the game loop until the server's
	// feedback says how much of it is needed. ClientBuffer: the 99th
	// percentile of the downlink delays above its estimate, and a
	// snapshot interval (a tick).
	fmt.Println(a.State(), "ServerBuffer", server.Round(100*time.Microsecond), "ClientBuffer", client.Round(100*time.Microsecond))

	// The server says 3 of the last 128 inputs arrived late, 2.3%, where
	// 0.875% is aimed at: the lead widens by 5% of a tick.
	a.ObserveFeedback(provider.Feedback{Total: 128, Count: 128, Late: 3, P1: -4 * time.Millisecond,
		P5: 2 * time.Millisecond, P50: 15 * time.Millisecond})
	server, _ = a.Buffers(tick)
	fmt.Println(a.State(), "ServerBuffer", server.Round(100*time.Microsecond))
	// Output:
	// warmup
	// open-loop ServerBuffer 36.7ms ClientBuffer 51.7ms
	// closed-loop ServerBuffer 37.5ms
}

// A client telling its provider of the snapshots it receives: the default
// (adaptive) policy then sizes the interpolation delay from what the frames
// needed. Here the server sends a snapshot every 20ms tick, and each
// arrives 60ms after its tick began.
func ExampleSteered_ObserveSnapshot() {
	const tick = 20 * time.Millisecond
	var now time.Duration // the client's clock, moved by hand here
	policy, err := provider.NewAdaptive(provider.AdaptiveConfig{})
	if err != nil {
		panic(err)
	}
	c, err := provider.NewSteered(provider.SteeredConfig{Clock: func() time.Duration { return now }, Buffers: policy})
	if err != nil {
		panic(err)
	}
	// The server clock is 10s ahead of the client's, 30ms away each way.
	est := provider.Estimate{Valid: true, Offset: 10 * time.Second,
		Uplink: 30 * time.Millisecond, Downlink: 30 * time.Millisecond}
	c.SetEstimate(est)
	predicted, server := nettime.New(50, 0), nettime.New(50, 0)
	c.InitializeClient(&predicted, &server)

	next := time.Duration(0) // the next snapshot's tick start, server time
	for range 400 {          // 8s of frames
		now += tick
		c.AdvanceTime(&predicted, &server, tick)
		// The frame reads the snapshots that arrived: each stamped 60ms
		// before the server clock's reading now, or earlier.
		for ; next <= est.ServerTime(now)-60*time.Millisecond; next += tick {
			c.ObserveSnapshot(nettime.New(50, next))
		}
	}
	fmt.Println("sized", policy.Interp())
	// Server time runs the downlink (30ms) and ClientBuffer behind the
	// server clock: 60.5ms in all, what the frames needed and a margin.
	fmt.Println("client buffer", c.Status().ClientBuffer)
	// Output:
	// sized from-needs
	// client buffer 30.5ms
}
