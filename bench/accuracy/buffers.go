package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/netclock/netclock/bench/harness"
)

// printBuffers prints the buffer models of each netclock system of a run
// measured with -inputs, then the oracle (a client sending at its frames)
// and the tick-start oracle (inputs sent at a chosen time before their
// tick: the uplink's share alone).
func printBuffers(out io.Writer, rep harness.Report) {
	for _, r := range rep.Results {
		if r.Buffers == nil {
			continue
		}
		fmt.Fprintf(out, "inputs and interpolation over %s's clock (input lead: how long before its tick an input arrived; interpolation delay: true server time − interpolation time)\n", r.System)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "model\ton time\tlost\tlead mean ms\tlead p99 ms\tstarved\tinterp mean ms\tinterp p99 ms\t")
		for _, b := range r.Buffers {
			fmt.Fprintf(tw, "%s\t%.2f%%\t%.2f%%\t%.1f\t%.1f\t%.2f%%\t%.1f\t%.1f\t\n", b.Model, 100*b.InputsOnTime, 100*b.InputsLost,
				b.InputLeadMS.Mean, b.InputLeadMS.P99, 100*b.StarvedFrames, b.InterpDelayMS.Mean, b.InterpDelayMS.P99)
		}
		fmt.Fprintf(tw, "oracle\t99%%\t\t%s\t\t1%%\t%.1f\t\t\n", msOrNone(r.OracleLeadMS), *r.OracleInterpDelayMS)
		fmt.Fprintf(tw, "oracle-tick\t99%%\t\t%.1f\t\t\t\t\t\n", *r.OracleTickLeadMS)
		tw.Flush()
		fmt.Fprintln(out)
	}
}

// msOrNone formats a figure in ms, or "none" if it is missing.
func msOrNone(v *float64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprintf("%.1f", *v)
}

// printProfileBuffers prints, per named profile, the medians over the run
// seeds of each buffer model and the oracle.
func printProfileBuffers(out io.Writer, rep harness.SuiteReport) {
	fmt.Fprintln(out)
	fmt.Fprintf(out, "inputs and interpolation over netclock's clock, median over run seeds 1..%d\n", rep.Seeds)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "profile\tmodel\ton time\tlead mean ms\tstarved\tinterp mean ms\t")
	for _, r := range rep.Results {
		for _, b := range r.Buffers {
			fmt.Fprintf(tw, "%s\t%s\t%.2f%%\t%.1f\t%.2f%%\t%.1f\t\n", r.Name, b.Model, 100*b.InputsOnTime.Median,
				b.InputLeadMS.Mean.Median, 100*b.StarvedFrames.Median, b.InterpDelayMS.Mean.Median)
		}
		if r.OracleLeadMS != nil {
			fmt.Fprintf(tw, "%s\toracle\t99%%\t%.1f\t1%%\t%.1f\t\n", r.Name, r.OracleLeadMS.Median, r.OracleInterpDelayMS.Median)
			fmt.Fprintf(tw, "%s\toracle-tick\t99%%\t%.1f\t\t\t\n", r.Name, r.OracleTickLeadMS.Median)
		}
	}
	tw.Flush()
}
