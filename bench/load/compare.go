package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

type compareOpts struct {
	reps                            int
	parts                           string
	aDuration, bDuration, cDuration time.Duration
	bN                              int
	cN                              []int
	cReps                           int
	cResidence, cEcho               bool
	jsonOut                         string
	quick, verbose                  bool
	warmup, ping                    time.Duration
}

// Run is one server and clients subprocess pair.
type Run struct {
	Part    string        `json:"part"`    // which comparison: the -compare part this run belongs to
	Rep     int           `json:"rep"`     // repetition number, from 0
	Server  *ServerReport `json:"server"`  // the server subprocess's report
	Clients *ClientReport `json:"clients"` // the clients subprocess's report
}

// CompareResult holds every run of a compare.
type CompareResult struct {
	Started string `json:"started"` // start time, RFC 3339
	Args    string `json:"args"`    // the command line
	Runs    []Run  `json:"runs"`    // in the order they ran
}

type pairSpec struct {
	echo      bool
	n         int
	duration  time.Duration
	residence bool
}

// runPair runs a server subprocess and a clients subprocess against it and
// returns both reports.
func runPair(ctx context.Context, f *flags, dir string, p pairSpec) (*ServerReport, *ClientReport, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	// Generous: dialing, warm-up, window, hold, shutdown.
	budget := p.duration + 2*f.warmup + time.Duration(p.n)*50*time.Millisecond + 2*time.Minute
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()

	cert := filepath.Join(dir, fmt.Sprintf("cert-%d.pem", time.Now().UnixNano()))
	mode, label := "server", "netclock"
	if p.echo {
		mode, label = "echo-server", "echo"
	}
	sargs := []string{"-mode", mode, "-addr", "127.0.0.1:0", "-cert-out", cert,
		"-expect", strconv.Itoa(p.n), "-warmup", f.warmup.String(), "-duration", p.duration.String(),
		"-max-clients", strconv.Itoa(f.maxClients), "-idle", f.idle.String()}
	if p.residence {
		sargs = append(sargs, "-residence", "-ping-min", strconv.Itoa(f.pingMin), "-pong-min", strconv.Itoa(f.pongMin))
	}
	srv := command(ctx, self, sargs)
	var sout bytes.Buffer
	srv.Stdout = &sout
	serr, err := srv.StderrPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := srv.Start(); err != nil {
		return nil, nil, err
	}
	addrCh := make(chan string, 1)
	serrDone := make(chan struct{})
	go func() {
		defer close(serrDone)
		scanLines(serr, "["+label+" server] ", f.compare.verbose, func(line string) {
			if a, ok := strings.CutPrefix(line, "netclock-load: listening on "); ok {
				addrCh <- a
			}
		})
	}()
	killServer := func() {
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
		<-serrDone
	}
	var addr string
	select {
	case addr = <-addrCh:
	case <-serrDone:
		srv.Wait()
		return nil, nil, fmt.Errorf("%s server exited before listening", label)
	case <-ctx.Done():
		killServer()
		return nil, nil, ctx.Err()
	}

	cargs := []string{"-mode", "clients", "-n", strconv.Itoa(p.n), "-addr", addr, "-pin", cert,
		"-ping", f.ping.String(), "-burst", strconv.Itoa(f.burst), "-warmup", f.warmup.String(),
		"-duration", p.duration.String(), "-hold", f.hold.String(),
		"-dial-concurrency", strconv.Itoa(f.dialConcurrency), "-dial-attempts", strconv.Itoa(f.dialAttempts),
		"-dial-timeout", f.dialTimeout.String(), "-backoff", f.backoff.String(), "-max-backoff", f.maxBackoff.String()}
	if p.echo {
		cargs = append(cargs, "-echo")
	}
	cli := command(ctx, self, cargs)
	var cout bytes.Buffer
	cli.Stdout = &cout
	cerr, err := cli.StderrPipe()
	if err != nil {
		killServer()
		return nil, nil, err
	}
	if err := cli.Start(); err != nil {
		killServer()
		return nil, nil, err
	}
	cerrDone := make(chan struct{})
	go func() {
		defer close(cerrDone)
		scanLines(cerr, "["+label+" clients] ", f.compare.verbose, func(line string) {
			if strings.HasPrefix(line, "netclock-load: dialed: ") {
				// The dial phase is over: start the server's warm-up and
				// window now, even if some clients could not connect.
				srv.Process.Signal(syscall.SIGUSR1)
			}
		})
	}()
	<-cerrDone
	cliErr := cli.Wait()
	// The server's window ends about when the clients' does.
	done := make(chan error, 1)
	go func() { <-serrDone; done <- srv.Wait() }()
	var srvErr error
	select {
	case srvErr = <-done:
	case <-time.After(time.Minute):
		srv.Process.Signal(os.Interrupt)
		srvErr = <-done
	}
	var sr ServerReport
	var cr ClientReport
	if err := json.Unmarshal(sout.Bytes(), &sr); err != nil {
		return nil, nil, fmt.Errorf("%s server report: %w (exit: %v)", label, err, srvErr)
	}
	if err := json.Unmarshal(cout.Bytes(), &cr); err != nil {
		return &sr, nil, fmt.Errorf("%s clients report: %w (exit: %v)", label, err, cliErr)
	}
	return &sr, &cr, nil
}

