// Command attack replays the attacks of issue 8 against a netclock server
// running in a process of its own, on loopback, and reports what they cost
// the server (resident memory read from /proc, goroutines, its stats) and
// what the well-behaved clients saw.
//
// Usage:
//
//	go run ./bench/attack [-scenario partial,flood,restart,pause] [-log file] [flags]
//
// Scenarios:
//
//	partial  -good well-behaved clients, then -hostile raw QUIC clients
//	         (each from its own 127.0.1.x address) that fill every stream
//	         the server allows: junk after the hello and a 64 KiB message
//	         frame left unfinished (reopened whenever the server stops it),
//	         held for -hold; with -extra-stream, data on a stream the
//	         protocol does not have too.
//	flood    -good well-behaved clients, then -flood-conns connections from
//	         one UDP socket (127.0.0.2) over -flood-for, each held if
//	         admitted; then all closed.
//	restart  -good clients with Reconnect; the server is killed (SIGKILL)
//	         and restarted on the same port with the same certificate: how
//	         long until each client reports not synchronized, and until it
//	         reinitialized on the new server.
//	pause    -good clients; the server is stopped (SIGSTOP) for -pause,
//	         then resumed: the clients' state at the end of the pause, and
//	         their true error and bound coverage in the -settle after.
//
// Every report of the good clients counts their reset events by reason:
// hard (the provider stepped time), stall (a client's own loop was not
// scheduled for longer than ticksys' catch-up cap), reinit (a restarted
// server: one per client is by design). -log writes their logs and each
// reset, with the estimate after it, as JSON lines.
//
// Everything runs on 127.0.0.0/8 and every loop ends by itself. The server
// process is this binary with -role server.
package main

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

type options struct {
	scenarios   string
	good        int
	hostile     int
	hold        time.Duration
	floodConns  int
	floodFor    time.Duration
	settle      time.Duration
	extraStream bool
	pause       time.Duration
	out         io.Writer    // the report
	log         *slog.Logger // the good clients' logs and reset events, if set
}

func main() {
	var role, addr, dir string
	var perSource int
	var o options
	fs := flag.NewFlagSet("attack", flag.ContinueOnError)
	fs.StringVar(&role, "role", "driver", "driver, or server (started by the driver)")
	fs.StringVar(&addr, "addr", "127.0.0.1:0", "server: address to listen on")
	fs.StringVar(&dir, "dir", "", "server: directory with cert.pem and key.pem")
	fs.IntVar(&perSource, "per-source", 0, "server: MaxClientsPerSource (0: the default)")
	fs.StringVar(&o.scenarios, "scenario", "partial,flood,restart,pause", "scenarios to run, comma-separated")
	fs.IntVar(&o.good, "good", 20, "well-behaved clients")
	fs.IntVar(&o.hostile, "hostile", 50, "partial: hostile clients")
	fs.DurationVar(&o.hold, "hold", 15*time.Second, "partial: how long the hostile clients hold on")
	fs.IntVar(&o.floodConns, "flood-conns", 3000, "flood: connection attempts")
	fs.DurationVar(&o.floodFor, "flood-for", 60*time.Second, "flood: spread over this long")
	fs.BoolVar(&o.extraStream, "extra-stream", false, "partial: hostile clients also open a stream the protocol does not have")
	fs.DurationVar(&o.pause, "pause", 5*time.Second, "pause: how long the server is stopped")
	var logPath string
	fs.StringVar(&logPath, "log", "", "write the good clients' logs and every reset event they see (JSON lines) to this file")
	fs.DurationVar(&o.settle, "settle", 20*time.Second, "how long to watch the server after an attack ends")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	log.SetFlags(0)
	if role == "server" {
		if err := runServer(addr, dir, perSource, os.Stdin, os.Stdout); err != nil {
			log.Fatalf("server: %v", err)
		}
		return
	}
	o.out = os.Stdout
	if logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		o.log = slog.New(slog.NewJSONHandler(f, nil))
	}
	if err := drive(o); err != nil {
		log.Fatal(err)
	}
}

// drive runs the scenarios in turn, each against a fresh server process.
func drive(o options) error {
	dir, err := os.MkdirTemp("", "netclock-attack")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	dev, err := writeCert(dir)
	if err != nil {
		return err
	}
	ctx := context.Background()
	for _, sc := range strings.Split(o.scenarios, ",") {
		fmt.Fprintf(o.out, "== %s\n", sc)
		switch strings.TrimSpace(sc) {
		case "partial":
			err = partial(ctx, o, dir, dev)
		case "flood":
			err = flood(ctx, o, dir, dev)
		case "restart":
			err = restart(ctx, o, dir, dev)
		case "pause":
			err = pause(ctx, o, dir, dev)
		default:
			err = fmt.Errorf("unknown scenario %q", sc)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", sc, err)
		}
	}
	return nil
}

// writeCert makes a development certificate and writes it and its key to
// dir, for the server processes to load: every run of the server has the
// same key, and so the same stateless reset key.
func writeCert(dir string) (devCert, error) {
	dev, err := newDevCert()
	if err != nil {
		return devCert{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(dev.Certificate.PrivateKey)
	if err != nil {
		return devCert{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), dev.CertPEM, 0o600); err != nil {
		return devCert{}, err
	}
	key := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	return dev, os.WriteFile(filepath.Join(dir, "key.pem"), key, 0o600)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
