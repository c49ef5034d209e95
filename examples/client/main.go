// Command client connects to a netclock server (examples/server), keeps an
// estimate of the server clock and runs a tick system in step with it. Once
// a second it prints its sync state: the offset of the server clock from
// its own, the round trip, the error bound, the drift, its predicted and
// server ticks, the time scale its provider runs at, its resets and the
// ticks fired. Ctrl-C closes the connection gracefully.
//
// Usage:
//
//	go run ./examples/client [flags]
//
// Flags:
//
//	-addr host:port     the server's UDP address (default 127.0.0.1:4433)
//	-pin file           PEM certificate(s) to trust instead of the system roots:
//	                    the server's development certificate, or a private CA
//	-server-name name   the name to verify the certificate for (default: the -addr host)
//	-rate n             tick rate to insist on; 0 accepts the server's (default 0)
//	-duration d         stop after d; 0 runs until Ctrl-C (default 0)
//	-debug host:port    serve this client's live view over HTTP there (e.g. :8081)
//	-v                  also log the transport's info events
//
// For example, against a server with a development certificate:
//
//	go run ./examples/server -addr 127.0.0.1:4433
//	go run ./examples/client -addr 127.0.0.1:4433 -pin netclock-dev-cert.pem
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/netclock/netclock/examples/internal/liveview"
	"github.com/netclock/netclock/ticksys"
	"github.com/netclock/netclock/transport"
)

// dialTimeout bounds the QUIC and netclock handshakes.
const dialTimeout = 10 * time.Second

// errUsage marks flag errors; the flag package has already explained them.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := runMain(ctx, os.Args[1:])
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
}

func runMain(ctx context.Context, args []string) error {
	cfg, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	level := slog.LevelWarn
	if cfg.verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if cfg.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.duration)
		defer cancel()
	}
	res, err := run(ctx, cfg, os.Stdout, log)
	if err != nil {
		return err
	}
	fmt.Printf("closed after %d ticks, %d resets; %d pings sent, %d lost\n",
		res.Ticks, res.Resets, res.Stats.PingsSent, res.Stats.Lost)
	return nil
}

type config struct {
	addr, pin, serverName string
	debug                 string
	rate                  uint32
	duration              time.Duration
	verbose               bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:4433", "the server's UDP `host:port`")
	fs.StringVar(&cfg.pin, "pin", "", "PEM certificate `file` to trust instead of the system roots")
	fs.StringVar(&cfg.serverName, "server-name", "", "`name` to verify the certificate for (default: the -addr host)")
	rate := fs.Uint("rate", 0, "tick rate to insist on; 0 accepts the server's")
	fs.DurationVar(&cfg.duration, "duration", 0, "stop after this long; 0 runs until Ctrl-C")
	fs.StringVar(&cfg.debug, "debug", "", "serve this client's live view over HTTP on `host:port` (e.g. :8081)")
	fs.BoolVar(&cfg.verbose, "v", false, "also log the transport's info events")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *rate > math.MaxUint32 {
		return cfg, fmt.Errorf("-rate %d is too high", *rate)
	}
	cfg.rate = uint32(*rate) // the transport validates it
	if cfg.serverName == "" {
		host, _, err := net.SplitHostPort(cfg.addr)
		if err != nil {
			return cfg, fmt.Errorf("-addr: %w", err)
		}
		cfg.serverName = host
	}
	return cfg, nil
}

// clientTLS returns the TLS config verifying the server as serverName:
// against the certificates in the PEM file pemFile (transport's pin
// helper), or the system roots if pemFile is empty.
func clientTLS(pemFile, serverName string) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS13}
	if pemFile != "" {
		pem, err := os.ReadFile(pemFile)
		if err != nil {
			return nil, err
		}
		if conf, err = transport.PinnedClientTLS(pem); err != nil {
			return nil, fmt.Errorf("%s: %w", pemFile, err)
		}
	}
	conf.ServerName = serverName
	return conf, nil
}

// result is what a run did.
type result struct {
	Session transport.Session
	// SyncedAfter is the time from dialing to sync; 0 if never synced.
	SyncedAfter time.Duration
	// Ticks and Resets count the System's events.
	Ticks, Resets int64
	// Stats are the client's last.
	Stats transport.ClientStats
}

// Synced reports whether the client synced.
func (r result) Synced() bool { return r.SyncedAfter > 0 }

// run dials the server, prints the sync state once a second and runs the
// tick system until ctx ends (nil: a graceful stop) or the connection does.
func run(ctx context.Context, cfg config, out io.Writer, log *slog.Logger) (result, error) {
	var res result
	tlsConf, err := clientTLS(cfg.pin, cfg.serverName)
	if err != nil {
		return res, err
	}
	start := time.Now()
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	c, err := transport.Dial(dctx, cfg.addr, transport.ClientConfig{TLSConfig: tlsConf, TickRate: cfg.rate, Logger: log})
	cancel()
	if err != nil {
		return res, err
	}
	defer c.Close()
	if cfg.debug != "" {
		url, stop, err := liveview.Serve(cfg.debug, c.DebugHandler(), os.Stderr)
		if err != nil {
			return res, err
		}
		defer stop()
		fmt.Fprintln(out, "live view:", url)
	}
	res.Session = c.Session()
	fmt.Fprintf(out, "connected to %s: %d Hz, session epoch %016x, pings over %s\n",
		cfg.addr, res.Session.TickRate, res.Session.Epoch, res.Session.Mode)

	var ticks, resets atomic.Int64
	var syncedAfter atomic.Int64
	runDone := make(chan error, 1)
	go func() {
		sys, err := c.WaitSynced(ctx)
		if err != nil {
			runDone <- err
			return
		}
		syncedAfter.Store(int64(time.Since(start)))
		// Subscribed before Run advances the System: no event is missed.
		sys.OnNetworkTick(func(ticksys.TickEvent) { ticks.Add(1) })
		sys.OnReset(func(ev ticksys.ResetEvent) {
			resets.Add(1)
			log.Warn("reset", "reason", ev.Reason.String(), "skipped", ev.Skipped,
				"old_predicted", ev.OldPredicted.Duration(), "new_predicted", ev.NewPredicted.Duration())
		})
		runDone <- c.Run(ctx)
	}()

	t := time.NewTicker(time.Second)
	defer t.Stop()
loop:
	for {
		select {
		case err = <-runDone:
			break loop
		case <-t.C:
			printState(out, c, ticks.Load(), resets.Load())
		}
	}
	res.SyncedAfter = time.Duration(syncedAfter.Load())
	res.Ticks, res.Resets = ticks.Load(), resets.Load()
	res.Stats = c.Stats()
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return res, c.Close() // stopped by the caller: graceful
	}
	return res, fmt.Errorf("connection to %s ended: %w", cfg.addr, err)
}

func printState(w io.Writer, c *transport.Client, ticks, resets int64) {
	st := c.Stats()
	sys := c.System()
	if sys == nil {
		fmt.Fprintf(w, "syncing: %d pongs of %d pings\n", st.PongsReceived, st.PingsSent)
		return
	}
	fmt.Fprintf(w, "offset %+.3fms  rtt %.3fms  bound ±%.3fms  drift %+.1fppm  tick %d (server %d)  scale %.4f  resets %d  ticks fired %d\n",
		ms(st.Offset), ms(st.RTT), ms(st.ErrorBound), st.DriftPPM,
		sys.PredictedTime().Tick(), sys.ServerTime().Tick(), st.PredictedScale, resets, ticks)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
