package ticksys

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/provider"
)

// jumpClock is a virtual clock that moves only when waited on or told to:
// After(d) advances it by d (plus a scripted lateness) and fires at once. A
// loop on it runs at full speed with exact, reproducible time.
type jumpClock struct {
	now   time.Time
	late  []time.Duration // extra delay of successive wake-ups
	waits []time.Duration // every d passed to After
}

func (c *jumpClock) Now() time.Time { return c.now }

func (c *jumpClock) After(d time.Duration) <-chan time.Time {
	c.waits = append(c.waits, d)
	if len(c.late) > 0 {
		d += c.late[0]
		c.late = c.late[1:]
	}
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

var epoch = time.Unix(1000, 0)

// TestRunWakesAtTickStarts: the driver waits exactly to each tick start
// (from a start time between ticks), never a fixed interval after the last
// frame, and a late wake-up is reported in Late and caught up at once.
func TestRunWakesAtTickStarts(t *testing.T) {
	const tick = 10 * time.Millisecond // 100 Hz
	clk := &jumpClock{now: epoch, late: []time.Duration{0, 0, 300 * time.Microsecond, 0, 25 * time.Millisecond, 0}}
	s := mustNew(t, Config{TickRate: 100, Start: 4 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	type fired struct {
		Tick    int64
		Late    time.Duration
		CatchUp bool
	}
	var got []fired
	s.OnNetworkTick(func(ev TickEvent) {
		got = append(got, fired{ev.Predicted.Tick(), ev.Late, ev.CatchUp()})
		if ev.Predicted.Tick() == 8 {
			cancel()
		}
	})
	if err := s.Run(ctx, DriverConfig{Clock: clk}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	want := []fired{
		{1, 0, false},
		{2, 0, false},
		{3, 300 * time.Microsecond, false},
		{4, 0, false}, // the next wait is shortened by the lateness
		{5, 25 * time.Millisecond, true},
		{6, 15 * time.Millisecond, true},
		{7, 5 * time.Millisecond, false},
		{8, 0, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tick events (-want +got):\n%s", diff)
	}
	wantWaits := []time.Duration{6 * time.Millisecond, tick, tick, tick - 300*time.Microsecond, tick, 5 * time.Millisecond}
	if diff := cmp.Diff(wantWaits, clk.waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

// TestRunSubtractsCallbackTime: time spent in callbacks shortens the wait
// for the next tick instead of pushing every later tick back.
func TestRunSubtractsCallbackTime(t *testing.T) {
	clk := &jumpClock{now: epoch}
	s := mustNew(t, Config{TickRate: 50}) // 20ms ticks
	ctx, cancel := context.WithCancel(context.Background())
	var late []time.Duration
	s.OnNetworkTick(func(ev TickEvent) {
		late = append(late, ev.Late)
		clk.now = clk.now.Add(7 * time.Millisecond) // a slow callback
		if len(late) == 50 {
			cancel()
		}
	})
	if err := s.Run(ctx, DriverConfig{Clock: clk}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	for i, l := range late {
		if l != 0 {
			t.Fatalf("tick %d fired %v late, want every tick on time", i+1, l)
		}
	}
	for i, w := range clk.waits[1:] {
		if w != 13*time.Millisecond {
			t.Fatalf("wait %d is %v, want 20ms tick - 7ms callback", i+1, w)
		}
	}
}

// TestRunFollowsSlewingClient: a client's predicted time runs faster or
// slower than real time while the provider slews; the driver converts the
// distance to the next tick at the rate of the last frame, so it still
// wakes at the tick starts, not a slew's worth (up to 5%) off.
func TestRunFollowsSlewingClient(t *testing.T) {
	for _, offset := range []time.Duration{150 * time.Millisecond, -150 * time.Millisecond} {
		clk := &jumpClock{now: epoch}
		c, err := provider.NewSteered(provider.SteeredConfig{Clock: func() time.Duration { return clk.now.Sub(epoch) }})
		if err != nil {
			t.Fatal(err)
		}
		c.SetEstimate(provider.Estimate{Valid: true, Offset: time.Minute})
		s := mustNew(t, Config{Provider: c, TickRate: 30})
		e := c.Estimate()
		e.Offset += offset // slewed at the 5% limit for seconds, then less
		c.SetEstimate(e)
		ctx, cancel := context.WithCancel(context.Background())
		var maxLate time.Duration
		n := 0
		var scale float64
		s.OnNetworkTick(func(ev TickEvent) {
			if n++; n == 1 {
				// The driver learns the new rate in this frame.
				if ev.Late > nettime.New(30, 0).FixedDelta()/20 {
					t.Errorf("offset %v: first tick %v late, more than the 5%% slew", offset, ev.Late)
				}
				return
			}
			maxLate = max(maxLate, ev.Late)
			if n == 30 {
				scale = c.Status().PredictedScale
			}
			if n == 300 {
				cancel()
			}
		})
		if err := s.Run(ctx, DriverConfig{Clock: clk}); !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v", err)
		}
		if scale == 1 {
			t.Fatalf("offset %v: not slewing, the test tests nothing", offset)
		}
		// A naive wait of the predicted distance would land up to 5% of a
		// 33ms tick (1.7ms) off. The driver follows the last frame's
		// rate, which moves by up to ~0.2% per frame while the error
		// decays (~60µs of a 33ms tick), and aims 1µs past the start.
		if maxLate > 100*time.Microsecond {
			t.Errorf("offset %v (scale %.3f after 1s): a tick fired %v late", offset, scale, maxLate)
		}
		if s.Stats().Resets != 0 {
			t.Errorf("offset %v: %d resets", offset, s.Stats().Resets)
		}
	}
}

func TestRunAfterFrame(t *testing.T) {
	clk := &jumpClock{now: epoch}
	s := mustNew(t, Config{TickRate: 60})
	ctx, cancel := context.WithCancel(context.Background())
	frames, reinits := 0, 0
	s.OnReset(func(ev ResetEvent) {
		if ev.Reason == ReasonReinitialize {
			reinits++
		}
	})
	err := s.Run(ctx, DriverConfig{Clock: clk, AfterFrame: func() {
		frames++
		if frames == 10 {
			s.Reinitialize() // allowed: outside Advance, on the loop's goroutine
		}
		if frames == 20 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	if frames != 20 || reinits != 1 || s.Stats().Ticks != 20 {
		t.Errorf("%d frames, %d reinitializations, %d ticks; want 20, 1, 20", frames, reinits, s.Stats().Ticks)
	}
}

// TestRunWithSystemClockInVirtualTime runs the real clock under synctest:
// SystemClock must wait on the fake clock there, not the kernel's, and
// every tick fires exactly at its start.
func TestRunWithSystemClockInVirtualTime(t *testing.T) {
	for _, spin := range []time.Duration{0, 2 * time.Millisecond} {
		t.Run(fmt.Sprintf("MaxSpin %v", spin), func(t *testing.T) { runInVirtualTime(t, spin) })
	}
}

// runInVirtualTime: a spinning wait would never end on the fake clock (it
// moves only while every goroutine sleeps), so there Run only sleeps.
func runInVirtualTime(t *testing.T, spin time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		s := mustNew(t, Config{TickRate: 30})
		var maxLate time.Duration
		s.OnNetworkTick(func(ev TickEvent) { maxLate = max(maxLate, ev.Late) })
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := s.Run(ctx, DriverConfig{MaxSpin: spin})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Run = %v", err)
		}
		// The tick due exactly at the deadline may or may not run first.
		if got := s.Stats().Ticks; got != 300 && got != 299 {
			t.Errorf("%d ticks in 10s at 30 Hz, want 299 or 300", got)
		}
		if maxLate != 0 {
			t.Errorf("a tick fired %v late in virtual time", maxLate)
		}
	})
}

func TestSystemClockAfterInVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, d := range []time.Duration{0, time.Millisecond, 1500*time.Microsecond + time.Nanosecond, 7 * time.Millisecond, time.Second} {
			start := time.Now()
			<-SystemClock{}.After(d)
			if got := time.Since(start); got != d {
				t.Errorf("After(%v) fired after %v", d, got)
			}
		}
	})
}

// TestSystemClockNeverEarly waits on the real clock, through After and
// through Run's own waiter (a kernel timer on Linux): a wait may end late
// on a busy machine, never early. No timing is asserted beyond that.
func TestSystemClockNeverEarly(t *testing.T) {
	for _, d := range []time.Duration{0, 300 * time.Microsecond, 1700 * time.Microsecond, 4 * time.Millisecond} {
		start := time.Now()
		<-SystemClock{}.After(d)
		if got := time.Since(start); got < d {
			t.Errorf("After(%v) fired after %v", d, got)
		}
		// Sleeping only, spinning only (a margin beyond any wait), and
		// both (a learned margin).
		for _, spin := range []time.Duration{0, time.Hour, 2 * time.Millisecond} {
			w := SystemClock{}.newWaiter(spin)
			for range 3 {
				start = time.Now()
				if err := w.wait(context.Background(), d); err != nil {
					t.Fatal(err)
				}
				if got := time.Since(start); got < d {
					t.Errorf("spin %v: wait(%v) returned after %v", spin, d, got)
				}
			}
			w.close()
		}
	}
	// A canceled wait returns the context's error.
	w := SystemClock{}.newWaiter(0)
	defer w.close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.wait(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled wait = %v", err)
	}
}

func TestFakeClockDetected(t *testing.T) {
	if fakeClock() {
		t.Error("the real clock taken for a fake one")
	}
	synctest.Test(t, func(t *testing.T) {
		if haveKernelTimer && !fakeClock() {
			t.Error("synctest's clock not detected")
		}
	})
}

// TestSystemWaitCanceledWhileWaiting cancels an hour-long wait from another
// goroutine, before or during the kernel timer's read, or while it spins
// (a margin of an hour: all spin).
func TestSystemWaitCanceledWhileWaiting(t *testing.T) {
	for _, spin := range []time.Duration{0, time.Hour} {
		w := SystemClock{}.newWaiter(spin)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.wait(ctx, time.Hour) }()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("spin %v: wait = %v, want context.Canceled", spin, err)
		}
		w.close()
	}
}
