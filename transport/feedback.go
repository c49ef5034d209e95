package transport

import (
	"sync"
	"time"

	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/provider"
)

// arrivals measures how early a client's stamped messages reach the server,
// relative to the start of the tick each is stamped for, and summarizes the
// last provider.FeedbackWindow of them for the client's pongs: the server's
// half of the adaptive lead (provider.Adaptive), as Netcode for Entities
// returns command ages. A fixed 2 KiB per client.
type arrivals struct {
	mu sync.Mutex
	w  provider.ArrivalWindow
}

// add records a message stamped stamp that arrived at server clock at;
// unstamped messages say nothing about the lead.
func (a *arrivals) add(stamp nettime.Time, at time.Duration) {
	if stamp.IsZero() {
		return
	}
	margin := stamp.FixedTime() - at
	a.mu.Lock()
	a.w.Add(margin)
	a.mu.Unlock()
}

// summary returns the window's summary.
func (a *arrivals) summary() provider.Feedback {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.w.Feedback()
}

// withFeedback adds the client's arrival summary to a pong, if any.
func (a *arrivals) withFeedback(p wire.Pong) wire.Pong {
	f := a.summary()
	if f.Count == 0 {
		return p
	}
	p.HasFeedback = true
	p.Feedback = wire.Feedback{Total: f.Total, Count: uint16(min(f.Count, 1<<16-1)), Late: uint16(min(f.Late, 1<<16-1)),
		P1: f.P1, P5: f.P5, P50: f.P50}
	return p
}

// feedbackFromWire is the provider's form of a pong's feedback.
func feedbackFromWire(f wire.Feedback) provider.Feedback {
	return provider.Feedback{Total: f.Total, Count: int(f.Count), Late: int(f.Late), P1: f.P1, P5: f.P5, P50: f.P50}
}
