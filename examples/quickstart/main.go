// Command quickstart is netclock end to end in one process: a netclock
// server and three clients talking QUIC over loopback, each client behind
// an emulated network path (netsim.Conn) and with its own clock, whose
// offset and drift come from a named netsim profile.
//
// Because server and clients share the process, the server clock is at hand
// and each client's true error is known: its estimate of the server clock
// (Client.SharedTime) minus the server clock (Server.Now), read back to
// back. Once a second the demo prints, per client, what the client believes
// (RTT, offset, error bound), its true error, its predicted and server
// ticks, its time scale and its resets. At the end it prints a summary
// (|true error| percentiles after a warm-up, sync time, resets, pings) next
// to the accuracy harness (bench/harness) on the same profiles and seed.
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
//	-warmup d       samples taken before d are left out of the percentiles
//	                (default 5s; at most half of -duration)
//	-seed n         seed of the emulated links and of the harness (default 1)
//	-json           print one JSON object (the summary) on stdout, no live table
//	-debug addr     serve the server's live view over HTTP on addr (e.g. :8080)
//	-v              log the transport's events to stderr
//
// The emulator runs in wall time, not the harness's virtual time: it hands
// each packet on late by the scheduler's wake-up latency (microseconds, up
// to milliseconds on a loaded machine), and the true error is sampled with
// the same latency, so expect errors somewhat above the harness's. The
// summary prints the ratio to the harness run with the same seed, and the
// range over eight seeds: over a run this short the percentiles depend on
// the network's luck (which pings draw the lowest delays, while the drift
// estimate settles) about as much as on anything else, and the emulated
// links draw differently from the harness's even with the same seed, since
// QUIC's handshake and acknowledgements pass through them too.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/netclock/netclock/bench/harness"
	"github.com/netclock/netclock/netsim"
	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/ticksys"
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
	duration, warmup time.Duration
	profiles         []netsim.Profile
	seed             uint64
	json, verbose    bool
	debug            string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "how long to run")
	names := fs.String("profiles", "fiber,broadband,ue-bad", "comma-separated profile names or .json files, one client each")
	fs.DurationVar(&o.warmup, "warmup", 5*time.Second, "leave samples before this out of the percentiles (at most half of -duration)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the emulated links and of the harness")
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
	// The harness needs a warm-up shorter than the run, and a summary
	// needs samples after it.
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
	reports := make([]harnessSummary, len(opt.profiles))
	for i, p := range opt.profiles {
		if reports[i], err = runHarness(p, opt); err != nil {
			return err
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
	if opt.debug != "" {
		url, stop, err := serveDebug(opt.debug, srv.DebugHandler())
		if err != nil {
			return err
		}
		defer stop()
		fmt.Fprintln(stderr, "live view:", url)
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
	runCtx, cancel := context.WithTimeout(ctx, opt.duration)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range peers {
		wg.Go(func() { p.run(runCtx, srv.Addr(), dev, log.With("profile", p.profile.Name)) })
	}
	if !opt.json {
		fmt.Fprintf(stdout, "netclock quickstart: server on %s, %d clients over emulated links, %v\n",
			srv.Addr(), len(peers), opt.duration)
	}
	monitor(runCtx, srv, peers, opt, stdout)
	wg.Wait()
	elapsed := time.Since(start)

	sum := summary{DurationS: elapsed.Seconds(), WarmupS: opt.warmup.Seconds(), Seed: opt.seed,
		SampleHz: float64(time.Second / sampleEvery)}
	st := srv.Stats()
	sum.Server = serverSummary{Tick: srv.System().PredictedTime().Tick(), Accepted: st.Accepted, Pings: st.Pings}
	var errs []error
	for i, p := range peers {
		cs := p.summarize(reports[i])
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
	}
	return errors.Join(errs...)
}

// peer is one emulated client.
type peer struct {
	profile netsim.Profile
	conn    *netsim.Conn
	clock   func() time.Duration // the client clock: the profile's offset, drift, jumps
	start   time.Time            // the profile's true time 0

	client   atomic.Pointer[transport.Client] // nil until dialed
	syncedAt atomic.Int64                     // since start, ns; -1 until synced
	resets   atomic.Int64
	err      error // why the client failed; read after run returns

	// Written by the monitor goroutine only.
	last     time.Duration // the latest true error
	errs     []float64     // |true error| ms after the warm-up
	lastBad  time.Duration // the latest sample with |true error| > convergeWithin
	lastT    time.Duration // the latest sample
	everBad  bool
	sampled  bool
	hasFinal bool
	final    transport.ClientStats // taken when the run ends, before Close
}

// newPeer opens the client's socket behind the profile's links and builds
// its clock on the same time line, so clock jumps and link changes happen
// when the profile says.
func newPeer(p netsim.Profile, seed uint64) (*peer, error) {
	s := p.Server
	if s.Offset != 0 || s.DriftPPM != 0 || len(s.Jumps) > 0 || len(s.Slews) > 0 {
		return nil, fmt.Errorf("profile %s: a server clock model is not supported (the server clock is the real one)", p.Name)
	}
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	conn, err := netsim.NewConn(udp, p, seed)
	if err != nil {
		udp.Close()
		return nil, err
	}
	clock, err := netsim.NewWallClockAt(p.Client, conn.Start())
	if err != nil {
		conn.Close()
		return nil, err
	}
	pr := &peer{profile: p, conn: conn, clock: clock, start: conn.Start()}
	pr.syncedAt.Store(-1)
	return pr, nil
}

// run dials, waits for sync and runs the client's tick system until ctx
// ends.
func (p *peer) run(ctx context.Context, addr net.Addr, dev transport.DevCert, log *slog.Logger) {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	c, err := transport.DialConn(dctx, p.conn, addr, transport.ClientConfig{
		TLSConfig: dev.ClientTLS(), // trusts exactly the server's certificate
		Provider:  provider.ClientConfig{Clock: p.clock},
		Logger:    log,
	})
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			p.err = err
		}
		return
	}
	p.client.Store(c)
	sys, err := c.WaitSynced(ctx)
	if err != nil {
		if ctx.Err() == nil {
			p.err = err // the client stopped
		}
		return
	}
	p.syncedAt.Store(int64(time.Since(p.start)))
	// Subscribed before Run advances the System, so no reset is missed.
	sys.OnReset(func(ev ticksys.ResetEvent) {
		p.resets.Add(1)
		log.Warn("reset", "reason", ev.Reason.String(), "skipped", ev.Skipped)
	})
	if err := c.Run(ctx); err != nil && ctx.Err() == nil {
		p.err = err
	}
}

