package ticksys

import "time"

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
// waits sharper than a plain timer's where the OS allows.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// fineWindow is how long before a deadline After hands over from the Go
// timer to the OS's own sleep. The Go runtime waits for timers in whole
// milliseconds (its poller's timeout), so a plain timer fires up to about
// 1ms late; the window covers that.
const fineWindow = 1500 * time.Microsecond

// After returns a channel that receives once d has passed. On Linux it
// waits on a Go timer until fineWindow before the deadline, then sleeps the
// rest in one nanosleep system call on that goroutine: the wake-up is
// within the kernel's timer slack (about 50µs) instead of the Go timer's
// millisecond. It never spins. Elsewhere, and for d ≤ fineWindow, it is
// time.After(d).
//
// Like time.After, a wait abandoned before it fires ends on its own by the
// deadline; the fine stage is a goroutine that lives at most fineWindow.
func (SystemClock) After(d time.Duration) <-chan time.Time {
	if !preciseSleep || d <= fineWindow {
		return time.After(d)
	}
	start, rawStart := time.Now(), rawMonotonic()
	deadline := start.Add(d)
	ch := make(chan time.Time, 1)
	time.AfterFunc(d-fineWindow, func() {
		rest := time.Until(deadline)
		// Under testing/synctest the time package runs on a fake clock
		// that a system call cannot wait for: the fake time that passed
		// differs from the real. Wait for the rest on the fake clock.
		if time.Since(start)-(rawMonotonic()-rawStart) > fineWindow/4 {
			time.Sleep(rest)
		} else if rest > 0 {
			sleep(rest)
			// Only a fake clock can still be short of the deadline.
			time.Sleep(time.Until(deadline))
		}
		ch <- time.Now()
	})
	return ch
}
