package interp_test

import (
	"fmt"
	"time"

	"github.com/netclock/netclock/interp"
	"github.com/netclock/netclock/nettime"
)

// A client adds each snapshot as it arrives and, every frame, asks for the
// state at its server time (ticksys.System.ServerTime), which runs behind
// the newest snapshot by the interpolation delay.
func Example() {
	type pos struct{ x float64 }
	buf, err := interp.New[pos](interp.Config{})
	if err != nil {
		panic(err)
	}
	const rate = 50 // 20ms ticks
	buf.Add(nettime.FromTick(rate, 100, 0), pos{0})
	buf.Add(nettime.FromTick(rate, 102, 0), pos{20}) // out of order: fine
	buf.Add(nettime.FromTick(rate, 101, 0), pos{10})

	for _, serverTime := range []nettime.Time{
		nettime.FromTick(rate, 100, 5*time.Millisecond),
		nettime.FromTick(rate, 101, 10*time.Millisecond),
		nettime.FromTick(rate, 103, 0), // past the newest: the buffer ran dry
	} {
		s := buf.At(serverTime)
		x := s.From.x + (s.To.x-s.From.x)*s.Frac
		fmt.Printf("%v: %v x=%.1f extrapolated %v\n", serverTime, s.Mode, x, s.Extrapolated)
	}
	// Output:
	// 100+5ms@50Hz: interpolate x=2.5 extrapolated 0s
	// 101+10ms@50Hz: interpolate x=15.0 extrapolated 0s
	// 103+0s@50Hz: extrapolate x=30.0 extrapolated 20ms
}
