package transport

import (
	"fmt"
	"time"

	"github.com/netclock/netclock/internal/debugpage"
	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/provider/clocksync"
)

// SyncReport is a client's sync state as it reports it in a ping, about
// once a second. Durations are to the microsecond.
type SyncReport struct {
	At                                           time.Duration   // the server clock at arrival
	Synchronized                                 bool            // ClientStats.Synchronized
	State                                        clocksync.State // the estimator's
	Quality                                      Quality
	Loss                                         float64       // of the last 100 pings, 0 to 1 (steps of 0.001)
	ErrorBound, Jitter, Uplink, Downlink, Offset time.Duration // the estimate (provider.Estimate)
	DriftPPM                                     float64       // in ppm, to 0.001
	Lead                                         time.Duration // predicted time's lead on shared time: uplink plus server buffer, less what is still slewed
	InterpolationDelay                           time.Duration // how far server time runs behind shared time
	PredictedScale, ServerScale                  float64       // as in ClientStats
	Resets                                       int64         // the System's reset events
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
