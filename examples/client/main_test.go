package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netclock/netclock/transport"
)

// A main package can't be imported, so this test plays the server with the
// transport directly, writing its development certificate to a file as
// examples/server does; examples/server's test plays the client.

// startServer serves on 127.0.0.1:0 until the test ends and returns its
// address and the file its certificate was written to.
func startServer(t *testing.T) (addr, pemFile string) {
	t.Helper()
	dev, err := transport.DevCertificate()
	if err != nil {
		t.Fatal(err)
	}
	pemFile = filepath.Join(t.TempDir(), "netclock-dev-cert.pem")
	if err := os.WriteFile(pemFile, dev.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := transport.Listen("127.0.0.1:0", transport.ServerConfig{TLSConfig: dev.ServerTLS()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, transport.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv.Addr().String(), pemFile
}

func TestRunSyncs(t *testing.T) {
	addr, pemFile := startServer(t)
	cfg, err := parseFlags([]string{"-addr", addr, "-pin", pemFile}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// About 2 s: sync takes the start burst (200 ms) on loopback.
	ctx, cancel := context.WithTimeout(context.Background(), 2100*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	res, err := run(ctx, cfg, &out, slog.New(slog.DiscardHandler))
	t.Logf("output:\n%s", out.Bytes())
	if err != nil {
		t.Fatalf("run: %v, want nil when its context ends", err)
	}
	if !res.Synced() {
		t.Fatal("not synced")
	}
	if res.Session.TickRate != 60 {
		t.Errorf("tick rate %d, want the server's 60", res.Session.TickRate)
	}
	if res.Ticks == 0 || res.Stats.PongsReceived < 10 || res.Stats.ErrorBound <= 0 {
		t.Errorf("result %+v", res)
	}
	if n := strings.Count(out.String(), "offset "); n < 1 {
		t.Errorf("%d sync state lines printed", n)
	}
}

func TestRunRejectsWrongPin(t *testing.T) {
	addr, _ := startServer(t)
	other, err := transport.DevCertificate()
	if err != nil {
		t.Fatal(err)
	}
	pemFile := filepath.Join(t.TempDir(), "other.pem")
	if err := os.WriteFile(pemFile, other.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = run(ctx, config{addr: addr, pin: pemFile, serverName: "127.0.0.1"}, io.Discard, slog.New(slog.DiscardHandler))
	if !errors.Is(err, transport.ErrCertificateMismatch) || ctx.Err() != nil {
		t.Fatalf("run with another certificate pinned: %v, want ErrCertificateMismatch at once", err)
	}
	t.Logf("refused: %v", err)
}

func TestFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-addr", "[::1]:4433"}, io.Discard)
	if err != nil || cfg.serverName != "::1" {
		t.Errorf("parseFlags: %+v, %v; want server name ::1", cfg, err)
	}
	for _, args := range [][]string{{"-addr", "no-port"}, {"-rate", "5000000000"}, {"extra"}} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) succeeded", args)
		}
	}
	if _, err := clientTLS(filepath.Join(t.TempDir(), "missing.pem"), "x"); err == nil {
		t.Error("clientTLS with a missing file succeeded")
	}
}
