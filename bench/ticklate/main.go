// Command ticklate measures how late ticksys.System.Run calls tick callbacks
// on the real clock: for every tick, the time from the tick's start (the
// driver's first clock reading plus the tick's offset) to the moment the
// callback runs, read independently with time.Now.
//
//	go run ./bench/ticklate                         # 30, 60 and 128 Hz, 20s each
//	go run ./bench/ticklate -rates 60 -duration 1m
//	go run ./bench/ticklate -client                 # a slewing provider.Steered instead of the server provider
//	go run ./bench/ticklate -coarse                 # wait on plain Go timers (time.After), for comparison
//	go run ./bench/ticklate -compare                # both, alternating in 5 rounds: the same load for both
//	go run ./bench/ticklate -spin 0,1ms,2ms         # DriverConfig.MaxSpin values (0: never, the default), alternating
//
// Besides the lateness percentiles it prints the catch-up ticks (Late of a
// tick or more), the process's CPU time per tick and as a share of one CPU,
// and the steal: the share of the machine's CPU time a hypervisor kept its
// virtual CPUs waiting (Linux; a virtual CPU woken from idle waits for the
// host to run it, and that wait is counted as steal).
//
// Run it on an idle machine: lateness is the timer's and the scheduler's.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/ticksys"
)

func main() {
	rates := flag.String("rates", "30,60,128", "tick rates to measure, comma-separated")
	duration := flag.Duration("duration", 20*time.Second, "measurement time per rate (and per kind of wait with -compare)")
	client := flag.Bool("client", false, "drive a provider.Steered steering toward an estimate 30ms off (slewing) instead of provider.Constant")
	coarse := flag.Bool("coarse", false, "wait on plain Go timers instead of ticksys.SystemClock's kernel timer")
	compare := flag.Bool("compare", false, "measure both kinds of wait, alternating in -rounds rounds so both see the same load")
	rounds := flag.Int("rounds", 5, "rounds of -compare")
	spins := flag.String("spin", "0", "ticksys.DriverConfig.MaxSpin values to measure, comma-separated (0, the default: never spin)")
	flag.Parse()
	var rs []uint32
	for _, f := range strings.Split(*rates, ",") {
		r, err := strconv.ParseUint(strings.TrimSpace(f), 10, 32)
		if err != nil || r == 0 {
			fmt.Fprintln(os.Stderr, "ticklate: bad rate:", f)
			os.Exit(2)
		}
		rs = append(rs, uint32(r))
	}
	var modes []mode
	if *coarse {
		modes = append(modes, mode{coarse: true})
	} else {
		for _, f := range strings.Split(*spins, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(f))
			if err != nil {
				fmt.Fprintln(os.Stderr, "ticklate: bad -spin:", f)
				os.Exit(2)
			}
			modes = append(modes, mode{spin: d})
		}
		if *compare {
			modes = append(modes, mode{coarse: true})
		}
	}
	n := 1
	if len(modes) > 1 {
		n = max(*rounds, 1) // alternate, so every kind of wait sees the same load
	}
	fmt.Printf("load average at start: %s\n", loadAvg())
	results := make([][]result, len(modes))
	for m := range modes {
		results[m] = make([]result, len(rs))
	}
	for k := range n {
		if n > 1 {
			fmt.Printf("round %d, load average %s\n", k+1, loadAvg())
		}
		for i, r := range rs {
			for m, md := range modes {
				cpu0, st0 := cpuTime(), readStolen()
				res, err := measure(r, *duration/time.Duration(n), *client, md)
				if err != nil {
					fmt.Fprintln(os.Stderr, "ticklate:", err)
					os.Exit(1)
				}
				acc := &results[m][i]
				acc.late = append(acc.late, res.late...)
				acc.catchUps += res.catchUps
				acc.cpu += cpuTime() - cpu0
				acc.stolen = acc.stolen.add(readStolen().sub(st0))
				acc.wall += *duration / time.Duration(n)
			}
		}
	}
	for m, md := range modes {
		fmt.Printf("waits: %s\n", md)
		fmt.Printf("%6s %7s %9s %9s %9s %9s %9s %8s %9s %6s %6s\n", "rate", "ticks", "p50", "p90", "p99", "p99.9", "max", "catchup", "cpu/tick", "cpu", "steal")
		for i, r := range rs {
			results[m][i].print(r)
		}
	}
	fmt.Printf("load average at end: %s\n", loadAvg())
}

// loadAvg returns the 1, 5 and 15 minute load averages where the OS says
// (Linux), for judging how idle the machine was.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// stolen is the machine's CPU time in clock ticks (all CPUs): the time a
// hypervisor kept its virtual CPUs from running although they had work
// (steal), of the total (Linux's /proc/stat; zero where unknown).
type stolen struct{ steal, total int64 }

