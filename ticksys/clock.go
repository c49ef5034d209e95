package ticksys

import (
	"context"
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
// waits sharper than a plain timer's where the OS allows. A type that
// embeds it and overrides only Now keeps its sharp waits in Run.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// fineWindow is how long before a deadline a wait hands over from the Go
// timer to the kernel's. The Go runtime waits for timers in whole
// milliseconds (its poller's timeout), so a plain timer fires up to about
// 1ms late; the window covers that.
const fineWindow = 1500 * time.Microsecond

// After returns a channel that receives once d has passed. On Linux it
// waits on a Go timer until fineWindow before the deadline, then for the
// rest on a kernel timer (a timerfd read through the Go poller: no thread
// or P is held), so it fires within the kernel's timer slack (about 50µs)
// instead of the Go timer's millisecond. It never spins. Elsewhere, and for
// d ≤ fineWindow, it is time.After(d). Like time.After, a wait abandoned
// before it fires ends on its own by the deadline.
//
// Run does not use After on a SystemClock: it waits the same way on its
// own goroutine, with one timer and one timerfd for its whole life.
func (SystemClock) After(d time.Duration) <-chan time.Time {
	if !preciseSleep || d <= fineWindow {
		return time.After(d)
	}
	ch := make(chan time.Time, 1)
	w := newFineWaiter()
	go func() {
		defer w.close()
		w.wait(context.Background(), d)
		ch <- time.Now()
	}()
	return ch
}

// newWaiter gives Run a waiter of its own (see waiterClock).
func (SystemClock) newWaiter() waiter { return newFineWaiter() }

// waiterClock is a Clock with a faster way for Run to wait than After.
type waiterClock interface {
	Clock
	newWaiter() waiter
}

type waiter interface {
	// wait returns once d has passed, or ctx.Err() when ctx ends first
	// (in the last fineWindow, it finishes the wait).
	wait(ctx context.Context, d time.Duration) error
	close()
}

// fineWaiter waits on a Go timer, then on the kernel's timer for the last
// fineWindow.
type fineWaiter struct {
	t    *time.Timer
	fine *kernelTimer // nil where there is none
}

func newFineWaiter() *fineWaiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &fineWaiter{t: t, fine: newKernelTimer()}
}

func (w *fineWaiter) wait(ctx context.Context, d time.Duration) error {
	coarse := d
	if w.fine != nil && d > fineWindow {
		coarse = d - fineWindow
	}
	start, rawStart := time.Now(), rawMonotonic()
	w.t.Reset(coarse)
	select {
	case <-ctx.Done():
		w.t.Stop()
		return ctx.Err()
	case <-w.t.C:
	}
	if coarse == d {
		return nil
	}
	// Under testing/synctest the time package runs on a fake clock that
	// a kernel timer cannot wait for: the fake time that passed then
	// differs from the real. Wait for the rest on the fake clock.
	if time.Since(start)-(rawMonotonic()-rawStart) > fineWindow/4 {
		time.Sleep(time.Until(start.Add(d)))
		return nil
	}
	w.fine.sleepUntil(rawStart + d)
	// A no-op on the real clock; a fake one can still be short of it.
	time.Sleep(time.Until(start.Add(d)))
	return nil
}

func (w *fineWaiter) close() {
	w.t.Stop()
	if w.fine != nil {
		w.fine.close()
	}
}
