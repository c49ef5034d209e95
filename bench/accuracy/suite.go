package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/netclock/netclock/bench/harness"
)

// printSuite prints a suite's distributions and its worst scenarios.
func printSuite(out io.Writer, rep harness.SuiteReport, systems int) {
	fmt.Fprintf(out, "suite: %d scenarios (random:%d..random:%d), run seeds 1..%d each, %.0f s simulated, %d systems\n",
		rep.Scenarios, rep.First, rep.First+uint64(rep.Scenarios)-1, rep.Seeds, rep.DurationS, systems)
	fmt.Fprintln(out, "per scenario: the median over its run seeds; across scenarios:")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "netclock\tmedian\tp90\tmax\t")
	if d := rep.VsSeed; d != nil {
		fmt.Fprintf(tw, "p99 / best seed's p99\t%.2f\t%.2f\t%.2f\t\n", d.Median, d.P90, d.Max)
	}
	if d := rep.VsRef; d != nil {
		fmt.Fprintf(tw, "p99 / best reference's p99\t%.2f\t%.2f\t%.2f\t\n", d.Median, d.P90, d.Max)
	}
	tw.Flush()
	c := rep.Coverage
	fmt.Fprintf(out, "bound coverage, all scenarios: median %.2f%%, p10 %.2f%%, min %.2f%%\n", 100*c.Median, 100*c.P10, 100*c.Min)
	if c := rep.CoverageSymmetric; c != nil {
		fmt.Fprintf(out, "bound coverage, the %d without a fixed asymmetry: median %.2f%%, p10 %.2f%%, min %.2f%%\n",
			rep.Symmetric, 100*c.Median, 100*c.P10, 100*c.Min)
	}
	fmt.Fprintln(out)
	printScenarios(out, "worst scenarios by p99 ratio (median [min-max] over run seeds)", rep.Worst)
	printScenarios(out, "lowest bound coverage", rep.LowestCoverage)
}

func printScenarios(out io.Writer, title string, rs []harness.ScenarioResult) {
	fmt.Fprintf(out, "%s:\n", title)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tvs best seed\tvs best ref\tcoverage %\tp99 ms\tA/2 ms\treproduce (worst run)\tbest seed / ref there\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "random:%d\t%s\t%s\t%.1f [%.1f-%.1f]\t%.3f [%.3f-%.3f]\t%.2f\t-profile random:%d -seed %d\t%s / %s\t\n",
			r.Scenario, spread(r.VsSeed), spread(r.VsRef), 100*r.Coverage.Median, 100*r.Coverage.Min, 100*r.Coverage.Max,
			r.P99MS.Median, r.P99MS.Min, r.P99MS.Max, r.AsymmetryMS/2, r.Scenario, r.WorstSeed, r.BestSeed, r.BestRef)
	}
	tw.Flush()
	for _, r := range rs {
		fmt.Fprintf(out, "  random:%d: %s\n", r.Scenario, r.Description)
	}
	fmt.Fprintln(out)
}

func spread(s *harness.Spread) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f [%.2f-%.2f]", s.Median, s.Min, s.Max)
}

// printProfiles prints a suite of profiles (what names them: every named
// profile, or a directory's): one row each, in order, every figure the
// median [min-max] over the run seeds.
func printProfiles(out io.Writer, rep harness.SuiteReport, what string, systems int) {
	fmt.Fprintf(out, "%s, run seeds 1..%d each, %.0f s simulated, %d systems; median [min-max] over the seeds\n",
		what, rep.Seeds, rep.DurationS, systems)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "profile\tnetclock p99 ms\tvs best seed\tvs best ref\tcoverage %\tA/2 ms\tbest seed / ref (worst run)\t")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%.3f [%.3f-%.3f]\t%s\t%s\t%.1f [%.1f-%.1f]\t%.2f\t%s / %s\t\n",
			r.Name, r.P99MS.Median, r.P99MS.Min, r.P99MS.Max, spread(r.VsSeed), spread(r.VsRef),
			100*r.Coverage.Median, 100*r.Coverage.Min, 100*r.Coverage.Max, r.AsymmetryMS/2, r.BestSeed, r.BestRef)
	}
	tw.Flush()
}
