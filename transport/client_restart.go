package transport

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/provider"
)

// restartable is the provider of a client's System: a provider.Steered
// that, once a restarted server's estimate is in, holds it back until the
// System reinitializes, so the switch is one ReasonReinitialize and never a
// hard reset first. The System reinitializes at the start of its next
// Advance (ticksys.System.RequestReinitialize), on the goroutine of
// whatever advances it: Client.Run, System.Run or a game loop's
// System.Advance all see the same events.
type restartable struct {
	*provider.Steered
	log     *slog.Logger
	reinits atomic.Int64

	mu      sync.Mutex
	pending *provider.Estimate // the restarted server's, until InitializeClient
}

// restart holds e back until the System's next reinitialization.
func (r *restartable) restart(e provider.Estimate) {
	r.mu.Lock()
	r.pending = &e
	r.mu.Unlock()
}

// setEstimate steers by e, or holds it back while a restart is pending
// (the provider would otherwise step to it: a hard reset).
func (r *restartable) setEstimate(e provider.Estimate) {
	r.mu.Lock()
	if r.pending != nil {
		r.pending = &e
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.Steered.SetEstimate(e)
}

// InitializeClient implements provider.Provider: it first hands the
// provider a pending restart's estimate.
func (r *restartable) InitializeClient(predicted, server *nettime.Time) {
	r.mu.Lock()
	e := r.pending
	r.pending = nil
	r.mu.Unlock()
	if e != nil {
		r.Steered.SetEstimate(*e)
		r.reinits.Add(1)
		// Logged first: the reset event fires right after, and what waits
		// for it should find the log written.
		r.log.Info("netclock: reinitializing the system on the restarted server's clock", "offset", e.Offset)
	}
	r.Steered.InitializeClient(predicted, server)
}

var _ provider.Provider = (*restartable)(nil)
