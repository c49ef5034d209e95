// Command server runs a netclock server: the authoritative clock and tick
// system that netclock clients (examples/client) synchronize to over QUIC.
// It prints its time, tick and client count once a second, logs
// connections to stderr, and shuts down gracefully on Ctrl-C (clients see
// the connection closed with transport.CodeGoingAway).
//
// Usage:
//
//	go run ./examples/server [flags]
//
// Flags:
//
//	-addr host:port    UDP address to listen on (default 127.0.0.1:4433; port 0 picks one)
//	-rate n            tick rate in Hz (default 60)
//	-cert file         PEM certificate chain to present (with -key)
//	-key file          PEM private key of -cert
//	-dev-cert-out dir  without -cert and -key: where to write the development
//	                   certificate, as netclock-dev-cert.pem (default .)
//	-debug host:port   serve the live view over HTTP there (e.g. :8080, or
//	                   localhost:8080 to keep it local); it shows every client's address
//	-v                 also log debug events
//
// Without -cert and -key the server makes a self-signed development
// certificate (transport.DevCertificate) for localhost, 127.0.0.1, ::1 and
// the -addr host, and writes it, without its key, for clients to pin. A new
// one is made at every start, so clients must pin it again after a restart:
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
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/netclock/netclock/examples/internal/liveview"
	"github.com/netclock/netclock/ticksys"
	"github.com/netclock/netclock/transport"
)

// DevCertFile is the name of the development certificate in -dev-cert-out.
const DevCertFile = "netclock-dev-cert.pem"

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
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

func runMain(ctx context.Context, args []string) error {
	cfg, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if cfg.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	s, err := newServer(cfg, log)
	if err != nil {
		return err
	}
	if s.pinFile != "" {
		fmt.Printf("development certificate written to %s; pin it with:\n  go run ./examples/client -addr %s -pin %s\n",
			s.pinFile, s.srv.Addr(), s.pinFile)
	}
	if cfg.debug != "" {
		url, stop, err := liveview.Serve(cfg.debug, s.srv.DebugHandler(), os.Stderr)
		if err != nil {
			s.srv.Close()
			return err
		}
		defer stop()
		fmt.Println("live view:", url)
	}
	return s.run(ctx, os.Stdout)
}

type config struct {
	addr              string
	rate              uint32
	certFile, keyFile string
	devCertOut        string
	debug             string
	verbose           bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:4433", "UDP `host:port` to listen on")
	rate := fs.Uint("rate", 60, "tick rate in Hz")
	fs.StringVar(&cfg.certFile, "cert", "", "PEM certificate chain `file` to present (with -key)")
	fs.StringVar(&cfg.keyFile, "key", "", "PEM private key `file` of -cert")
	fs.StringVar(&cfg.devCertOut, "dev-cert-out", ".", "without -cert/-key: `dir`ectory to write "+DevCertFile+" to")
	fs.StringVar(&cfg.debug, "debug", "", "serve the live view over HTTP on `host:port` (e.g. :8080)")
	fs.BoolVar(&cfg.verbose, "v", false, "also log debug events")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if (cfg.certFile == "") != (cfg.keyFile == "") {
		return cfg, errors.New("-cert and -key go together")
	}
	if *rate > math.MaxUint32 {
		return cfg, fmt.Errorf("-rate %d is too high", *rate)
	}
	cfg.rate = uint32(*rate) // the transport validates it
	return cfg, nil
}

// server is a transport.Server with the certificate it presents.
type server struct {
	srv     *transport.Server
	pinFile string // the development certificate written; "" with -cert
	log     *slog.Logger
	ticks   atomic.Int64
}

// newServer loads or makes the certificate and listens. The server serves
// once run is called; until then QUIC handshakes wait.
func newServer(cfg config, log *slog.Logger) (*server, error) {
	s := &server{log: log}
	var tlsConf *tls.Config
	if cfg.certFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.certFile, cfg.keyFile)
		if err != nil {
			return nil, err
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	} else {
		dev, err := transport.DevCertificate(devHosts(cfg.addr)...)
		if err != nil {
			return nil, err
		}
		s.pinFile = filepath.Join(cfg.devCertOut, DevCertFile)
		// The certificate is public; its key never leaves the process.
		if err := os.WriteFile(s.pinFile, dev.CertPEM, 0o644); err != nil {
			return nil, fmt.Errorf("writing the development certificate: %w", err)
		}
		tlsConf = dev.ServerTLS()
	}
	srv, err := transport.Listen(cfg.addr, transport.ServerConfig{TickRate: cfg.rate, TLSConfig: tlsConf, Logger: log})
	if err != nil {
		return nil, err
	}
	s.srv = srv
	srv.System().OnNetworkTick(func(ticksys.TickEvent) { s.ticks.Add(1) })
	return s, nil
}

// devHosts returns the names the development certificate is for: the
// defaults, and the -addr host if it is a specific one.
func devHosts(addr string) []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" || slices.Contains(hosts, host) {
		return hosts
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return hosts // 0.0.0.0 and :: are no name a client dials
	}
	return append(hosts, host)
}

// Addr returns the address the server listens on.
func (s *server) Addr() net.Addr { return s.srv.Addr() }

// run serves clients and prints the server's state once a second until
// ctx ends, then shuts down gracefully: nil after a clean shutdown.
func (s *server) run(ctx context.Context, out io.Writer) error {
	done := make(chan error, 1)
	go func() { done <- s.srv.Serve(ctx) }()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			cerr := s.srv.Close()
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				fmt.Fprintf(out, "shut down at server time %.3fs\n", s.srv.SharedTime().Seconds())
				return cerr
			}
			return err
		case <-t.C:
			st := s.srv.Stats()
			fmt.Fprintf(out, "server time %8.3fs  tick %6d  (%d fired)  clients %d  pings answered %d\n",
				s.srv.SharedTime().Seconds(), s.srv.System().PredictedTime().Tick(), s.ticks.Load(), st.Clients, st.Pings)
		}
	}
}
