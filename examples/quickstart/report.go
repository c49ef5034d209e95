package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/transport"
)

var nan = math.NaN()

// printTable prints the live table: per client, its idea of the current
// tick and how often it matched the server's, its true error against the
// bound it publishes, and where its two timelines run against the
// server's tick (predicted time ahead: inputs sent now are stamped for it;
// server time behind: remote state shown now is from it).
func printTable(w io.Writer, elapsed time.Duration, srv *transport.Server, peers []*peer) {
	rate := srv.TickRate()
	now := nettime.New(rate, srv.SharedTime()).Tick()
	fmt.Fprintf(w, "\n%4.0fs  server tick %d\n", elapsed.Seconds(), now)
	name := leftAlign(profileNames(peers))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\ttick\tsame tick\ttrue error ms\tbound ms\tin bound\tpredicted\tserver time\tRTT ms\tresets\t\n", name("client"))
	for _, p := range peers {
		c := p.client.Load()
		switch {
		case c == nil:
			// The state after the last cell, which tabwriter does not align.
			fmt.Fprintf(tw, "%s%s  connecting\n", name(p.profile.Name), strings.Repeat("\t-", 9)+"\t")
			continue
		case p.syncedAt.Load() < 0 || p.live.samples == 0:
			fmt.Fprintf(tw, "%s%s  syncing (%d pongs)\n", name(p.profile.Name), strings.Repeat("\t-", 9)+"\t",
				c.Stats().PongsReceived)
			continue
		}
		sys := c.System()
		shared, _ := c.SharedTime()
		fmt.Fprintf(tw, "%s\t%d\t%s\t%+.3f\t%.3f\t%s\t%+d ticks\t%+d ticks\t%.3f\t%d\t\n", name(p.profile.Name),
			nettime.New(rate, shared).Tick(), pct(p.live.pct(p.live.sameTick)), ms(p.last), ms(p.lastBnd),
			pct(p.live.pct(p.live.inBound)), sys.PredictedTime().Tick()-now, sys.ServerTime().Tick()-now,
			ms(c.Stats().RTT), p.resets.Load())
	}
	tw.Flush()
}

// summary is the outcome of a run; -json prints it as is.
type summary struct {
	DurationS float64         `json:"duration_s"`
	WarmupS   float64         `json:"warmup_s"`
	Seed      uint64          `json:"seed"`
	SampleHz  float64         `json:"sample_hz"`
	Server    serverSummary   `json:"server"`
	Clients   []clientSummary `json:"clients"`
}

type serverSummary struct {
	Tick     int64 `json:"tick"`
	Accepted int64 `json:"accepted"`
	Pings    int64 `json:"pings_answered"`
}

// percentiles of |true error|, in ms (nearest rank, as the harness).
type percentiles struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// clientSummary is one client's run; the figures after "Samples" are over
// the samples after the warm-up.
type clientSummary struct {
	Profile string `json:"profile"`
	Synced  bool   `json:"synced"`
	// SyncS is the time from opening the socket (dial, QUIC and netclock
	// handshakes, the start burst) to sync; nil if never.
	SyncS *float64 `json:"sync_s"`
	// ConvergeS is when |true error| came within 5 ms for good, as the
	// harness defines it; nil if it never did.
	ConvergeS *float64 `json:"converge_s"`
	Samples   int      `json:"samples"`
	// SameTickPct is the share of samples where the tick of the client's
	// SharedTime was the server's; InBoundPct where |true error| was
	// within the bound; BoundMS is the bound's median.
	SameTickPct float64     `json:"same_tick_pct"`
	InBoundPct  float64     `json:"in_bound_pct"`
	BoundMS     float64     `json:"bound_ms"`
	TrueErrorMS percentiles `json:"true_error_ms"`
	// The client's own view at the end.
	RTTMS        float64 `json:"rtt_ms"`
	OffsetMS     float64 `json:"offset_ms"`
	ErrorBoundMS float64 `json:"error_bound_ms"`
	DriftPPM     float64 `json:"drift_ppm"`
	// Resets counts every reset event (hard resets and stalls).
	Resets        int64 `json:"resets"`
	PingsSent     int64 `json:"pings_sent"`
	PingsLost     int64 `json:"pings_lost"`
	PongsReceived int64 `json:"pongs_received"`
	// Harness is the accuracy harness on the same profile (-compare);
	// RatioP50 and RatioP99 are the quickstart's percentiles over its
	// (nil where the harness's is 0).
	Harness  *harnessSummary `json:"harness,omitempty"`
	RatioP50 *float64        `json:"ratio_p50,omitempty"`
	RatioP99 *float64        `json:"ratio_p99,omitempty"`
	// Streams is the client's game streams after the warm-up; nil if it
	// never connected.
	Streams *streamSummary `json:"streams,omitempty"`
}

