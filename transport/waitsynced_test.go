package transport

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWaitSynced: WaitSynced returns the System once synced, at once
// afterwards; before sync it ends with ctx, or with the client.
func TestWaitSynced(t *testing.T) {
	srv := startServer(t, ServerConfig{})
	t.Run("synced", func(t *testing.T) {
		c, err := dialTest(t, srv, ClientConfig{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sys, err := c.WaitSynced(ctx)
		if err != nil || sys == nil || sys != c.System() {
			t.Fatalf("WaitSynced = %p, %v; want the System %p", sys, err, c.System())
		}
		done, stop := context.WithCancel(context.Background())
		stop()
		if again, err := c.WaitSynced(done); again != sys || err != nil {
			t.Errorf("WaitSynced once synced, with a done ctx = %p, %v; want the System", again, err)
		}
	})
	t.Run("not yet", func(t *testing.T) {
		// A burst of 1000 pings 20 ms apart: no sync for 20 s.
		c, err := dialTest(t, srv, ClientConfig{BurstPings: 1000, SyncTimeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if sys, err := c.WaitSynced(ctx); sys != nil || !errors.Is(err, context.Canceled) {
			t.Errorf("WaitSynced(canceled) = %p, %v; want context.Canceled", sys, err)
		}
		waited := make(chan error, 1)
		go func() {
			_, err := c.WaitSynced(context.Background())
			waited <- err
		}()
		c.Close()
		if err := await(t, waited, 5*time.Second, "WaitSynced to return after Close"); !errors.Is(err, ErrClosed) {
			t.Errorf("WaitSynced across Close = %v, want ErrClosed", err)
		}
	})
}
