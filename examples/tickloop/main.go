// Command tickloop is netclock's first demo: a server and a client, each with
// a fixed-tick simulation loop, in one process and on the real monotonic
// clock. The client's clock disagrees with the server's by an offset and a
// drift, and it starts 80ms off; it learns the server clock from a clock
// estimate and its provider slews both of its timelines onto their targets
// without a hard reset, while every tick fires exactly once.
//
//	go run ./examples/tickloop [-duration 5s] [-rate 60]
//
// The clock estimate here is set by hand from the known offset: the network
// and the estimator that measure it come with the transport.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/ticksys"
)

func main() {
	duration := flag.Duration("duration", 5*time.Second, "how long to run")
	rate := flag.Uint("rate", 60, "tick rate in Hz")
	flag.Parse()
	if err := run(*duration, uint32(*rate)); err != nil {
		fmt.Fprintln(os.Stderr, "tickloop:", err)
		os.Exit(1)
	}
}

func run(duration time.Duration, rate uint32) error {
	start := time.Now()
	// The server's clock is its time since start; the client's clock reads
	// 42s behind it and runs 300 ppm slow.
	const offset = 42 * time.Second
	const driftPPM = 300.0
	clientClock := func() time.Duration {
		return time.Duration(float64(time.Since(start)) * (1 - driftPPM/1e6))
	}

	server, err := ticksys.New(ticksys.Config{TickRate: rate})
	if err != nil {
		return err
	}
	client, err := provider.NewSteered(provider.SteeredConfig{Clock: clientClock})
	if err != nil {
		return err
	}
	// What an estimator would report: offset, drift (the server runs ~300
	// ppm faster than this client), and one-way delays of 25ms up, 35ms down.
	estimate := provider.Estimate{Valid: true, At: 0, Offset: offset, DriftPPM: driftPPM,
		Uplink: 25 * time.Millisecond, Downlink: 35 * time.Millisecond}
	// Start 80ms off, as after a first rough estimate.
	first := estimate
	first.Offset += 80 * time.Millisecond
	client.SetEstimate(first)
	csys, err := ticksys.New(ticksys.Config{TickRate: rate, Provider: client})
	if err != nil {
		return err
	}
	client.SetEstimate(estimate)

	var serverTicks, clientTicks, resets int
	server.OnNetworkTick(func(ticksys.TickEvent) { serverTicks++ })
	csys.OnNetworkTick(func(ticksys.TickEvent) { clientTicks++ })
	csys.OnReset(func(ev ticksys.ResetEvent) {
		resets++
		fmt.Printf("reset: %v %v -> %v\n", ev.Reason, ev.OldPredicted, ev.NewPredicted)
	})

	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, ticksys.DriverConfig{}) }()
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			st := client.Status()
			fmt.Printf("%5.1fs  server tick %5d | client predicted tick %5d (%+8.3fms from target)  server tick %5d (%+8.3fms)  scale %.4f\n",
				time.Since(start).Seconds(), server.PredictedTime().Tick(),
				csys.PredictedTime().Tick(), -ms(st.PredictedError), csys.ServerTime().Tick(), -ms(st.ServerError), st.PredictedScale)
		}
	}()
	clientErr := csys.Run(ctx, ticksys.DriverConfig{}) // wakes at each of its predicted ticks
	serverErr := <-done
	if clientErr != context.DeadlineExceeded || serverErr != context.DeadlineExceeded {
		return fmt.Errorf("loops ended with %v, %v", clientErr, serverErr)
	}
	st := client.Status()
	fmt.Printf("\nserver fired %d ticks, client %d; %d resets; client timelines end %+.3fms / %+.3fms from their targets\n",
		serverTicks, clientTicks, resets, -ms(st.PredictedError), -ms(st.ServerError))
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