func (p *peer) summarize(h *harnessSummary) clientSummary {
	cs := clientSummary{Profile: p.profile.Name, Samples: len(p.errs), Resets: p.resets.Load(), Harness: h,
		SameTickPct: p.steady.pct(p.steady.sameTick), InBoundPct: p.steady.pct(p.steady.inBound)}
	if at := p.syncedAt.Load(); at >= 0 {
		cs.Synced = true
		cs.SyncS = ptr(time.Duration(at).Seconds())
	}
	switch {
	case p.sampled && !p.everBad:
		cs.ConvergeS = ptr(0.0)
	case p.sampled && p.lastBad < p.lastT:
		cs.ConvergeS = ptr(p.lastBad.Seconds())
	}
	slices.Sort(p.errs)
	slices.Sort(p.bounds)
	cs.TrueErrorMS = percentiles{P50: quantile(p.errs, 0.5), P99: quantile(p.errs, 0.99), Max: quantile(p.errs, 1)}
	cs.BoundMS = quantile(p.bounds, 0.5)
	if p.hasFinal {
		f := p.final
		cs.RTTMS, cs.OffsetMS, cs.ErrorBoundMS, cs.DriftPPM = ms(f.RTT), ms(f.Offset), ms(f.ErrorBound), f.DriftPPM
		cs.PingsSent, cs.PingsLost, cs.PongsReceived = f.PingsSent, f.Lost, f.PongsReceived
	}
	if h != nil && cs.Samples > 0 {
		cs.RatioP50 = ratio(cs.TrueErrorMS.P50, h.TrueErrorMS.P50)
		cs.RatioP99 = ratio(cs.TrueErrorMS.P99, h.TrueErrorMS.P99)
	}
	if cs.Samples == 0 { // JSON has no NaN
		cs.SameTickPct, cs.InBoundPct = 0, 0
	}
	return cs
}

func printSummary(w io.Writer, s summary) {
	fmt.Fprintf(w, "\nSummary: %.1fs; after the first %v, sampled at %.0f Hz\n",
		s.DurationS, time.Duration(s.WarmupS*float64(time.Second)), s.SampleHz)
	names := make([]string, len(s.Clients))
	for i, c := range s.Clients {
		names[i] = c.Profile
	}
	name := leftAlign(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tsynced after\tsame tick\t|true error| ms p50\tp99\tmax\tbound ms\tin bound\tresets\tpings lost\t\n", name("client"))
	for _, c := range s.Clients {
		same, in := c.SameTickPct, c.InBoundPct
		if c.Samples == 0 {
			same, in = nan, nan
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%d\t%d of %d\t\n", name(c.Profile),
			secs(c.SyncS), pct(same), c.TrueErrorMS.P50, c.TrueErrorMS.P99, c.TrueErrorMS.Max,
			c.BoundMS, pct(in), c.Resets, c.PingsLost, c.PingsSent)
	}
	tw.Flush()
	printStreams(w, s.Clients)
	fmt.Fprintln(w, "\nsame tick: how often the client's current tick (of its SharedTime) was the server's; it can")
	fmt.Fprintln(w, "  differ only within the true error of a tick boundary. in bound: how often |true error| was")
	fmt.Fprintln(w, "  within the error bound the client published. predicted / server time (live table): where")
	fmt.Fprintln(w, "  the client's timelines run against the server's tick: its inputs are stamped for the")
	fmt.Fprintln(w, "  predicted tick, and the remote state it shows is from the server-time tick.")
}

func profileNames(peers []*peer) []string {
	names := make([]string, len(peers))
	for i, p := range peers {
		names[i] = p.profile.Name
	}
	return names
}

// leftAlign pads names to the longest (and "client"), so that the first
// column of a right-aligned table reads left-aligned.
func leftAlign(names []string) func(string) string {
	width := len("client")
	for _, n := range names {
		width = max(width, len(n))
	}
	return func(s string) string { return fmt.Sprintf("%-*s", width, s) }
}

// quantile returns the q-quantile of sorted v (nearest rank, as the
// harness); 0 if empty.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[max(0, min(len(v)-1, i))]
}

func ratio(a, b float64) *float64 {
	if b == 0 {
		return nil
	}
	return ptr(a / b)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func ptr[T any](v T) *T { return &v }

func pct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", v)
}

func secs(s *float64) string {
	if s == nil {
		return "never"
	}
	return fmt.Sprintf("%.2fs", *s)
}

func times(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.2fx", *r)
}