// trueError reads the client's estimate of the server clock and the server
// clock back to back. The server clock is read before and after and the
// midpoint used, so the reads' own cost cancels; a read pair split by a
// preemption is retried, since its truth is uncertain by the gap.
func trueError(c *transport.Client, srv *transport.Server) (time.Duration, bool) {
	for try := 0; ; try++ {
		before := srv.Now()
		shared, ok := c.SharedTime()
		after := srv.Now()
		if !ok {
			return 0, false
		}
		if gap := after - before; gap < 50*time.Microsecond || try == 2 {
			return shared - (before + gap/2), true
		}
	}
}

// sample records one true-error sample, counting an unsynced client as
// far off (as the harness does) for the convergence time.
func (p *peer) sample(srv *transport.Server, warmup time.Duration) {
	t := time.Since(p.start)
	p.sampled, p.lastT = true, t
	c := p.client.Load()
	var e time.Duration
	ok := c != nil && p.syncedAt.Load() >= 0
	if ok {
		e, ok = trueError(c, srv)
	}
	if !ok {
		p.lastBad, p.everBad = t, true
		return
	}
	p.last = e
	abs := e.Abs()
	if abs > convergeWithin {
		p.lastBad, p.everBad = t, true
	}
	if t >= warmup {
		p.errs = append(p.errs, ms(abs))
	}
}

// monitor samples every client's true error at 60 Hz and, unless -json,
// prints the live table once a second, until ctx ends.
func monitor(ctx context.Context, srv *transport.Server, peers []*peer, opt options, w io.Writer) {
	start := time.Now()
	samples := time.NewTicker(sampleEvery)
	defer samples.Stop()
	table := time.NewTicker(time.Second)
	defer table.Stop()
	for {
		select {
		case <-ctx.Done():
			// The final state, before the clients close.
			for _, p := range peers {
				if c := p.client.Load(); c != nil {
					p.final, p.hasFinal = c.Stats(), true
				}
			}
			return
		case <-samples.C:
			for _, p := range peers {
				p.sample(srv, opt.warmup)
			}
		case <-table.C:
			if !opt.json {
				printTable(w, time.Since(start), srv, peers)
			}
		}
	}
}

