// Command accuracy runs netclock side by side with every seed system and
// the reference filters on a simulated network and prints how far each
// one's shared time is from the server's true time.
//
//	go run ./bench/accuracy -profile broadband            # one profile, a table
//	go run ./bench/accuracy -profile my-link.json -json   # a profile file, JSON
//	go run ./bench/accuracy -profile ue-bad -plot err.png # error over time
//	go run ./bench/accuracy -profile all -plot p99.png    # every named profile
//	go run ./bench/accuracy -profile all -ping 100ms      # everyone at equal data
//	go run ./bench/accuracy -profile random -seed 42      # one random scenario
//	go run ./bench/accuracy -suite 200 -seeds 5           # 200 random scenarios
//	go run ./bench/accuracy -profile all -seeds 5 -inputs # inputs on time, starved frames
//	go run ./bench/accuracy -profile bench/profiles        # every profile in a directory
//
// -inputs also simulates a game over each netclock system's clock: an
// input every predicted tick, a snapshot every -snapshot-every server
// ticks, interpolation every frame, under each buffer model (netclock's
// fixed buffers, NGO, Netcode for Entities, Mirror), against the hindsight
// oracle (see harness.BufferOptions).
//
// Profiles are netsim's named profiles (-list), JSON files in netsim's
// format (see `go doc github.com/netclock/netclock/netsim`), a directory
// of such files (each run over -seeds run seeds, a table of medians, as
// -profile all -seeds), "random" (the
// scenario netsim.RandomProfile(seed) with -seed as both the scenario and
// the run seed) or "random:S" (scenario S, run seed -seed).
//
// Systems (-systems): netclock, the seeds at their documented request
// rates and the reference filters at netclock's 10 Hz; -ping runs every
// system's requests at one period, -pings name=period,... some of them.
//
// Limits: -duration must be in (0, 24h] (default 10m, 20m for random
// scenarios and the suite: the horizon their events are drawn for); -seed
// and the seeds of -suite start at 1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/netclock/netclock/bench/harness"
	"github.com/netclock/netclock/netsim"
)

