package ticksys

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// jumpClock is a virtual clock that moves only when waited on: After(d)
// advances it by d (plus a scripted lateness) and fires at once. A loop on it
// runs at full speed with exact, reproducible time.
type jumpClock struct {
	now  time.Time
	late []time.Duration // extra delay of successive wake-ups
}

func (c *jumpClock) Now() time.Time { return c.now }

func (c *jumpClock) After(d time.Duration) <-chan time.Time {
	if len(c.late) > 0 {
		d += c.late[0]
		c.late = c.late[1:]
	}
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

func TestRunWithInjectedClock(t *testing.T) {
	clk := &jumpClock{now: time.Unix(1000, 0), late: []time.Duration{0, 0, 50 * time.Millisecond}}
	s := mustNew(t, Config{TickRate: 60})
	ctx, cancel := context.WithCancel(context.Background())
	ticks := 0
	s.OnNetworkTick(func(ev TickEvent) {
		ticks++
		if ev.Predicted.Tick() == 120 {
			cancel()
		}
	})
	err := s.Run(ctx, DriverConfig{Interval: 10 * time.Millisecond, Clock: clk})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if ticks != 120 {
		t.Errorf("%d ticks, want 120", ticks)
	}
	// The late wake-up delayed ticks but lost no time: predicted time is
	// exactly the clock's elapsed time.
	if got, want := s.PredictedTime().Duration(), clk.now.Sub(time.Unix(1000, 0)); got != want {
		t.Errorf("predicted %v, clock elapsed %v", got, want)
	}
}

func TestRunWithSystemClockInVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mustNew(t, Config{TickRate: 30})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := s.Run(ctx, DriverConfig{})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Run = %v", err)
		}
		// Frames land on tick boundaries; the one due exactly at the
		// deadline may or may not run first.
		if got := s.Stats().Ticks; got != 300 && got != 299 {
			t.Errorf("%d ticks in 10s at 30 Hz, want 299 or 300", got)
		}
	})
}

func TestRunRejectsNegativeInterval(t *testing.T) {
	s := mustNew(t, Config{})
	if err := s.Run(context.Background(), DriverConfig{Interval: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Run = %v, want ErrInvalidConfig", err)
	}
}
