// Command accuracy runs netclock side by side with every seed system on a
// simulated network and prints how far each one's shared time is from the
// server's true time.
//
//	go run ./bench/accuracy -profile broadband            # one profile, a table
//	go run ./bench/accuracy -profile my-link.json -json   # a profile file, JSON
//	go run ./bench/accuracy -profile ue-bad -plot err.png # error over time
//	go run ./bench/accuracy -profile all -plot p99.png    # every named profile
//
// Profiles are netsim's named profiles (-list) or JSON files in netsim's
// format (see `go doc github.com/netclock/netclock/netsim`).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/netclock/netclock/bench/harness"
	"github.com/netclock/netclock/netsim"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "accuracy:", err)
		os.Exit(2)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("accuracy", flag.ContinueOnError)
	profile := fs.String("profile", "broadband", "a named profile, a JSON profile file, or all")
	duration := fs.Duration("duration", 10*time.Minute, "simulated time")
	warmup := fs.Duration("warmup", 10*time.Second, "excluded from the error statistics")
	seed := fs.Uint64("seed", 1, "random seed")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	plotFile := fs.String("plot", "", "write a chart to this PNG file")
	list := fs.Bool("list", false, "list the named profiles and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *list {
		for _, p := range netsim.Profiles() {
			fmt.Fprintf(out, "%-18s %s\n", p.Name, p.Description)
		}
		return nil
	}
	var profiles []netsim.Profile
	if *profile == "all" {
		profiles = netsim.Profiles()
	} else {
		p, err := loadProfile(*profile)
		if err != nil {
			return err
		}
		profiles = []netsim.Profile{p}
	}
	var trace time.Duration
	if *plotFile != "" && len(profiles) == 1 {
		trace = max(*duration/2000, 50*time.Millisecond)
	}
	var reports []harness.Report
	for _, p := range profiles {
		rep, err := harness.Run(harness.Options{Profile: p, Seed: *seed, Duration: *duration,
			Warmup: *warmup, TraceEvery: trace})
		if err != nil {
			return err
		}
		reports = append(reports, rep)
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if len(reports) == 1 {
			return enc.Encode(reports[0])
		}
		return enc.Encode(reports)
	}
	for _, rep := range reports {
		printTable(out, rep)
	}
	if *plotFile != "" {
		return writePlot(out, *plotFile, reports, *warmup)
	}
	return nil
}

func loadProfile(name string) (netsim.Profile, error) {
	if p, ok := netsim.ProfileByName(name); ok {
		return p, nil
	}
	if strings.HasSuffix(name, ".json") || strings.ContainsRune(name, os.PathSeparator) {
		return netsim.LoadProfile(name)
	}
	return netsim.Profile{}, fmt.Errorf("unknown profile %q (try -list, or a .json file)", name)
}

func printTable(out io.Writer, rep harness.Report) {
	fmt.Fprintf(out, "profile %s, seed %d, %.0f s simulated\n", rep.Profile, rep.Seed, rep.DurationS)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tp50 ms\tp99 ms\tp99.9 ms\tmax ms\tconverge s\tresets\tbound cov\trate p99 ppm\treversals/min\t")
	for _, r := range rep.Results {
		conv, cov := "never", "-"
		if r.ConvergeS != nil {
			conv = fmt.Sprintf("%.2f", *r.ConvergeS)
		}
		if r.BoundCoverage != nil {
			cov = fmt.Sprintf("%.2f%%", 100**r.BoundCoverage)
		}
		e := r.SharedErrorMS
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%d\t%s\t%.0f\t%.1f\t\n",
			r.System, e.P50, e.P99, e.P999, e.Max, conv, r.Resets, cov, r.RateP99PPM, r.ReversalsPerMin)
	}
	tw.Flush()
	fmt.Fprintln(out)
}