// MaxDuration is the longest -duration: a run keeps every frame's error
// (about 3.5 MB per simulated hour and system at 60 Hz).
const MaxDuration = harness.MaxDuration

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return // -h: the usage is printed, and asking is no error
		}
		fmt.Fprintln(os.Stderr, "accuracy:", err)
		os.Exit(2)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("accuracy", flag.ContinueOnError)
	profile := fs.String("profile", "broadband", "a named profile, a JSON profile file, all, random or random:S")
	duration := fs.Duration("duration", 10*time.Minute, "simulated time, in (0, 24h] (default 10m; 20m for random scenarios and -suite)")
	warmup := fs.Duration("warmup", 10*time.Second, "excluded from the error statistics")
	seed := fs.Uint64("seed", 1, "random seed of the run (>= 1)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	plotFile := fs.String("plot", "", "write a chart to this PNG file")
	list := fs.Bool("list", false, "list the named profiles and exit")
	systems := fs.String("systems", "all", "systems to run: all, seeds, refs, or a comma-separated list of names")
	ping := fs.Duration("ping", 0, "run every system's requests at this period (equal data); default: each system's own")
	pings := fs.String("pings", "", "per-system request periods, e.g. simpson=100ms,ngo=100ms")
	suite := fs.Int("suite", 0, "run this many random scenarios (random:1, random:2, ...) and print the distribution")
	seeds := fs.Int("seeds", 5, "run seeds per scenario in -suite, or per profile with -profile all (1..K)")
	first := fs.Uint64("first", 1, "first scenario of -suite")
	parallel := fs.Int("parallel", runtime.GOMAXPROCS(0), "runs at once in -suite")
	worst := fs.Int("worst", 10, "worst scenarios to list in -suite")
	inputs := fs.Bool("inputs", false, "also measure inputs on time and interpolation starvation per buffer model, with the hindsight oracle")
	snapEvery := fs.Int("snapshot-every", 1, "with -inputs: the server's snapshot interval, in ticks")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (flags go before them?)", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *list {
		for _, p := range netsim.Profiles() {
			fmt.Fprintf(out, "%-18s %s\n", p.Name, p.Description)
		}
		return nil
	}
	random := *suite > 0 || strings.HasPrefix(*profile, "random")
	if !set["duration"] && random {
		*duration = netsim.RandomHorizon
	}
	switch {
	case *duration <= 0:
		return fmt.Errorf("-duration must be positive, got %v", *duration)
	case *duration > MaxDuration:
		return fmt.Errorf("-duration %v is longer than the maximum %v", *duration, MaxDuration)
	case *warmup < 0 || *warmup >= *duration:
		return fmt.Errorf("-warmup %v must be in [0, -duration %v)", *warmup, *duration)
	case *seed == 0:
		return errors.New("-seed must be at least 1 (seed 0 is not a seed: seeds start at 1)")
	case set["ping"] && *ping <= 0:
		return fmt.Errorf("-ping must be positive, got %v", *ping)
	case *suite < 0:
		return fmt.Errorf("-suite must be a number of scenarios, got %d", *suite)
	case *seeds < 1 || *seeds > 1000:
		return fmt.Errorf("-seeds must be in [1, 1000], got %d", *seeds)
	case *first == 0:
		return errors.New("-first must be at least 1")
	case *parallel < 1:
		return fmt.Errorf("-parallel must be at least 1, got %d", *parallel)
	case *snapEvery < 1 || *snapEvery > 600:
		return fmt.Errorf("-snapshot-every must be in [1, 600] ticks, got %d", *snapEvery)
	}
	var buffers *harness.BufferOptions
	if *inputs {
		buffers = &harness.BufferOptions{SnapshotEvery: *snapEvery}
	}
	syss, err := selectSystems(*systems, *ping, *pings)
	if err != nil {
		return err
	}
	if *suite > 0 {
		if *suite > 100_000 {
			return fmt.Errorf("-suite %d: at most 100000 scenarios", *suite)
		}
		rep, err := harness.RunSuite(context.Background(), harness.SuiteOptions{Scenarios: *suite, First: *first, Seeds: *seeds,
			Duration: *duration, Warmup: *warmup, Systems: syss, Parallel: *parallel, Worst: *worst, Buffers: buffers})
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(out, rep)
		}
		printSuite(out, rep, len(syss))
		return nil
	}
	seedsSet := false
	fs.Visit(func(f *flag.Flag) { seedsSet = seedsSet || f.Name == "seeds" })
	dirSet, isDir, err := profileDir(*profile)
	if err != nil {
		return err
	}
	if *profile == "all" && seedsSet || isDir {
		// Every named profile, or every profile in a directory, over
		// -seeds run seeds: a table of medians.
		if !isDir {
			dirSet = netsim.Profiles()
		}
		rep, err := harness.RunSuite(context.Background(), harness.SuiteOptions{Profiles: dirSet, Seeds: *seeds,
			Duration: *duration, Warmup: *warmup, Systems: syss, Parallel: *parallel, Buffers: buffers})
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(out, rep)
		}
		what := "every named profile"
		if isDir {
			what = "every profile in " + *profile
		}
		printProfiles(out, rep, what, len(syss))
		if buffers != nil {
			printProfileBuffers(out, rep)
		}
		return nil
	}
	var profiles []netsim.Profile
	if *profile == "all" {
		profiles = netsim.Profiles()
	} else {
		p, err := loadProfile(*profile, *seed)
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
			Warmup: *warmup, TraceEvery: trace, Systems: syss, Buffers: buffers})
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
		printBuffers(out, rep)
	}
	if *plotFile != "" {
		return writePlot(out, *plotFile, reports, *warmup)
	}
	return nil
}

