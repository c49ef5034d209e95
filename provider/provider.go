// Package provider holds the Provider interface that advances predicted and
// server time each frame, the two providers netclock ships (Constant, the
// server's constant rate, and Steered, which steers a client toward a clock
// estimate: NGO's ServerNetworkTimeProvider and ClientNetworkTimeProvider),
// the Estimate and Sample types that carry clock-synchronization results,
// and the BufferPolicy that sizes a Steered provider's buffers (Adaptive, the
// default, sized from the measured one-way delays and the server's Feedback;
// FixedBuffers; or your own).
package provider

import (
	"time"

	"github.com/netclock/netclock/nettime"
)

// Provider decides how predicted and server time advance. It is the Go form of
// the Unity network-time RFC's INetworkTimeProvider: implement it to take full
// control of a timeline.
//
// Both times passed to a Provider have the same tick rate and must keep it.
type Provider interface {
	// AdvanceTime advances predicted and server time after dt of real time
	// has passed (dt >= 0). It returns false if it stepped the times instead
	// of advancing them smoothly (a hard reset); the caller reports that.
	// A provider that reads a clock of its own (Steered does) measures
	// elapsed time on it and treats dt as advisory, so that time has one
	// source of truth.
	AdvanceTime(predicted, server *nettime.Time, dt time.Duration) bool

	// InitializeClient sets the initial times of a client. On entry both
	// hold the server time the client starts from.
	InitializeClient(predicted, server *nettime.Time)
}

// Constant is the provider of the server, and of any peer whose time is the
// authority: both times advance at exactly the real rate and predicted time
// equals server time. Its zero value is ready to use.
type Constant struct{}

// AdvanceTime advances both times by dt and returns true.
func (Constant) AdvanceTime(predicted, server *nettime.Time, dt time.Duration) bool {
	*server = server.Add(dt)
	*predicted = *server
	return true
}

// InitializeClient sets predicted time to server time.
func (Constant) InitializeClient(predicted, server *nettime.Time) {
	*predicted = *server
}

var _ Provider = Constant{}
