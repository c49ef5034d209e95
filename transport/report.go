package transport

import (
	"fmt"
	"time"

	"github.com/netclock/netclock/internal/debugpage"
	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/provider/clocksync"
)

// SyncReport is a client's sync quality as the client reported it: each
// client attaches one to about one ping a second, so the server knows
// every client's clock (ClientInfo.Report, Server.DebugHandler).
type SyncReport struct {
	// At is the server clock when the report arrived.
	At time.Duration
	// Synchronized is the client's ClientStats.Synchronized.
	Synchronized bool
	// State is the client's estimator state.
	State clocksync.State
	// Quality is the client's connection quality.
	Quality Quality
	// Loss is the fraction of the client's last 100 pings that got no
	// pong (0 to 1, in steps of 0.001).
	Loss float64
	// ErrorBound, Jitter, Uplink and Downlink are the client's estimate's
	// (see provider.Estimate), to the microsecond.
	ErrorBound, Jitter, Uplink, Downlink time.Duration
	// Lead is how far the client's predicted time runs ahead of shared
	// time (its uplink plus its provider's server buffer, less what is
	// still being slewed); InterpolationDelay how far its server time
	// runs behind shared time (downlink plus client buffer). To the
	// microsecond.
	Lead, InterpolationDelay time.Duration
	// Offset is the client's estimate of the server clock minus its own.
	Offset time.Duration
	// DriftPPM is the estimated drift of the server clock against the
	// client's, in ppm (to 0.001 ppm).
	DriftPPM float64
	// PredictedScale and ServerScale are the client's time scales (1 is
	// nominal; see ClientStats).
	PredictedScale, ServerScale float64
	// Resets counts the client System's reset events.
	Resets int64
}

// syncReportOf converts a wire report that arrived at server time at.
func syncReportOf(r wire.Report, at time.Duration) SyncReport {
	return SyncReport{At: at, Synchronized: r.Synchronized, State: clocksync.State(r.State),
		Quality: Quality(r.Quality), Loss: float64(r.Loss) / 1e3, ErrorBound: r.ErrorBound, Jitter: r.Jitter,
		Uplink: r.Uplink, Downlink: r.Downlink, Lead: r.Lead, InterpolationDelay: r.Interp,
		Offset: r.Offset, DriftPPM: r.DriftPPM, PredictedScale: r.PredictedScale,
		ServerScale: r.ServerScale, Resets: int64(r.Resets)}
}

// wireReport is r as it travels.
func (r SyncReport) wireReport() wire.Report {
	return wire.Report{Synchronized: r.Synchronized, State: uint8(min(max(r.State, 0), wire.MaxState)),
		Quality: uint8(r.Quality), Loss: uint16(r.Loss*1e3 + 0.5), ErrorBound: r.ErrorBound,
		Jitter: r.Jitter, Uplink: r.Uplink, Downlink: r.Downlink, Lead: r.Lead, Interp: r.InterpolationDelay,
		Offset: r.Offset, DriftPPM: r.DriftPPM, PredictedScale: r.PredictedScale,
		ServerScale: r.ServerScale, Resets: uint32(min(max(r.Resets, 0), 1<<32-1))}
}

// sample is r as a history point at time t (ms on the page's clock); rtt
// is the estimate's round trip.
func (r SyncReport) sample(t int64) debugpage.Sample {
	return debugpage.Sample{T: t, Offset: int64(r.Offset), RTT: debugpage.Micros(r.Uplink + r.Downlink),
		Uplink: debugpage.Micros(r.Uplink), Downlink: debugpage.Micros(r.Downlink),
		Jitter: debugpage.Micros(r.Jitter), Bound: debugpage.Micros(r.ErrorBound),
		Lead: debugpage.Micros(r.Lead), Interp: debugpage.Micros(r.InterpolationDelay),
		Drift: debugpage.Finite(r.DriftPPM), PredictedScale: debugpage.Finite(r.PredictedScale),
		ServerScale: debugpage.Finite(r.ServerScale), Resets: uint32(min(max(r.Resets, 0), 1<<32-1)),
		Loss: uint16(r.Loss*1e3 + 0.5), State: uint8(min(max(r.State, 0), wire.MaxState)), Quality: uint8(r.Quality)}
}

// reportEvents appends to ev what changed from prev to r (the first
// report if !had), at page time t in seconds.
func reportEvents(ev *debugpage.Events, prev SyncReport, had bool, r SyncReport, t float64) {
	add := func(format string, a ...any) { ev.Add(debugpage.Event{T: t, What: fmt.Sprintf(format, a...)}) }
	if !had {
		add("first report: %s, quality %s, bound %v", r.State, r.Quality, r.ErrorBound)
		return
	}
	if r.Synchronized != prev.Synchronized {
		if r.Synchronized {
			add("synchronized")
		} else {
			add("not synchronized")
		}
	}
	if r.Quality != prev.Quality {
		add("quality %s → %s (bound %v, jitter %v, loss %.1f%%)", prev.Quality, r.Quality,
			r.ErrorBound, r.Jitter, r.Loss*100)
	}
	if r.State != prev.State {
		add("estimator %s → %s", prev.State, r.State)
	}
	if r.Resets > prev.Resets {
		add("%d reset(s) (%d in all)", r.Resets-prev.Resets, r.Resets)
	}
}
