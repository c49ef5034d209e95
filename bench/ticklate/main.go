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
//
// Besides the lateness percentiles it prints the catch-up ticks (Late of a
// tick or more) and the process's CPU time per tick.
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
	modes := []bool{*coarse}
	n := 1
	if *compare {
		modes, n = []bool{false, true}, max(*rounds, 1)
	}
	fmt.Printf("load average at start: %s\n", loadAvg())
	results := make(map[bool][]result)
	for _, c := range modes {
		results[c] = make([]result, len(rs))
	}
	for range n {
		for i, r := range rs {
			for _, c := range modes {
				cpu0 := cpuTime()
				res, err := measure(r, *duration/time.Duration(n), *client, c)
				if err != nil {
					fmt.Fprintln(os.Stderr, "ticklate:", err)
					os.Exit(1)
				}
				acc := &results[c][i]
				acc.late = append(acc.late, res.late...)
				acc.catchUps += res.catchUps
				acc.cpu += cpuTime() - cpu0
			}
		}
	}
	for _, c := range modes {
		mode := "ticksys.SystemClock (a kernel timer on Linux)"
		if c {
			mode = "plain Go timers"
		}
		fmt.Printf("waits: %s\n", mode)
		fmt.Printf("%6s %7s %9s %9s %9s %9s %9s %8s %9s\n", "rate", "ticks", "p50", "p90", "p99", "p99.9", "max", "catchup", "cpu/tick")
		for i, r := range rs {
			results[c][i].print(r)
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

type result struct {
	late     []time.Duration // callback time minus tick start
	catchUps int
	cpu      time.Duration // the process's CPU time (user+system) during the run
}

func measure(rate uint32, d time.Duration, client, coarse bool) (result, error) {
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
	if coarse {
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
	if err := sys.Run(ctx, ticksys.DriverConfig{Clock: driverClock}); err != context.DeadlineExceeded {
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
	perTick := "-"
	if len(l) > 0 && r.cpu > 0 {
		perTick = fmt.Sprintf("%.0fµs", float64(r.cpu)/float64(len(l))/1e3)
	}
	fmt.Printf("%6d %7d %9s %9s %9s %9s %9s %8d %9s\n", rate, len(l), q(0.5), q(0.9), q(0.99), q(0.999), q(1), r.catchUps, perTick)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d)/1e6) }
