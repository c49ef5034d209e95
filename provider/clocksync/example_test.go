package clocksync_test

import (
	"fmt"
	"time"

	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/provider/clocksync"
)

// The estimator turns ping/pong samples into an estimate of the server
// clock. Here the server clock reads 5s ahead of the client's and the path
// takes 20ms each way, plus queueing on some pings: the queued ones don't
// move the estimate, because only the fastest pings define the floor.
func Example() {
	est, err := clocksync.New(clocksync.Config{})
	if err != nil {
		panic(err)
	}
	const offset = 5 * time.Second
	queue := []time.Duration{0, 30, 4, 0, 80, 12, 0, 55, 3, 0} // ms of queueing per ping
	for i, q := range queue {
		t1 := time.Duration(i) * 100 * time.Millisecond // client clock
		t2 := t1 + offset + 20*time.Millisecond + q*time.Millisecond
		t3 := t2 + 100*time.Microsecond // the server answers at once
		t4 := t3 - offset + 20*time.Millisecond
		if err := est.Observe(provider.Sample{ClientSend: t1, ServerReceive: t2, ServerSend: t3, ClientReceive: t4}); err != nil {
			panic(err)
		}
	}
	e := est.Estimate()
	fmt.Println("offset:", e.ServerTime(time.Second)-time.Second)
	fmt.Println("uplink floor + downlink floor:", e.Uplink+e.Downlink-e.Jitter)
	// Ten pings cannot show that the floor is tight yet: the bound is wide
	// and narrows as pings accumulate.
	fmt.Println("error bound:", e.ErrorBound.Round(time.Microsecond))
	// Output:
	// offset: 5s
	// uplink floor + downlink floor: 40ms
	// error bound: 11.715ms
}
