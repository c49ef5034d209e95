// Command load measures netclock's QUIC transport under load on this
// machine, against a bare quic-go datagram echo as the baseline.
//
//	go run ./bench/load -mode server -addr 127.0.0.1:4433 -cert-out /tmp/nc.pem -expect 100 -duration 20s
//	go run ./bench/load -mode echo-server -addr 127.0.0.1:4434 -cert-out /tmp/echo.pem -expect 100 -duration 20s
//	go run ./bench/load -mode clients -n 100 -addr 127.0.0.1:4433 -pin /tmp/nc.pem -duration 20s
//	go run ./bench/load -mode clients -n 100 -addr 127.0.0.1:4434 -pin /tmp/echo.pem -duration 20s -echo
//	go run ./bench/load -mode compare            # (a), (b) and (c) below, subprocesses, a table
//	go run ./bench/load -mode compare -quick     # the same at small scale, in about half a minute
//
// A server reports (JSON on stdout) at the end of its measurement window,
// which starts -warmup after -expect clients are connected (or on SIGUSR1,
// or after -expect-timeout) and lasts -duration (0: until SIGINT/SIGTERM,
// which also ends it early). It reports pings answered (transport's
// Server.Stats), its CPU time (getrusage) in the window and per ping, its
// CPU use without clients (-idle: the tick loop), Go heap, stacks and RSS
// without clients and with them (after a forced GC and scavenge) and so
// per connection, refusals and failures, and with -residence the time
// from a ping's UDP read to its pong's UDP write.
//
// Clients dial in a tight loop (-dial-concurrency at once), retrying
// refusals and failures with jittered exponential backoff, wait -warmup,
// measure for -duration, report, stay connected -hold, and close. The
// RTT is T4−T1 of every pong in the window: for netclock clients read off
// the client clock transport stamps T1 and T4 with (see clockHook), for
// echo clients carried in the echoed datagram.
//
// compare re-executes this binary: for each run a server subprocess and a
// clients subprocess (told to start the window by SIGUSR1 when the clients
// are dialed). (a) one client: netclock's app-level RTT p50 vs the bare
// echo's, -reps times; (b) -b-n clients: server CPU per ping exchange,
// netclock vs echo, -reps times; (c) -c-n clients (a list sweeps) at the
// ping rate, -c-reps times (-c-echo: the echo server too): refusals, the
// server's receive-to-send residence (-c-residence), memory per
// connection. netclock and echo runs alternate, so drifts in the load of
// the machine hit both alike. -json-out keeps every report.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// errPrinted marks errors the flag package has printed already.
var errPrinted = errors.New("usage")

type flags struct {
	mode, addr, certOut, pin string
	n, burst                 int
	ping                     time.Duration
	duration, warmup, hold   time.Duration
	expect                   int
	idle                     time.Duration
	expectTimeout            time.Duration
	maxClients               int
	residence                bool
	pingMin, pongMin         int
	echo                     bool
	dialConcurrency          int
	dialAttempts             int
	dialTimeout              time.Duration
	backoff, maxBackoff      time.Duration
	compare                  compareOpts
}

