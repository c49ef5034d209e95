package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/netclock/netclock/transport"
)

// A main package can't be imported, so this test plays the client with the
// transport directly, pinning the certificate file the server wrote as
// examples/client does; examples/client's test plays the server.

// startServer runs the server's run function on 127.0.0.1:0 until the test
// ends, and checks that it shut down cleanly.
func startServer(t *testing.T, cfg config) *server {
	t.Helper()
	cfg.addr = "127.0.0.1:0"
	cfg.rate = 60
	s, err := newServer(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.run(ctx, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run after Ctrl-C: %v, want nil (graceful)", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("run did not return after its context ended")
		}
	})
	return s
}

// dialPinned connects with a TLS config that trusts only the PEM file, and
// waits for sync.
func dialPinned(t *testing.T, s *server, pemFile string) *transport.Client {
	t.Helper()
	data, err := os.ReadFile(pemFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		t.Fatalf("%s holds no certificate", pemFile)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := transport.Dial(ctx, s.Addr().String(), transport.ClientConfig{
		TLSConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	select {
	case <-c.Synced():
	case <-ctx.Done():
		t.Fatal("client not synced within 10s")
	}
	return c
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDevCertificate(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, config{devCertOut: dir})
	if want := filepath.Join(dir, DevCertFile); s.pinFile != want {
		t.Fatalf("certificate written to %q, want %q", s.pinFile, want)
	}
	c := dialPinned(t, s, s.pinFile)
	if r := c.Session().TickRate; r != 60 {
		t.Errorf("tick rate %d, want 60", r)
	}
	waitFor(t, "the server to count the client and answer pings", func() bool {
		st := s.srv.Stats()
		return st.Clients == 1 && st.Pings >= 10
	})
	waitFor(t, "server ticks", func() bool { return s.ticks.Load() > 0 })
}

func TestCertAndKey(t *testing.T) {
	// A certificate and key in files, as a real deployment has them.
	dev, err := transport.DevCertificate("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.MarshalPKCS8PrivateKey(dev.Certificate.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, dev.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, config{certFile: certFile, keyFile: keyFile, devCertOut: dir})
	if s.pinFile != "" {
		t.Errorf("wrote a development certificate %q despite -cert", s.pinFile)
	}
	if _, err := os.Stat(filepath.Join(dir, DevCertFile)); !os.IsNotExist(err) {
		t.Errorf("development certificate file: %v", err)
	}
	dialPinned(t, s, certFile)
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-cert", "c.pem"},
		{"-key", "k.pem"},
		{"-rate", "5000000000"},
		{"extra"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) succeeded", args)
		}
	}
	if got := devHosts("0.0.0.0:4433"); len(got) != 3 {
		t.Errorf("devHosts(0.0.0.0) = %q, want the defaults", got)
	}
	if got := devHosts("game.example:4433"); got[len(got)-1] != "game.example" {
		t.Errorf("devHosts(game.example) = %q", got)
	}
}
