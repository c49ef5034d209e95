// Command quickstart is netclock end to end in one process: a netclock
// server and three clients talking QUIC over loopback, each client behind
// an emulated network path (netsim.Conn) and with its own clock, whose
// offset and drift come from a named netsim profile.
//
// Because server and clients share the process, the server clock is at hand,
// so the demo shows what a game relies on, measured rather than believed:
// whether each client agrees with the server on the current tick, the true
// error of its clock (Client.SharedTime minus Server.SharedTime, read back
// to back), the error bound the client publishes and how often the truth
// stayed within it, and how far ahead (predicted time, for inputs) and
// behind (server time, for remote state) its timelines run. Once a second
// it prints a table; at the end, a summary, with each client's inputs on
// time and starved frames of a real input and snapshot stream (bench/jitnet;
// see jit.go).
//
// Usage:
//
//	go run ./examples/quickstart [flags]
//
// Flags:
//
//	-duration d     how long to run (default 20s); Ctrl-C ends early, with a summary
//	-profiles list  comma-separated profile names, one client each (default
//	                fiber,broadband,ue-bad; go run ./bench/accuracy -list names
//	                them); a name ending in .json is a profile file
//	-warmup d       samples taken before d are left out of the summary
//	                (default 5s; at most half of -duration)
//	-seed n         seed of the emulated links (default 1)
//	-compare        also run the accuracy harness (bench/harness, virtual
//	                time) on the same profiles and print both side by side
//	-json           print one JSON object (the summary) on stdout, no live table
//	-debug addr     serve the server's live view over HTTP on addr (e.g. :8080)
//	-v              log the transport's events to stderr
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/netclock/netclock/bench/jitnet"
	"github.com/netclock/netclock/examples/internal/liveview"
	"github.com/netclock/netclock/netsim"
	"github.com/netclock/netclock/transport"
)

const (
	// sampleEvery is how often the true error is sampled: once per frame
	// at 60 Hz, as the harness samples once per client frame.
	sampleEvery = time.Second / 60
	// convergeWithin is the harness's convergence threshold: converged
	// is when |true error| came within it for good.
	convergeWithin = 5 * time.Millisecond
	// dialTimeout bounds the QUIC and netclock handshakes; on ue-bad
	// (100-200 ms each way, 5% loss) a lost handshake packet costs a
	// second or more.
	dialTimeout = 15 * time.Second
)

// errUsage marks flag errors; the flag package has already explained them.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

type options struct {
	duration, warmup       time.Duration
	profiles               []netsim.Profile
	seed                   uint64
	compare, json, verbose bool
	debug                  string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "how long to run")
	names := fs.String("profiles", "fiber,broadband,ue-bad", "comma-separated profile names or .json files, one client each")
	fs.DurationVar(&o.warmup, "warmup", 5*time.Second, "leave samples before this out of the summary (at most half of -duration)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the emulated links (and of the harness with -compare)")
	fs.BoolVar(&o.compare, "compare", false, "also run the accuracy harness on the same profiles and compare")
	fs.BoolVar(&o.json, "json", false, "print only a JSON summary on stdout")
	fs.BoolVar(&o.verbose, "v", false, "log the transport's events to stderr")
	fs.StringVar(&o.debug, "debug", "", "serve the server's live view over HTTP on `host:port` (e.g. :8080)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %q\n", fs.Args())
		fs.Usage()
		return o, errUsage
	}
	if o.duration <= 0 || o.warmup < 0 {
		return o, errors.New("-duration must be positive and -warmup not negative")
	}
	// A summary needs samples after the warm-up (and the harness a
	// warm-up shorter than the run).
	o.warmup = min(o.warmup, o.duration/2)
	for name := range strings.SplitSeq(*names, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		p, err := loadProfile(name)
		if err != nil {
			return o, err
		}
		o.profiles = append(o.profiles, p)
	}
	if len(o.profiles) == 0 {
		return o, errors.New("-profiles names no profile")
	}
	return o, nil
}

func loadProfile(name string) (netsim.Profile, error) {
	if strings.HasSuffix(name, ".json") {
		return netsim.LoadProfile(name)
	}
	p, ok := netsim.ProfileByName(name)
	if !ok {
		return p, fmt.Errorf("unknown profile %q; known: %s", name, strings.Join(netsim.ProfileNames(), ", "))
	}
	return p, nil
}

