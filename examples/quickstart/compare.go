package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/netclock/netclock/bench/harness"
	"github.com/netclock/netclock/netsim"
)

// harnessSeeds is how many seeds the harness runs, from -seed on, to show
// how much the percentiles of a short run vary with the network's luck
// alone: at 20 s, p50 on ue-bad ranges over more than 10x.
const harnessSeeds = 8

// harnessSummary is netclock's result in the accuracy harness (virtual
// time) on the same profile, duration and warm-up: with the same seed, and
// the range over harnessSeeds seeds.
type harnessSummary struct {
	TrueErrorMS percentiles `json:"true_error_ms"`
	ConvergeS   *float64    `json:"converge_s"`
	// Resets counts hard resets.
	Resets int `json:"resets"`
	// Seeds is the number of seeds the ranges are over.
	Seeds int `json:"seeds"`
	// P50Range and P99Range are the lowest and highest p50 and p99 of
	// |true error| over the seeds, in ms.
	P50Range [2]float64 `json:"p50_range_ms"`
	P99Range [2]float64 `json:"p99_range_ms"`
}

func runHarness(p netsim.Profile, opt options) (harnessSummary, error) {
	h := harnessSummary{Seeds: harnessSeeds}
	for i := range harnessSeeds {
		rep, err := harness.Run(harness.Options{Profile: p, Seed: opt.seed + uint64(i), Duration: opt.duration,
			Warmup: opt.warmup, Systems: []harness.System{harness.Netclock()}})
		if err != nil {
			return h, err
		}
		r := rep.Results[0]
		e := r.SharedErrorMS
		if i == 0 {
			h.TrueErrorMS = percentiles{P50: e.P50, P99: e.P99, Max: e.Max}
			h.ConvergeS, h.Resets = r.ConvergeS, r.Resets
			h.P50Range, h.P99Range = [2]float64{e.P50, e.P50}, [2]float64{e.P99, e.P99}
		}
		h.P50Range = [2]float64{min(h.P50Range[0], e.P50), max(h.P50Range[1], e.P50)}
		h.P99Range = [2]float64{min(h.P99Range[0], e.P99), max(h.P99Range[1], e.P99)}
	}
	return h, nil
}

// printComparison prints the quickstart's |true error| next to the
// harness's on the same profiles, and explains the difference.
func printComparison(w io.Writer, s summary) {
	if len(s.Clients) == 0 || s.Clients[0].Harness == nil {
		return
	}
	seeds := s.Clients[0].Harness.Seeds
	fmt.Fprintf(w, "\nThe same profiles in the accuracy harness (bench/harness: virtual time, %.0fs, the same\n", s.DurationS)
	fmt.Fprintf(w, "warm-up; seed %d as the links above, and the range over seeds %d-%d):\n", s.Seed, s.Seed, s.Seed+uint64(seeds)-1)
	names := make([]string, len(s.Clients))
	for i, c := range s.Clients {
		names[i] = c.Profile
	}
	name := leftAlign(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tquickstart p50\tp99\tharness p50\tp99\tratio p50\tratio p99\tharness p50 range\tp99 range\tharness converged\t\n",
		name("client"))
	for _, c := range s.Clients {
		h := c.Harness
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%s\t%.3f-%.3f\t%.3f-%.3f\t%s\t\n", name(c.Profile),
			c.TrueErrorMS.P50, c.TrueErrorMS.P99, h.TrueErrorMS.P50, h.TrueErrorMS.P99,
			times(c.RatioP50), times(c.RatioP99), h.P50Range[0], h.P50Range[1], h.P99Range[0], h.P99Range[1],
			secs(h.ConvergeS))
	}
	tw.Flush()
	fmt.Fprintln(w, "The quickstart runs in wall time: every packet, and every sample of the true error, is late by")
	fmt.Fprintln(w, "the scheduler's wake-up (microseconds, milliseconds on a busy machine), which the harness does")
	fmt.Fprintln(w, "not have. Over a short run the percentiles also depend on which pings drew the lowest delays:")
	fmt.Fprintln(w, "the harness's own range over seeds shows how much.")
}
