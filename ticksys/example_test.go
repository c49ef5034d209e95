package ticksys_test

import (
	"fmt"
	"time"

	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/ticksys"
)

// A fixed-tick simulation loop: the game advances the system by each frame's
// real time, and the simulation steps once per tick, whatever the frame rate.
func Example() {
	sys, err := ticksys.New(ticksys.Config{TickRate: 30})
	if err != nil {
		panic(err)
	}
	position := 0.0
	cancel := sys.OnNetworkTick(func(ev ticksys.TickEvent) {
		velocity := 3.0 // units per second
		position += velocity * ev.Predicted.FixedDelta().Seconds()
		if ev.Predicted.Tick()%10 == 0 {
			fmt.Printf("tick %d: position %.2f\n", ev.Predicted.Tick(), position)
		}
	})
	defer cancel()
	sys.OnReset(func(ev ticksys.ResetEvent) {
		fmt.Printf("reset (%v): skipped %d ticks\n", ev.Reason, ev.Skipped)
	})

	// Frames of uneven length, as a real game loop has them.
	for _, frame := range []time.Duration{16, 17, 33, 16, 200, 8, 200, 16, 200, 100, 200} {
		sys.Advance(frame * time.Millisecond)
	}
	// A 10-second hitch: the system fires the newest ticks only and says so.
	sys.Advance(10 * time.Second)
	fmt.Println("now:", sys.PredictedTime())
	// Output:
	// tick 10: position 1.00
	// tick 20: position 2.00
	// tick 30: position 3.00
	// reset (stall): skipped 293 ticks
	// tick 330: position 3.70
	// now: 330+6ms@30Hz
}

// leadProvider is the RFC's sample custom provider: predicted time runs a
// fixed 100ms ahead of server time.
type leadProvider struct{}

func (leadProvider) AdvanceTime(predicted, server *nettime.Time, dt time.Duration) bool {
	*server = server.Add(dt)
	*predicted = server.Add(100 * time.Millisecond)
	return true
}

func (leadProvider) InitializeClient(predicted, server *nettime.Time) {
	*predicted = server.Add(100 * time.Millisecond)
}

// A custom provider plugs into the system in place of the built-in ones.
func Example_customProvider() {
	sys, err := ticksys.New(ticksys.Config{TickRate: 50, Provider: leadProvider{}})
	if err != nil {
		panic(err)
	}
	sys.Advance(time.Second)
	fmt.Println("server:   ", sys.ServerTime())
	fmt.Println("predicted:", sys.PredictedTime())
	// Output:
	// server:    50+0s@50Hz
	// predicted: 55+0s@50Hz
}

// A slow frame: the ticks that passed during it fire at once, each saying
// how late it is; the callback can skip optional work in catch-up ticks.
func ExampleTickEvent_CatchUp() {
	sys, err := ticksys.New(ticksys.Config{TickRate: 50}) // 20ms ticks
	if err != nil {
		panic(err)
	}
	sys.OnNetworkTick(func(ev ticksys.TickEvent) {
		fmt.Printf("tick %d late %v catch-up %v\n", ev.Predicted.Tick(), ev.Late, ev.CatchUp())
	})
	sys.Advance(20 * time.Millisecond) // on time
	sys.Advance(65 * time.Millisecond) // a 65ms frame
	// Output:
	// tick 1 late 0s catch-up false
	// tick 2 late 45ms catch-up true
	// tick 3 late 25ms catch-up true
	// tick 4 late 5ms catch-up false
}
