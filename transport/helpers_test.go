package transport

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"
)

// minWait is the least any wait here gives a real network event over
// loopback before failing: the timeouts only catch a hung test, they never
// assert speed, and a machine loaded enough (the race detector, other
// packages' tests in parallel) can hold a goroutine for seconds.
const minWait = 30 * time.Second

// eventually polls cond until it holds or timeout (at least minWait)
// passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	timeout = max(timeout, minWait)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
	}
}

// await receives from ch or fails after timeout (at least minWait).
func await[T any](t *testing.T, ch <-chan T, timeout time.Duration, what string) T {
	t.Helper()
	timeout = max(timeout, minWait)
	select {
	case v := <-ch:
		return v
	case <-time.After(timeout):
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
		panic("unreachable")
	}
}

// goroutineBaseline returns a check that the goroutine count has come
// back to what it is now: polled, since goroutines end asynchronously.
func goroutineBaseline(t *testing.T) func() {
	t.Helper()
	before := runtime.NumGoroutine()
	return func() {
		t.Helper()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		deadline := time.After(5 * time.Second)
		for {
			if runtime.NumGoroutine() <= before {
				return
			}
			select {
			case <-tick.C:
			case <-deadline:
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Fatalf("goroutines leaked: %d now, %d before\n%s", runtime.NumGoroutine(), before, buf)
			}
		}
	}
}

var (
	certOnce sync.Once
	cert     DevCert
	certErr  error
)

func testCert(t *testing.T) DevCert {
	t.Helper()
	certOnce.Do(func() { cert, certErr = DevCertificate() })
	if certErr != nil {
		t.Fatal(certErr)
	}
	return cert
}

// startServer listens on loopback and serves until the test ends.
func startServer(t *testing.T, cfg ServerConfig) *Server {
	t.Helper()
	return startServerHooks(t, cfg, serverHooks{})
}

// startServerHooks is startServer with test-only settings.
func startServerHooks(t *testing.T, cfg ServerConfig, hooks serverHooks) *Server {
	t.Helper()
	if cfg.TLSConfig == nil {
		cfg.TLSConfig = testCert(t).ServerTLS()
	}
	srv, err := listen("127.0.0.1:0", cfg, hooks)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve = %v, want ErrServerClosed", err)
		}
	})
	return srv
}

func dialTest(t *testing.T, srv *Server, cfg ClientConfig) (*Client, error) {
	t.Helper()
	return dialTestVersion(t, srv, cfg, 0)
}

// dialTestVersion is dialTest speaking protocol version (0: the current).
func dialTestVersion(t *testing.T, srv *Server, cfg ClientConfig, version uint16) (*Client, error) {
	t.Helper()
	if cfg.TLSConfig == nil {
		cfg.TLSConfig = testCert(t).ClientTLS()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := dialAddr(ctx, srv.Addr().String(), cfg, version)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// logBuffer collects log output safely across goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// awaitSynchronized waits for c to be synchronized (SharedTime valid): a
// loaded machine can hold its pongs up past the silence limit.
func awaitSynchronized(t *testing.T, c *Client) {
	t.Helper()
	eventually(t, 5*time.Second, "the client to be synchronized", func() bool { return c.Stats().Synchronized })
}