func printTable(w io.Writer, elapsed time.Duration, srv *transport.Server, peers []*peer) {
	st := srv.Stats()
	fmt.Fprintf(w, "\n%4.0fs  server tick %d, %d clients, %d pings answered\n",
		elapsed.Seconds(), srv.System().PredictedTime().Tick(), st.Clients, st.Pings)
	names := make([]string, len(peers))
	for i, p := range peers {
		names[i] = p.profile.Name
	}
	name := leftAlign(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tRTT ms\toffset ms\ttrue error ms\terror bound ms\tpredicted tick\tserver tick\tscale\tresets\t\n", name("profile"))
	for _, p := range peers {
		c := p.client.Load()
		switch {
		case c == nil:
			fmt.Fprintf(tw, "%s\tconnecting\t\t\t\t\t\t\t\t\n", name(p.profile.Name))
			continue
		case p.syncedAt.Load() < 0:
			fmt.Fprintf(tw, "%s\tsyncing (%d pongs)\t\t\t\t\t\t\t\t\n", name(p.profile.Name), c.Stats().PongsReceived)
			continue
		}
		cs := c.Stats()
		sys := c.System()
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%+.3f\t%.3f\t%d\t%d\t%.4f\t%d\t\n", name(p.profile.Name),
			ms(cs.RTT), ms(cs.Offset), ms(p.last), ms(cs.ErrorBound),
			sys.PredictedTime().Tick(), sys.ServerTime().Tick(), cs.PredictedScale, p.resets.Load())
	}
	tw.Flush()
}

// summary is the outcome of a run; -json prints it as is.
type summary struct {
	DurationS float64         `json:"duration_s"`
	WarmupS   float64         `json:"warmup_s"`
	Seed      uint64          `json:"seed"`
	SampleHz  float64         `json:"sample_hz"`
	Server    serverSummary   `json:"server"`
	Clients   []clientSummary `json:"clients"`
}

type serverSummary struct {
	Tick     int64 `json:"tick"`
	Accepted int64 `json:"accepted"`
	Pings    int64 `json:"pings_answered"`
}

// percentiles of |true error|, in ms (nearest rank, as the harness).
type percentiles struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

type clientSummary struct {
	Profile string `json:"profile"`
	Synced  bool   `json:"synced"`
	// SyncS is the time from opening the socket (dial, QUIC and netclock
	// handshakes, the start burst) to sync; nil if never.
	SyncS *float64 `json:"sync_s"`
	// ConvergeS is when |true error| came within 5 ms for good, as the
	// harness defines it; nil if it never did.
	ConvergeS   *float64    `json:"converge_s"`
	Samples     int         `json:"samples"`
	TrueErrorMS percentiles `json:"true_error_ms"`
	// The client's own view at the end.
	RTTMS        float64 `json:"rtt_ms"`
	OffsetMS     float64 `json:"offset_ms"`
	ErrorBoundMS float64 `json:"error_bound_ms"`
	DriftPPM     float64 `json:"drift_ppm"`
	// Resets counts every reset event (hard resets and stalls).
	Resets        int64          `json:"resets"`
	PingsSent     int64          `json:"pings_sent"`
	PingsLost     int64          `json:"pings_lost"`
	PongsReceived int64          `json:"pongs_received"`
	Harness       harnessSummary `json:"harness"`
	// RatioP50 and RatioP99 are the quickstart's percentiles over the
	// harness's; nil where the harness's is 0.
	RatioP50 *float64 `json:"ratio_p50"`
	RatioP99 *float64 `json:"ratio_p99"`
}

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