// command returns a subprocess that ctx's end interrupts (SIGINT: it
// still reports), then kills 15 s later.
func command(ctx context.Context, self string, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 15 * time.Second
	return cmd
}

// scanLines reads r line by line, calls fn on each, and copies them to
// stderr with a prefix if verbose, or if they look like errors.
func scanLines(r io.Reader, prefix string, verbose bool, fn func(string)) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		fn(line)
		if verbose || !strings.HasPrefix(line, "netclock-load: ") {
			fmt.Fprintln(os.Stderr, prefix+line)
		}
	}
	io.Copy(io.Discard, r)
}

func runCompare(ctx context.Context, f *flags) error {
	o := f.compare
	dir, err := os.MkdirTemp("", "netclock-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	res := &CompareResult{Started: time.Now().Format(time.RFC3339), Args: strings.Join(os.Args[1:], " ")}
	do := func(part string, rep int, p pairSpec) (*Run, error) {
		kind := "netclock"
		if p.echo {
			kind = "echo"
		}
		logf("(%s) rep %d: %s, %d clients, %v window...", part, rep+1, kind, p.n, p.duration)
		s, c, err := runPair(ctx, f, dir, p)
		if err != nil {
			return nil, fmt.Errorf("(%s) rep %d %s: %w", part, rep+1, kind, err)
		}
		r := Run{Part: part, Rep: rep + 1, Server: s, Clients: c}
		res.Runs = append(res.Runs, r)
		logf("(%s) rep %d %s: connected %d/%d, RTT p50 %.1f µs, server CPU/ping %.1f µs, %d pings",
			part, rep+1, kind, c.Connected, c.N, c.RTT.P50US, s.PerPingUS, s.Pings)
		return &r, nil
	}
	// Each repetition runs netclock and echo back to back, alternating
	// which goes first, so that slow drifts in the machine's load hit
	// both alike.
	pairs := func(part string, n int, d time.Duration) ([][2]*Run, error) {
		var out [][2]*Run
		for rep := range o.reps {
			var nc, ec *Run
			var err error
			for i := range 2 {
				if (i+rep)%2 == 0 {
					nc, err = do(part, rep, pairSpec{n: n, duration: d})
				} else {
					ec, err = do(part, rep, pairSpec{echo: true, n: n, duration: d})
				}
				if err != nil {
					return out, err
				}
			}
			out = append(out, [2]*Run{nc, ec})
		}
		return out, nil
	}
	var a, b [][2]*Run
	var c []cGroup
	var errs []error
	if strings.Contains(o.parts, "a") {
		a, err = pairs("a", 1, o.aDuration)
		errs = append(errs, err)
	}
	if strings.Contains(o.parts, "b") && ctx.Err() == nil {
		b, err = pairs("b", o.bN, o.bDuration)
		errs = append(errs, err)
	}
	if strings.Contains(o.parts, "c") {
		// Per client count: -c-reps repetitions, netclock (and echo with
		// -c-echo) back to back, alternating which goes first.
	cLoop:
		for _, n := range o.cN {
			nc := cGroup{n: n, mode: "netclock"}
			ec := cGroup{n: n, mode: "echo"}
			for rep := range o.cReps {
				for i := range 2 {
					echo := (i+rep)%2 == 1
					if echo && !o.cEcho {
						continue
					}
					if ctx.Err() != nil {
						break cLoop
					}
					r, err := do("c", rep, pairSpec{echo: echo, n: n, duration: o.cDuration, residence: o.cResidence})
					errs = append(errs, err)
					if r == nil {
						continue
					}
					if echo {
						ec.runs = append(ec.runs, r)
					} else {
						nc.runs = append(nc.runs, r)
					}
				}
			}
			c = append(c, nc)
			if o.cEcho {
				c = append(c, ec)
			}
		}
	}
	if o.jsonOut != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(o.jsonOut, b, 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	printTable(os.Stdout, f, a, b, c)
	return errors.Join(errs...)
}

// stat is a median with its min–max over repetitions.
type stat struct{ med, lo, hi float64 }

func statOf(xs []float64) stat {
	if len(xs) == 0 {
		return stat{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stat{m, s[0], s[len(s)-1]}
}

func (s stat) fmt(unit string, prec int) string {
	return fmt.Sprintf("%.*f%s [%.*f–%.*f]", prec, s.med, unit, prec, s.lo, prec, s.hi)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func printTable(w io.Writer, f *flags, a, b [][2]*Run, c []cGroup) {
	o := f.compare
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	defer tw.Flush()
	col := func(rs [][2]*Run, i int, get func(*Run) float64) []float64 {
		var xs []float64
		for _, r := range rs {
			if r[i] != nil {
				xs = append(xs, get(r[i]))
			}
		}
		return xs
	}
	ratio := func(rs [][2]*Run, get func(*Run) float64) []float64 {
		var xs []float64
		for _, r := range rs {
			if r[0] != nil && r[1] != nil && get(r[1]) > 0 {
				xs = append(xs, get(r[0])/get(r[1]))
			}
		}
		return xs
	}
	p50 := func(r *Run) float64 { return r.Clients.RTT.P50US }
	p99 := func(r *Run) float64 { return r.Clients.RTT.P99US }
	if len(a) > 0 {
		fmt.Fprintf(tw, "(a) one client, loopback, ping every %v, %v windows, %d reps: median [min–max]\n", f.ping, o.aDuration, len(a))
		fmt.Fprintf(tw, "\tRTT p50\tRTT p99\tsamples/rep\n")
		fmt.Fprintf(tw, "netclock app-level T4−T1\t%s\t%s\t%.0f\n", statOf(col(a, 0, p50)).fmt(" µs", 1),
			statOf(col(a, 0, p99)).fmt(" µs", 1), statOf(col(a, 0, func(r *Run) float64 { return float64(r.Clients.RTT.Count) })).med)
		fmt.Fprintf(tw, "bare quic-go echo\t%s\t%s\t%.0f\n", statOf(col(a, 1, p50)).fmt(" µs", 1),
			statOf(col(a, 1, p99)).fmt(" µs", 1), statOf(col(a, 1, func(r *Run) float64 { return float64(r.Clients.RTT.Count) })).med)
		ov := ratio(a, p50)
		for i := range ov {
			ov[i] = (ov[i] - 1) * 100
		}
		s := statOf(ov)
		fmt.Fprintf(tw, "overhead of netclock p50 (per rep)\t%s\t\ttarget ≤ 10%%: %s\n", s.fmt(" %", 1), verdict(s.med <= 10))
		est := statOf(col(a, 0, func(r *Run) float64 { return r.Clients.QUICSmoothedRTTUS }))
		fmt.Fprintf(tw, "  (netclock quic-go smoothed RTT %s; estimate RTT (excl. T3−T2) %s)\n", est.fmt(" µs", 1),
			statOf(col(a, 0, func(r *Run) float64 { return r.Clients.EstimateRTTUS })).fmt(" µs", 1))
		fmt.Fprintln(tw)
	}
	if len(b) > 0 {
		cpu := func(r *Run) float64 { return r.Server.PerPingUS }
		fmt.Fprintf(tw, "(b) %d clients, ping every %v, %v windows, %d reps: server CPU (user+sys) per ping exchange\n",
			o.bN, f.ping, o.bDuration, len(b))
		fmt.Fprintf(tw, "\tCPU/exchange\tnet of idle CPU\tserver CPU util (idle)\tpings/rep\tRTT p50\n")
		for i, name := range []string{"netclock", "bare quic-go echo"} {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s (%.1f %%)\t%.0f\t%s\n", name, statOf(col(b, i, cpu)).fmt(" µs", 1),
				statOf(col(b, i, func(r *Run) float64 { return r.Server.PerPingNetUS })).fmt(" µs", 1),
				statOf(col(b, i, func(r *Run) float64 { return r.Server.CPU.Utilization * 100 })).fmt(" %", 1),
				statOf(col(b, i, func(r *Run) float64 { return r.Server.IdleCPU * 100 })).med,
				statOf(col(b, i, func(r *Run) float64 { return float64(r.Server.Pings) })).med,
				statOf(col(b, i, p50)).fmt(" µs", 1))
		}
		s := statOf(ratio(b, cpu))
		sn := statOf(ratio(b, func(r *Run) float64 { return r.Server.PerPingNetUS }))
		fmt.Fprintf(tw, "ratio netclock/echo (per rep)\t%s\t%s\t\t\t\ttarget ≤ 1.15×: %s\n", s.fmt("×", 2), sn.fmt("×", 2), verdict(s.med <= 1.15))
		fmt.Fprintln(tw)
	}
	for _, g := range c {
		if len(g.runs) == 0 {
			continue
		}
		rs := g.runs
		get := func(fn func(*Run) float64) stat {
			var xs []float64
			for _, r := range rs {
				xs = append(xs, fn(r))
			}
			return statOf(xs)
		}
		ints := func(fn func(*Run) int) string {
			var parts []string
			for _, r := range rs {
				parts = append(parts, strconv.Itoa(fn(r)))
			}
			return strings.Join(parts, ", ")
		}
		fmt.Fprintf(tw, "(c) %s: %d clients, ping every %v, %v windows, %d reps: median [min–max]\n",
			g.mode, g.n, f.ping, o.cDuration, len(rs))
		allIn, noRefusal := true, true
		for _, r := range rs {
			allIn = allIn && r.Clients.Connected == g.n
			noRefusal = noRefusal && r.Clients.RefusedForGood == 0
		}
		fmt.Fprintf(tw, "connected (per rep)\t%s of %d; dial %s\n", ints(func(r *Run) int { return r.Clients.Connected }), g.n,
			get(func(r *Run) float64 { return r.Clients.DialS }).fmt(" s", 1))
		fmt.Fprintf(tw, "refused for good (per rep)\t%s (retried refusals %s; other failures retried %s, for good %s)\ttarget 0: %s\n",
			ints(func(r *Run) int { return r.Clients.RefusedForGood }), ints(func(r *Run) int { return r.Clients.RefusedRetried }),
			ints(func(r *Run) int { return r.Clients.FailedRetried }), ints(func(r *Run) int { return r.Clients.FailedForGood }),
			verdict(allIn && noRefusal))
		fmt.Fprintf(tw, "pings answered per client\t%s (clients lost %s, disconnected %s)\n",
			get(func(r *Run) float64 { return r.Clients.PingRateHz }).fmt(" Hz", 2),
			ints(func(r *Run) int { return int(r.Clients.Lost) }), ints(func(r *Run) int { return r.Clients.Disconnected }))
		if rs[0].Server.Residence != nil {
			p99 := get(func(r *Run) float64 { return r.Server.Residence.P99US })
			fmt.Fprintf(tw, "server receive-to-send (UDP residence)\tp50 %s, p99 %s, p99.9 %s\ttarget p99 ≤ 1 ms: %s\n",
				get(func(r *Run) float64 { return r.Server.Residence.P50US }).fmt(" µs", 0), p99.fmt(" µs", 0),
				get(func(r *Run) float64 { return r.Server.Residence.P999US }).fmt(" µs", 0), verdict(p99.med <= 1000))
		} else {
			fmt.Fprintf(tw, "server receive-to-send\tnot measured (-c-residence=false)\n")
		}
		hs := get(func(r *Run) float64 { return r.Server.Mem.PerConnHeapStackBytes / 1024 })
		rss := get(func(r *Run) float64 { return r.Server.Mem.PerConnRSSBytes / 1024 })
		fmt.Fprintf(tw, "server memory per connection\theap+stacks %s (heap %s), RSS %s, %.1f goroutines\ttarget ≤ 100 KiB: heap+stacks %s, RSS %s\n",
			hs.fmt(" KiB", 1), get(func(r *Run) float64 { return r.Server.Mem.PerConnHeapBytes / 1024 }).fmt(" KiB", 1),
			rss.fmt(" KiB", 1), get(func(r *Run) float64 { return r.Server.Mem.PerConnGoroutines }).med,
			verdict(hs.med <= 100), verdict(rss.med <= 100))
		fmt.Fprintf(tw, "server CPU\t%s of a core, %s per ping; GC %s cycles, max pause %s\n",
			get(func(r *Run) float64 { return r.Server.CPU.Utilization * 100 }).fmt(" %", 0),
			get(func(r *Run) float64 { return r.Server.PerPingUS }).fmt(" µs", 1),
			get(func(r *Run) float64 { return float64(r.Server.GC.Cycles) }).fmt("", 0),
			get(func(r *Run) float64 { return r.Server.GC.MaxPauseMS }).fmt(" ms", 2))
		fmt.Fprintf(tw, "client app-level RTT\tp50 %s, p99 %s (clients' process: %s of a core)\n",
			get(func(r *Run) float64 { return r.Clients.RTT.P50US }).fmt(" µs", 0),
			get(func(r *Run) float64 { return r.Clients.RTT.P99US }).fmt(" µs", 0),
			get(func(r *Run) float64 { return r.Clients.CPU.Utilization * 100 }).fmt(" %", 0))
		fmt.Fprintf(tw, "whole machine (%d cores)\tbusy %s cores, steal %s cores\n", rs[0].Server.Machine.Cores,
			get(func(r *Run) float64 { return r.Server.Machine.BusyCores }).fmt("", 2),
			get(func(r *Run) float64 { return r.Server.Machine.StealCores }).fmt("", 2))
		fmt.Fprintln(tw)
	}
}

// cGroup is the runs of (c) for one client count and server.
type cGroup struct {
	n    int
	mode string
	runs []*Run
}