func (a stolen) add(b stolen) stolen { return stolen{a.steal + b.steal, a.total + b.total} }
func (a stolen) sub(b stolen) stolen { return stolen{a.steal - b.steal, a.total - b.total} }

// String returns steal as a share of the total, "-" if unknown.
func (a stolen) String() string {
	if a.total <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a.steal)/float64(a.total))
}

// readStolen reads the machine's steal and total CPU time so far.
func readStolen() stolen {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return stolen{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return stolen{}
	}
	var st stolen
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return stolen{}
		}
		if i < 8 { // user nice system idle iowait irq softirq steal; guest time is in user
			st.total += n
		}
		if i == 7 {
			st.steal = n
		}
	}
	return st
}

// originClock is the system clock, remembering its first reading (the real
// time of server time Start, from which provider.Constant's tick starts are
// computed) and its last (the time of the current frame).
type originClock struct {
	ticksys.SystemClock // its sharp waits
	origin, frame       time.Time
}

func (c *originClock) Now() time.Time {
	t := time.Now()
	if c.origin.IsZero() {
		c.origin = t
	}
	c.frame = t
	return t
}

// coarseClock is originClock waiting on plain Go timers.
type coarseClock struct{ o *originClock } // not embedded: that would promote the sharp waits

func (c coarseClock) Now() time.Time { return c.o.Now() }

func (coarseClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// mode is a kind of wait: Go timers only (coarse), or a SystemClock with
// DriverConfig.MaxSpin spin.
type mode struct {
	coarse bool
	spin   time.Duration
}

func (m mode) String() string {
	switch {
	case m.coarse:
		return "plain Go timers"
	case m.spin == 0:
		return "ticksys.SystemClock (a kernel timer on Linux), no spin (the default)"
	}
	return fmt.Sprintf("ticksys.SystemClock, MaxSpin %v", m.spin)
}

type result struct {
	late     []time.Duration // callback time minus tick start
	catchUps int
	cpu      time.Duration // the process's CPU time (user+system) during the run
	wall     time.Duration // the run's length
	stolen   stolen        // the machine's CPU time during the run
}

func measure(rate uint32, d time.Duration, client bool, md mode) (result, error) {
	cfg := ticksys.Config{TickRate: rate}
	var pc *provider.Steered
	if client {
		start := time.Now()
		var err error
		pc, err = provider.NewSteered(provider.SteeredConfig{Clock: func() time.Duration { return time.Since(start) }})
		if err != nil {
			return result{}, err
		}
		cfg.Provider = pc
	}
	sys, err := ticksys.New(cfg)
	if err != nil {
		return result{}, err
	}
	if pc != nil {
		// Predicted time starts 30ms behind its target and slews at up
		// to +5% for a while: the driver must follow a scaled timeline.
		pc.SetEstimate(provider.Estimate{Valid: true, Offset: 30 * time.Millisecond})
	}
	clk := &originClock{}
	var driverClock ticksys.Clock = clk
	if md.coarse {
		driverClock = coarseClock{clk}
	}
	var res result
	res.late = make([]time.Duration, 0, int(d.Seconds()+1)*int(rate))
	sys.OnNetworkTick(func(ev ticksys.TickEvent) {
		now := time.Now()
		var late time.Duration
		if pc == nil {
			// provider.Constant: tick k starts exactly at origin + k/rate.
			late = now.Sub(clk.origin.Add(ev.Predicted.Duration()))
		} else {
			// A slewing client's tick starts are not on a fixed grid:
			// the driver's own account, predicted time past the tick
			// start at the frame plus the time since the frame began.
			late = ev.Late + now.Sub(clk.frame)
		}
		res.late = append(res.late, late)
		if ev.CatchUp() {
			res.catchUps++
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := sys.Run(ctx, ticksys.DriverConfig{Clock: driverClock, MaxSpin: md.spin}); err != context.DeadlineExceeded {
		return res, fmt.Errorf("run: %w", err)
	}
	return res, nil
}

func (r result) print(rate uint32) {
	l := slices.Clone(r.late)
	slices.Sort(l)
	q := func(p float64) string {
		if len(l) == 0 {
			return "-"
		}
		return ms(l[min(len(l)-1, int(p*float64(len(l))))])
	}
	perTick, share := "-", "-"
	if len(l) > 0 && r.cpu > 0 {
		perTick = fmt.Sprintf("%.0fµs", float64(r.cpu)/float64(len(l))/1e3)
		share = fmt.Sprintf("%.1f%%", 100*float64(r.cpu)/float64(r.wall))
	}
	fmt.Printf("%6d %7d %9s %9s %9s %9s %9s %8d %9s %6s %6s\n", rate, len(l), q(0.5), q(0.9), q(0.99), q(0.999), q(1), r.catchUps, perTick, share, r.stolen)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d)/1e6) }