// selectSystems picks the systems of -systems and applies -ping and -pings.
func selectSystems(which string, ping time.Duration, pings string) ([]harness.System, error) {
	all := harness.AllSystems()
	var out []harness.System
	switch which {
	case "all":
		out = all
	case "seeds", "refs":
		kind := harness.KindSeed
		if which == "refs" {
			kind = harness.KindReference
		}
		out = append(out, all[0]) // netclock
		for _, s := range all {
			if s.Kind == kind {
				out = append(out, s)
			}
		}
	default:
		for _, name := range strings.Split(which, ",") {
			i := slices.IndexFunc(all, func(s harness.System) bool { return s.Name == strings.TrimSpace(name) })
			if i < 0 {
				return nil, fmt.Errorf("-systems: unknown system %q (known: %s)", name, systemNames(all))
			}
			out = append(out, all[i])
		}
	}
	for i := range out {
		out[i] = out[i].WithPing(ping)
	}
	if pings == "" {
		return out, nil
	}
	for _, kv := range strings.Split(pings, ",") {
		name, val, ok := strings.Cut(kv, "=")
		d, err := time.ParseDuration(strings.TrimSpace(val))
		if !ok || err != nil || d <= 0 {
			return nil, fmt.Errorf("-pings: want name=period with a positive period such as simpson=100ms, got %q", kv)
		}
		i := slices.IndexFunc(out, func(s harness.System) bool { return s.Name == strings.TrimSpace(name) })
		if i < 0 {
			return nil, fmt.Errorf("-pings: system %q is not running (running: %s)", name, systemNames(out))
		}
		out[i] = out[i].WithPing(d)
	}
	return out, nil
}

func systemNames(ss []harness.System) string {
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// profileDir loads every .json profile in dir, in name order, if dir is
// a directory.
func profileDir(dir string) (set []netsim.Profile, isDir bool, err error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, false, nil
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, true, err
	}
	if len(names) == 0 {
		return nil, true, fmt.Errorf("-profile %s: no .json profiles in the directory", dir)
	}
	slices.Sort(names)
	for _, n := range names {
		p, err := netsim.LoadProfile(n)
		if err != nil {
			return nil, true, err
		}
		set = append(set, p)
	}
	return set, true, nil
}

func loadProfile(name string, seed uint64) (netsim.Profile, error) {
	if p, ok := netsim.ProfileByName(name); ok {
		return p, nil
	}
	if name == "random" {
		return netsim.RandomProfile(seed), nil
	}
	if rest, ok := strings.CutPrefix(name, "random:"); ok {
		s, err := strconv.ParseUint(rest, 10, 64)
		if err != nil || s == 0 {
			return netsim.Profile{}, fmt.Errorf("-profile %s: want random:S with a scenario S >= 1", name)
		}
		return netsim.RandomProfile(s), nil
	}
	if strings.HasSuffix(name, ".json") || strings.ContainsRune(name, os.PathSeparator) {
		return netsim.LoadProfile(name)
	}
	return netsim.Profile{}, fmt.Errorf("unknown profile %q (try -list, a .json file, or random)", name)
}

func printTable(out io.Writer, rep harness.Report) {
	fmt.Fprintf(out, "profile %s, seed %d, %.0f s simulated\n", rep.Profile, rep.Seed, rep.DurationS)
	if p, ok := strings.CutPrefix(rep.Profile, "random-"); ok {
		n, _ := strconv.ParseUint(p, 10, 64)
		fmt.Fprintf(out, "scenario: %s\n", netsim.RandomProfile(n).Description)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tkind\tping s\tp50 ms\tp99 ms\tp99.9 ms\tmax ms\tconverge s\tresets\tbound cov\trate p99 ppm\treversals/min\t")
	for _, r := range rep.Results {
		conv, cov := "never", "-"
		if r.ConvergeS != nil {
			conv = fmt.Sprintf("%.2f", *r.ConvergeS)
		}
		if r.BoundCoverage != nil {
			cov = fmt.Sprintf("%.2f%%", 100**r.BoundCoverage)
		}
		e := r.SharedErrorMS
		ping := "once"
		if r.PingS > 0 {
			ping = strconv.FormatFloat(r.PingS, 'g', -1, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%d\t%s\t%.0f\t%.1f\t\n",
			r.System, r.Kind, ping, e.P50, e.P99, e.P999, e.Max, conv, r.Resets, cov, r.RateP99PPM, r.ReversalsPerMin)
	}
	tw.Flush()
	fmt.Fprintln(out)
}

// writeJSON writes v as indented JSON.
func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