func (p *peer) summarize(h harnessSummary) clientSummary {
	cs := clientSummary{Profile: p.profile.Name, Samples: len(p.errs), Resets: p.resets.Load(), Harness: h}
	if at := p.syncedAt.Load(); at >= 0 {
		cs.Synced = true
		cs.SyncS = ptr(time.Duration(at).Seconds())
	}
	switch {
	case p.sampled && !p.everBad:
		cs.ConvergeS = ptr(0.0)
	case p.sampled && p.lastBad < p.lastT:
		cs.ConvergeS = ptr(p.lastBad.Seconds())
	}
	slices.Sort(p.errs)
	cs.TrueErrorMS = percentiles{P50: quantile(p.errs, 0.5), P99: quantile(p.errs, 0.99), Max: quantile(p.errs, 1)}
	if p.hasFinal {
		f := p.final
		cs.RTTMS, cs.OffsetMS, cs.ErrorBoundMS, cs.DriftPPM = ms(f.RTT), ms(f.Offset), ms(f.ErrorBound), f.DriftPPM
		cs.PingsSent, cs.PingsLost, cs.PongsReceived = f.PingsSent, f.Lost, f.PongsReceived
	}
	if cs.Samples > 0 {
		cs.RatioP50 = ratio(cs.TrueErrorMS.P50, h.TrueErrorMS.P50)
		cs.RatioP99 = ratio(cs.TrueErrorMS.P99, h.TrueErrorMS.P99)
	}
	return cs
}

func printSummary(w io.Writer, s summary) {
	fmt.Fprintf(w, "\nSummary: %.1fs; |true error| (ms) after the first %v, sampled at %.0f Hz\n",
		s.DurationS, time.Duration(s.WarmupS*float64(time.Second)), s.SampleHz)
	names := make([]string, len(s.Clients))
	for i, c := range s.Clients {
		names[i] = c.Profile
	}
	name := leftAlign(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tsamples\tp50\tp99\tmax\tsynced after\tconverged\tresets\tpings sent\tlost\t\n", name("profile"))
	for _, c := range s.Clients {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%s\t%s\t%d\t%d\t%d\t\n", name(c.Profile), c.Samples,
			c.TrueErrorMS.P50, c.TrueErrorMS.P99, c.TrueErrorMS.Max, secs(c.SyncS), secs(c.ConvergeS),
			c.Resets, c.PingsSent, c.PingsLost)
	}
	tw.Flush()

	seeds := 0
	if len(s.Clients) > 0 {
		seeds = s.Clients[0].Harness.Seeds
	}
	fmt.Fprintf(w, "\nAgainst the accuracy harness: netclock on the same profiles, %.0fs simulated, same warm-up,\n", s.DurationS)
	fmt.Fprintf(w, "seed %d as the emulated links, and the range over seeds %d-%d. The harness runs in virtual\n",
		s.Seed, s.Seed, s.Seed+uint64(seeds)-1)
	fmt.Fprintln(w, "time (no wake-up latency); the issue expects the ratio within 2x of wall-clock noise.")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tquickstart p50\tp99\tharness p50\tp99\tratio p50\tratio p99\tharness p50 range\tp99 range\tharness converged\t\n",
		name("profile"))
	for _, c := range s.Clients {
		h := c.Harness
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%s\t%.3f-%.3f\t%.3f-%.3f\t%s\t\n", name(c.Profile),
			c.TrueErrorMS.P50, c.TrueErrorMS.P99, h.TrueErrorMS.P50, h.TrueErrorMS.P99,
			times(c.RatioP50), times(c.RatioP99), h.P50Range[0], h.P50Range[1], h.P99Range[0], h.P99Range[1],
			secs(h.ConvergeS))
	}
	tw.Flush()
}

// leftAlign pads names to the longest (and "profile"), so that the first
// column of a right-aligned table reads left-aligned.
func leftAlign(names []string) func(string) string {
	width := len("profile")
	for _, n := range names {
		width = max(width, len(n))
	}
	return func(s string) string { return fmt.Sprintf("%-*s", width, s) }
}

// quantile returns the q-quantile of sorted v (nearest rank, as the
// harness); 0 if empty.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[max(0, min(len(v)-1, i))]
}

func ratio(a, b float64) *float64 {
	if b == 0 {
		return nil
	}
	return ptr(a / b)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func ptr[T any](v T) *T { return &v }

func secs(s *float64) string {
	if s == nil {
		return "never"
	}
	return fmt.Sprintf("%.2fs", *s)
}

func times(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.2fx", *r)
}
