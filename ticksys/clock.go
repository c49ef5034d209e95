package ticksys

import (
	"context"
	"runtime"
	"time"
)

// Clock is the monotonic clock a driver reads and waits on. The standard
// clock is SystemClock; tests inject a virtual one.
type Clock interface {
	// Now returns the current time; only differences between readings
	// are used, so it must be monotonic.
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the clock of the time package (monotonic readings), with
// waits sharper than a Go timer's where the OS allows. A type that embeds
// it and overrides only Now keeps its sharp waits in Run.
//
// Go's timers fire up to about a millisecond late: the runtime waits for
// them in whole milliseconds. On Linux, SystemClock also sets a kernel
// timer (a timerfd on CLOCK_MONOTONIC, read through the Go poller, so no
// thread is held and, unless DriverConfig.MaxSpin asks, nothing spins),
// which wakes within the kernel's timer slack (about 50µs); the Go timer
// remains as a backstop, for a process too busy to poll. Run holds one such timer (a file descriptor) while it
// runs. Elsewhere, when no timerfd can be made, and under testing/synctest
// (whose fake clock a kernel timer cannot follow), it waits on Go timers
// only.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// After returns a channel that receives once d has passed (see
// SystemClock). Like time.After, a wait abandoned before it fires ends on
// its own by the deadline.
func (SystemClock) After(d time.Duration) <-chan time.Time {
	if d <= 0 || fakeClock() {
		return time.After(d)
	}
	k := newKernelTimer()
	if k == nil {
		return time.After(d)
	}
	ch := make(chan time.Time, 1)
	go func() {
		defer k.close()
		k.wait(context.Background(), d)
		ch <- time.Now()
	}()
	return ch
}

// newWaiter gives Run a waiter of its own (see waiterClock) that spins for
// at most maxSpin before each deadline (0: never).
func (SystemClock) newWaiter(maxSpin time.Duration) waiter {
	return &systemWaiter{t: time.NewTimer(time.Hour), k: newKernelTimer(), m: wakeMargin{max: maxSpin}}
}

// waiterClock is a Clock with a cheaper or sharper way for Run to wait than
// After.
type waiterClock interface {
	Clock
	newWaiter(maxSpin time.Duration) waiter
}

type waiter interface {
	// wait returns once d has passed, or ctx.Err() if ctx ends first.
	wait(ctx context.Context, d time.Duration) error
	close()
}

// systemWaiter is SystemClock's waiter: one Go timer and one kernel timer
// (nil where there is none) for the life of a Run. It sleeps until the
// learned wake-up margin before the deadline, then spins (see
// DriverConfig.MaxSpin).
type systemWaiter struct {
	t *time.Timer
	k *kernelTimer
	m wakeMargin
}

func (w *systemWaiter) wait(ctx context.Context, d time.Duration) error {
	if fakeClock() {
		// A fake clock moves only while every goroutine sleeps: sleep
		// exactly, never spin.
		return w.sleep(ctx, d)
	}
	start := time.Now()
	if s := d - w.m.margin(); s > 0 {
		if err := w.sleep(ctx, s); err != nil {
			return err
		}
		w.m.observe(time.Since(start) - s)
	}
	return spinUntil(ctx, start.Add(d))
}

// sleep blocks until d has passed, or ctx ends.
func (w *systemWaiter) sleep(ctx context.Context, d time.Duration) error {
	if w.k != nil && !fakeClock() {
		return w.k.wait(ctx, d)
	}
	w.t.Reset(d)
	select {
	case <-ctx.Done():
		w.t.Stop()
		return ctx.Err()
	case <-w.t.C:
		return nil
	}
}

// spinUntil busy-waits until the monotonic clock reaches t or ctx ends,
// yielding the processor to any other runnable goroutine on every turn.
func spinUntil(ctx context.Context, t time.Time) error {
	done := ctx.Done()
	for time.Now().Before(t) {
		select {
		case <-done:
			return ctx.Err()
		default:
		}
		runtime.Gosched()
	}
	return nil
}

func (w *systemWaiter) close() {
	w.t.Stop()
	if w.k != nil {
		w.k.close()
	}
}

// The time package's clock and the raw monotonic clock at start-up.
var startTime, startRaw = time.Now(), rawMonotonic()

// fakeClock reports whether the time package runs on a fake clock, as in a
// testing/synctest bubble (which starts in the year 2000): its time since
// start-up then differs from the kernel's.
func fakeClock() bool {
	if !haveKernelTimer {
		return false
	}
	diff := time.Since(startTime) - (rawMonotonic() - startRaw)
	return diff > time.Second || diff < -time.Second
}