// run is the whole demo; main only adds the signal handling and exit codes.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// The emulated socket is not a *net.UDPConn, so quic-go cannot size
	// its buffers and would warn about it on every dial.
	os.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
	opt, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	level := slog.LevelWarn
	if opt.verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	// The harness first: it runs in virtual time (milliseconds of CPU),
	// so it is done before the wall-clock run needs the CPU.
	var reports []harnessSummary
	if opt.compare {
		reports = make([]harnessSummary, len(opt.profiles))
		for i, p := range opt.profiles {
			if reports[i], err = runHarness(p, opt); err != nil {
				return err
			}
		}
	}

	dev, err := transport.DevCertificate()
	if err != nil {
		return err
	}
	srv, err := transport.Listen("127.0.0.1:0", transport.ServerConfig{TLSConfig: dev.ServerTLS(),
		Logger: log.With("side", "server")})
	if err != nil {
		return err
	}
	defer srv.Close()
	// Serve ends with Close below, after the clients, so that Ctrl-C shuts
	// down in the same order as the end of -duration.
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(context.Background()) }()
	js := jitnet.NewServer(srv) // the game streams; see jit.go
	defer js.Close()
	var liveURL string
	if opt.debug != "" {
		url, stop, err := liveview.Serve(opt.debug, srv.DebugHandler(), stderr)
		if err != nil {
			return err
		}
		defer stop()
		liveURL = url
		if opt.json { // stdout is the JSON alone
			fmt.Fprintln(stderr, "live view:", url)
		}
	}

	peers := make([]*peer, len(opt.profiles))
	for i, p := range opt.profiles {
		if peers[i], err = newPeer(p, opt.seed); err != nil {
			for _, q := range peers[:i] {
				q.conn.Close()
			}
			return err
		}
	}
	start := time.Now()
	mark := time.AfterFunc(opt.warmup, func() {
		js.Mark()
		for _, p := range peers {
			p.jit.Mark()
		}
	})
	defer mark.Stop()
	runCtx, cancel := context.WithTimeout(ctx, opt.duration)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range peers {
		wg.Go(func() { p.run(runCtx, srv.Addr(), dev, log.With("profile", p.profile.Name)) })
	}
	if !opt.json {
		fmt.Fprintf(stdout, "netclock quickstart: a %d Hz server on %s and %d clients over emulated links, for %v\n",
			srv.TickRate(), srv.Addr(), len(peers), opt.duration)
		if liveURL != "" {
			fmt.Fprintln(stdout, "live view:", liveURL)
		}
	}
	monitor(runCtx, srv, peers, opt, stdout)
	wg.Wait()
	elapsed := time.Since(start)
	streams := collectStreams(srv, js, peers) // before the clients close

	sum := summary{DurationS: elapsed.Seconds(), WarmupS: opt.warmup.Seconds(), Seed: opt.seed,
		SampleHz: float64(time.Second / sampleEvery)}
	st := srv.Stats()
	sum.Server = serverSummary{Tick: srv.System().PredictedTime().Tick(), Accepted: st.Accepted, Pings: st.Pings}
	var errs []error
	for i, p := range peers {
		var h *harnessSummary
		if opt.compare {
			h = &reports[i]
		}
		cs := p.summarize(h)
		cs.Streams = streams[i]
		sum.Clients = append(sum.Clients, cs)
		if c := p.client.Load(); c != nil {
			c.Close()
		}
		p.conn.Close()
		switch {
		case p.err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", p.profile.Name, p.err))
		case !cs.Synced && ctx.Err() == nil: // interrupted early is no failure
			errs = append(errs, fmt.Errorf("%s: not synced after %v", p.profile.Name, elapsed.Round(time.Millisecond)))
		}
	}
	if err := srv.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing the server: %w", err))
	}
	if err := <-serveErr; !errors.Is(err, transport.ErrServerClosed) {
		errs = append(errs, fmt.Errorf("server: %w", err))
	}

	if opt.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else {
		printSummary(stdout, sum)
		if opt.compare {
			printComparison(stdout, sum)
		}
	}
	return errors.Join(errs...)
}