func parseFlags(args []string) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.StringVar(&f.mode, "mode", "compare", "server | echo-server | clients | compare")
	fs.StringVar(&f.addr, "addr", "127.0.0.1:4433", "server: listen address; clients: server address")
	fs.StringVar(&f.certOut, "cert-out", "", "server: write the dev certificate (PEM) here")
	fs.StringVar(&f.pin, "pin", "", "clients: the server's certificate (PEM) to trust")
	fs.IntVar(&f.n, "n", 1, "clients: number of clients")
	fs.DurationVar(&f.ping, "ping", 100*time.Millisecond, "clients: ping interval")
	fs.IntVar(&f.burst, "burst", 0, "clients: netclock start burst (0: transport's default, <0: none)")
	fs.DurationVar(&f.duration, "duration", 0, "measurement window (servers: 0 = until SIGINT; clients: default 20s)")
	fs.DurationVar(&f.warmup, "warmup", 2*time.Second, "wait between all clients connected and the window")
	fs.DurationVar(&f.hold, "hold", time.Second, "clients: stay connected this long after the window")
	fs.IntVar(&f.expect, "expect", 0, "servers: start the window once this many clients are connected")
	fs.DurationVar(&f.idle, "idle", time.Second, "servers: measure the CPU use without clients this long first")
	fs.DurationVar(&f.expectTimeout, "expect-timeout", 2*time.Minute, "servers: start the window anyway after this")
	fs.IntVar(&f.maxClients, "max-clients", -1, "server: transport ServerConfig.MaxClients (0: the transport's default, negative: none)")
	fs.BoolVar(&f.residence, "residence", false, "servers: time pings through the server at the UDP socket "+
		"(disables quic-go's recvmmsg/GSO path: don't use for CPU)")
	fs.IntVar(&f.pingMin, "ping-min", 0, "residence: smallest 1-RTT packet read counted as a ping (0: 48 for netclock, whose server issues 16-byte connection IDs, 36 for the echo)")
	fs.IntVar(&f.pongMin, "pong-min", 0, "residence: smallest 1-RTT packet written counted as a pong (0: 52 for netclock's 30-byte pong, 36 for the 14-byte echo)")
	fs.BoolVar(&f.echo, "echo", false, "clients: bare quic-go echo clients (for -mode echo-server)")
	fs.IntVar(&f.dialConcurrency, "dial-concurrency", 16, "clients: dials in flight at once")
	fs.IntVar(&f.dialAttempts, "dial-attempts", 8, "clients: attempts per client before giving up")
	fs.DurationVar(&f.dialTimeout, "dial-timeout", 10*time.Second, "clients: timeout of one dial")
	fs.DurationVar(&f.backoff, "backoff", 20*time.Millisecond, "clients: first retry delay (doubles, jittered)")
	fs.DurationVar(&f.maxBackoff, "max-backoff", time.Second, "clients: largest retry delay")
	c := &f.compare
	fs.IntVar(&c.reps, "reps", 3, "compare: repetitions of (a) and (b)")
	fs.StringVar(&c.parts, "parts", "abc", "compare: which parts to run")
	fs.DurationVar(&c.aDuration, "a-duration", 20*time.Second, "compare: window of (a)")
	fs.IntVar(&c.bN, "b-n", 100, "compare: clients of (b)")
	fs.DurationVar(&c.bDuration, "b-duration", 20*time.Second, "compare: window of (b)")
	cN := fs.String("c-n", "1000", "compare: clients of (c), or a comma-separated list")
	fs.IntVar(&c.cReps, "c-reps", 1, "compare: repetitions of (c)")
	fs.DurationVar(&c.cDuration, "c-duration", 20*time.Second, "compare: window of (c)")
	fs.BoolVar(&c.cResidence, "c-residence", true, "compare: measure the residence time in (c)")
	fs.BoolVar(&c.cEcho, "c-echo", false, "compare: run (c) against the echo server too")
	fs.StringVar(&c.jsonOut, "json-out", "", "compare: write every report here (JSON)")
	fs.BoolVar(&c.quick, "quick", false, "compare: small scale (reps 1, 3 s windows, b-n 10, c-n 50)")
	fs.BoolVar(&c.verbose, "v", false, "compare: pass the subprocesses' stderr through")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", errPrinted, err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if f.mode == "clients" && !set["duration"] {
		f.duration = 20 * time.Second
	}
	if c.quick {
		for name, apply := range map[string]func(){
			"reps": func() { c.reps = 1 }, "a-duration": func() { c.aDuration = 3 * time.Second },
			"b-duration": func() { c.bDuration = 3 * time.Second }, "c-duration": func() { c.cDuration = 3 * time.Second },
			"b-n": func() { c.bN = 10 }, "c-n": func() { *cN = "50" }, "warmup": func() { f.warmup = time.Second },
		} {
			if !set[name] {
				apply()
			}
		}
	}
	c.warmup, c.ping = f.warmup, f.ping
	for _, v := range strings.Split(*cN, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-c-n: %q is not a client count", v)
		}
		c.cN = append(c.cN, n)
	}
	return f, nil
}

func main() {
	f, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		if !errors.Is(err, errPrinted) {
			logf("%v", err)
		}
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, f); err != nil {
		logf("%v", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, f *flags) error {
	switch f.mode {
	case "server", "echo-server":
		start := make(chan struct{})
		usr1 := make(chan os.Signal, 1)
		signal.Notify(usr1, syscall.SIGUSR1)
		go func() {
			<-usr1
			close(start)
		}()
		rep, err := runServer(ctx, serverOpts{
			echo: f.mode == "echo-server", addr: f.addr, certOut: f.certOut,
			expect: f.expect, start: start, expectTimeout: f.expectTimeout,
			warmup: f.warmup, duration: f.duration, maxClients: f.maxClients, idle: f.idle,
			residence: f.residence, pingMin: f.pingMin, pongMin: f.pongMin,
			ready: func(addr string) { logf("listening on %s", addr) },
		})
		if err != nil {
			return err
		}
		return writeJSON(rep)
	case "clients":
		if f.pin == "" {
			return fmt.Errorf("-mode clients needs -pin (the server's -cert-out)")
		}
		pem, err := os.ReadFile(f.pin)
		if err != nil {
			return err
		}
		rep, err := runClients(ctx, clientOpts{
			echo: f.echo, n: f.n, addr: f.addr, pinPEM: pem, ping: f.ping, burst: f.burst,
			warmup: f.warmup, duration: f.duration, hold: f.hold,
			dialConcurrency: f.dialConcurrency, dialAttempts: f.dialAttempts, dialTimeout: f.dialTimeout,
			backoff: f.backoff, maxBackoff: f.maxBackoff,
			dialed: func(n int) { logf("dialed: connected %d of %d", n, f.n) },
		})
		if err != nil {
			return err
		}
		return writeJSON(rep)
	case "compare":
		return runCompare(ctx, f)
	}
	return fmt.Errorf("unknown -mode %q", f.mode)
}

func writeJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
