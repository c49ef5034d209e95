package nettime_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/netclock/netclock/nettime"
)

func Example() {
	// 60 Hz ticks are 16.666667ms or 16.666666ms long, so that 60 of them
	// make exactly one second.
	t := nettime.New(60, time.Second+5*time.Millisecond)
	fmt.Println(t.Tick(), t.TickOffset(), t.FixedDelta())

	start := nettime.FromTick(60, 1, 0)
	fmt.Println(start.Duration(), start)

	fmt.Println(t.Add(20 * time.Millisecond))
	fmt.Println(nettime.New(60, -time.Nanosecond)) // floor: tick -1
	// Output:
	// 60 5ms 16.666667ms
	// 16.666667ms 1+0s@60Hz
	// 61+8.333333ms@60Hz
	// -1+16.666665ms@60Hz
}

func ExampleTime_TicksAgo() {
	t := nettime.New(60, time.Second+5*time.Millisecond)
	fmt.Println(t.TicksAgo(60))
	fmt.Println(t.TicksAgo(-1))

	// Tick 2 is a nanosecond shorter than tick 0: the offset is cut to fit.
	last := nettime.FromTick(60, 0, 16_666_666)
	fmt.Println(last, "->", last.TicksAgo(-2))
	// Output:
	// 0+5ms@60Hz
	// 61+5ms@60Hz
	// 0+16.666666ms@60Hz -> 2+16.666665ms@60Hz
}

func ExampleTime_MarshalJSON() {
	type snapshot struct {
		At nettime.Time `json:"at"`
	}
	b, _ := json.Marshal(snapshot{At: nettime.New(60, time.Second+5500*time.Microsecond)})
	fmt.Println(string(b))

	var back snapshot
	err := json.Unmarshal(b, &back)
	fmt.Println(back.At, back.At.Duration(), err)

	err = json.Unmarshal([]byte(`{"at":"1+20ms@60Hz"}`), &back)
	fmt.Println(err)

	// slog handlers print the same text form.
	log := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // keep the output stable
			}
			return a
		},
	}))
	log.Info("snapshot", "at", back.At)
	// Output:
	// {"at":"60+5.5ms@60Hz"}
	// 60+5.5ms@60Hz 1.0055s <nil>
	// nettime: malformed encoding: "1+20ms@60Hz": offset 20ms is not within tick 1 (16.666667ms long)
	// {"level":"INFO","msg":"snapshot","at":"60+5.5ms@60Hz"}
}
