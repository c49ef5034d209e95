package ticksys

import (
	"context"
	"fmt"
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

// SystemClock is the Clock of the time package (monotonic readings).
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// DriverConfig configures Run.
type DriverConfig struct {
	// Interval is the time between frames. Default: one tick.
	Interval time.Duration
	// Clock is read for frame times. Default: SystemClock.
	Clock Clock
}

// Run advances the system once per frame until ctx ends, then returns
// ctx.Err(). Each frame advances by the time measured on the clock since the
// previous one, so late wake-ups delay ticks but never lose time. It is the
// loop a headless server needs; a game engine calls Advance from its own
// frame loop instead. Run counts as the system's game loop: don't call
// Advance while it runs.
func (s *System) Run(ctx context.Context, cfg DriverConfig) error {
	if cfg.Interval < 0 {
		return fmt.Errorf("%w: Interval %v is negative", ErrInvalidConfig, cfg.Interval)
	}
	if cfg.Interval == 0 {
		cfg.Interval = time.Second / time.Duration(s.cfg.TickRate)
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	last := cfg.Clock.Now()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		wait := cfg.Interval - cfg.Clock.Now().Sub(last)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-cfg.Clock.After(max(wait, 0)):
		}
		now := cfg.Clock.Now()
		s.Advance(now.Sub(last))
		last = now
	}
}
