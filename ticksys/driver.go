package ticksys

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/netclock/netclock/nettime"
)

// DriverConfig configures Run. The zero value runs on SystemClock.
type DriverConfig struct {
	// Clock is read for frame times and waited on. Default: SystemClock.
	Clock Clock
	// AfterFrame, if set, is called on Run's goroutine after every frame,
	// outside Advance: it may call Reinitialize. Default: none.
	AfterFrame func()
	// MaxSpin, if positive, makes Run on a SystemClock (or a clock
	// embedding it) wake early and busy-wait for the tick start: Run
	// learns how late its sleeps end (the 99th percentile of the last
	// 256, in steps of 50µs), stops sleeping that much before each tick
	// start, at most MaxSpin, and spins on the monotonic clock, yielding
	// to other goroutines, until the tick starts. It trades CPU for
	// punctuality: up to MaxSpin of CPU per tick (MaxSpin × the tick rate
	// as a share of one CPU; see README, "Just in time"), against wake-up
	// delays of a sleeping thread or, on a virtual machine, of a halted
	// virtual CPU, which reach milliseconds. Default 0: never spin (one
	// sleep per tick). At most MaxMaxSpin; negative is an error.
	MaxSpin time.Duration
}

// MaxMaxSpin is the largest DriverConfig.MaxSpin accepted: 100ms.
const MaxMaxSpin = 100 * time.Millisecond

// validate checks cfg and fills in the defaults.
func (cfg *DriverConfig) validate() error {
	if cfg.MaxSpin < 0 || cfg.MaxSpin > MaxMaxSpin {
		return fmt.Errorf("%w: DriverConfig.MaxSpin %v outside [0, %v]", ErrInvalidConfig, cfg.MaxSpin, MaxMaxSpin)
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	return nil
}

// Run advances the system at every tick start until ctx ends, then returns
// ctx.Err() (at once an error wrapping ErrInvalidConfig for a bad cfg). It
// is the loop of a headless server or client; a game engine calls Advance
// from its own frame loop instead. Run counts as the system's
// game loop: don't call Advance while it runs.
//
// Run is tick-aligned: after each frame it waits until predicted time
// reaches the next tick start, then advances by the time measured on the
// clock since the previous frame. The wait is converted to real time at the
// rate predicted time ran in the last frame, so a slewing client wakes on
// its own ticks too (the first tick after the rate changes is off by the
// change: at most 5% of a tick with provider.Steered's defaults), and time
// spent in callbacks shortens it. A wake-up after the tick start only
// delays that tick's callback, never loses time, and the TickEvent's Late
// says by how much; after a stall the ticks that passed fire at once as
// catch-up ticks (see TickEvent.CatchUp). Between ticks Run sleeps on one
// timer (on a SystemClock, a kernel timer where there is one; see
// SystemClock); with DriverConfig.MaxSpin set, on a SystemClock, it wakes
// a learned margin early and spins the rest, because a sleeping thread
// (and, on a virtual machine, a halted virtual CPU) can take milliseconds
// to run again. Other clocks are only slept on.
func (s *System) Run(ctx context.Context, cfg DriverConfig) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	clk := cfg.Clock
	var w waiter
	if wc, ok := clk.(waiterClock); ok {
		w = wc.newWaiter(cfg.MaxSpin)
		defer w.close()
	}
	last := clk.Now()
	scale := 1.0 // predicted time per real time over the last frame
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// The real time from the last frame to the next tick start; the
		// callbacks of the last frame already used part of it.
		due := time.Duration(math.Ceil(float64(s.untilNextTick()) / scale))
		if scale != 1 {
			// Aim a hair past the tick start: the provider's rounding
			// must not make the wake-up fall just short of it.
			due += time.Microsecond
		}
		if wait := min(due-clk.Now().Sub(last), due); wait > 0 {
			if w != nil {
				if err := w.wait(ctx, wait); err != nil {
					return err
				}
			} else {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-clk.After(wait):
				}
			}
		}
		now := clk.Now()
		dt := now.Sub(last)
		p0 := s.PredictedTime()
		resets := s.Stats().Resets
		s.Advance(dt)
		p1 := s.PredictedTime()
		last = now
		if cfg.AfterFrame != nil {
			cfg.AfterFrame()
		}
		switch {
		case s.Stats().Resets != resets:
			scale = 1
		case dt >= scaleWindow:
			scale = min(max(float64(p1.Sub(p0))/float64(dt), 0.5), 2)
		}
	}
}

// scaleWindow is the shortest frame the rate of predicted time is measured
// over; a shorter one (a wake-up just short of a tick start) says nothing.
const scaleWindow = time.Millisecond

// untilNextTick returns the predicted time left until the start of the next
// tick to fire, in (0, one tick] between frames.
func (s *System) untilNextTick() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(nettime.FromTick(s.cfg.TickRate, s.lastFired+1, 0).Sub(s.predicted), 0)
}
