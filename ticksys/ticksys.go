// Package ticksys holds System, which advances network time through a
// provider.Provider and fires an event for every predicted tick that passes,
// so a game runs its simulation at a fixed tick rate in step with the server.
//
// Guarantees, between resets: predicted ticks fire in order, each exactly
// once; the server time carried by tick events never goes backwards; one call
// to Advance fires at most Config.MaxTicksPerAdvance ticks, however long the
// stall before it. Anything that breaks continuity (a hard reset by the
// provider, skipped ticks after a stall, a reinitialization) fires one
// ResetEvent saying what happened.
package ticksys

import (
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/provider"
)

// DefaultTickRate is the tick rate used when Config.TickRate is zero.
const DefaultTickRate = 60

// ErrInvalidConfig is wrapped by every configuration error.
var ErrInvalidConfig = errors.New("ticksys: invalid config")

// Config configures a System. The zero value is a 60 Hz server.
type Config struct {
	// TickRate is the number of ticks per second. Default: 60.
	TickRate uint32
	// Provider advances time. Default: provider.Constant{}, the authority.
	// Its methods are called with the System's lock held: a provider must
	// not call the System it belongs to (that deadlocks).
	Provider provider.Provider
	// Start is the server time the system starts at, since tick 0.
	// Default: 0.
	Start time.Duration
	// MaxTicksPerAdvance caps the ticks one Advance fires; older ticks
	// beyond the cap are skipped and reported. Default: the number of
	// ticks in 250ms, at least 1.
	MaxTicksPerAdvance int
	// Logger receives resets and stalls. Default: no logging.
	Logger *slog.Logger
}

// Reason says why a ResetEvent fired.
type Reason int

const (
	// ReasonHardReset: the provider stepped time instead of advancing it
	// smoothly (it returned false, or moved a time backwards).
	ReasonHardReset Reason = iota + 1
	// ReasonStall: more ticks passed in one Advance than the cap; the
	// oldest were skipped.
	ReasonStall
	// ReasonReinitialize: Reinitialize was called, for example after a
	// reconnect.
	ReasonReinitialize
)

// String returns the reason's name as logs print it: "hard-reset",
// "stall" or "reinitialize" ("Reason(n)" for an unknown value).
func (r Reason) String() string {
	switch r {
	case ReasonHardReset:
		return "hard-reset"
	case ReasonStall:
		return "stall"
	case ReasonReinitialize:
		return "reinitialize"
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// TickEvent is one predicted tick passing.
type TickEvent struct {
	// Predicted is the start of the predicted tick that passed.
	Predicted nettime.Time
	// Server is the server time at the moment predicted time reached the
	// start of that tick. It never goes backwards between resets, but two
	// consecutive events may share a server tick (or skip one) while the
	// provider runs the two timelines at different speeds.
	Server nettime.Time
	// Late is how far predicted time had passed the start of this tick
	// when the event was fired: the frame's predicted time minus
	// Predicted. Run wakes at each tick start, so there it is the timer's
	// lateness (typically under a millisecond); from a game loop it
	// includes the wait for the frame. It is never negative.
	Late time.Duration
}

// CatchUp reports whether the tick fired a whole tick or more after it
// started (Late ≥ one tick): the next tick had begun too, so the callback
// is catching up after a stall or a slow frame. A callback may skip
// optional work (rendering, sending snapshots) in a catch-up tick.
func (e TickEvent) CatchUp() bool { return e.Late >= e.Predicted.FixedDelta() }

// ResetEvent reports a break in the continuity of time.
type ResetEvent struct {
	// Reason says why the break happened.
	Reason Reason
	// OldPredicted and NewPredicted are the predicted time just before and
	// just after the break.
	OldPredicted, NewPredicted nettime.Time
	// OldServer and NewServer are the server time just before and just
	// after the break.
	OldServer, NewServer nettime.Time
	// Skipped is the number of predicted ticks that did not fire
	// (ReasonStall), or the signed number of ticks predicted time jumped
	// (ReasonHardReset, ReasonReinitialize).
	Skipped int64
}

// Stats are running counts of a System.
type Stats struct {
	Ticks   int64 // tick events fired
	Resets  int64 // reset events fired, all reasons
	Skipped int64 // ticks skipped by stalls
}

type sub[E any] struct {
	fn     func(E)
	active atomic.Bool
}

// System advances network time and fires tick and reset events.
//
// System is safe for concurrent use: times, stats and subscriptions may be
// used from any goroutine. Advance and Reinitialize, which fire the
// callbacks, must not overlap: they are called by one game loop, and calling
// one of them while another runs, including from inside a callback, panics.
// Callbacks run on the goroutine that called Advance, with no lock held.
type System struct {
	cfg      Config
	log      *slog.Logger
	running  atomic.Bool
	reinit   atomic.Bool // RequestReinitialize was called
	tickSubs atomic.Pointer[[]*sub[TickEvent]]
	rstSubs  atomic.Pointer[[]*sub[ResetEvent]]

	mu        sync.Mutex // guards the fields below and subscription writes
	predicted nettime.Time
	server    nettime.Time
	shownP    nettime.Time // what PredictedTime returns (the tick's, during callbacks)
	shownS    nettime.Time
	lastFired int64 // predicted tick last fired or entered by a reset
	stats     Stats
}

// New returns a System, or an error wrapping ErrInvalidConfig. It calls the
// provider's InitializeClient with both times at cfg.Start.
func New(cfg Config) (*System, error) {
	if cfg.TickRate == 0 {
		cfg.TickRate = DefaultTickRate
	}
	if err := nettime.ValidateRate(cfg.TickRate); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if cfg.Provider == nil {
		cfg.Provider = provider.Constant{}
	}
	if cfg.MaxTicksPerAdvance < 0 {
		return nil, fmt.Errorf("%w: MaxTicksPerAdvance %d is negative", ErrInvalidConfig, cfg.MaxTicksPerAdvance)
	}
	if cfg.MaxTicksPerAdvance == 0 {
		cfg.MaxTicksPerAdvance = max(1, int(cfg.TickRate/4))
	}
	if cfg.Start > nettime.MaxDuration || cfg.Start < -nettime.MaxDuration {
		return nil, fmt.Errorf("%w: Start %v: %w", ErrInvalidConfig, cfg.Start, nettime.ErrOutOfRange)
	}
	s := &System{cfg: cfg, log: cfg.Logger}
	s.server = nettime.New(cfg.TickRate, cfg.Start)
	s.predicted = s.server
	cfg.Provider.InitializeClient(&s.predicted, &s.server)
	s.checkRate()
	s.shownP, s.shownS = s.predicted, s.server
	s.lastFired = s.predicted.Tick()
	s.tickSubs.Store(&[]*sub[TickEvent]{})
	s.rstSubs.Store(&[]*sub[ResetEvent]{})
	return s, nil
}

func (s *System) checkRate() {
	if s.predicted.TickRate() != s.cfg.TickRate || s.server.TickRate() != s.cfg.TickRate {
		panic(fmt.Sprintf("ticksys: provider %T changed the tick rate to %d/%d Hz",
			s.cfg.Provider, s.predicted.TickRate(), s.server.TickRate()))
	}
}

// TickRate returns the tick rate in ticks per second.
func (s *System) TickRate() uint32 { return s.cfg.TickRate }

// PredictedTime returns predicted time: the server time at which a message
// sent now will be processed by the server. Inside a tick callback it is the
// start of that tick.
func (s *System) PredictedTime() nettime.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shownP
}

// ServerTime returns server time: the time of the newest server state the
// client can show smoothly. Inside a tick callback it is the event's.
func (s *System) ServerTime() nettime.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shownS
}

// Stats returns the running counts.
func (s *System) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// OnNetworkTick subscribes fn to tick events and returns a function that
// cancels the subscription. After cancel returns, fn is not called again,
// even for an event being fired. Both are safe to call from a callback; a
// subscription made during an event starts with the next event.
// It panics if fn is nil.
func (s *System) OnNetworkTick(fn func(TickEvent)) (cancel func()) {
	return subscribe(&s.mu, &s.tickSubs, fn)
}

// OnReset subscribes fn to reset events, like OnNetworkTick.
func (s *System) OnReset(fn func(ResetEvent)) (cancel func()) {
	return subscribe(&s.mu, &s.rstSubs, fn)
}

func subscribe[E any](mu *sync.Mutex, list *atomic.Pointer[[]*sub[E]], fn func(E)) func() {
	if fn == nil {
		panic("ticksys: nil callback")
	}
	sb := &sub[E]{fn: fn}
	sb.active.Store(true)
	mu.Lock()
	old := *list.Load()
	next := make([]*sub[E], len(old), len(old)+1)
	copy(next, old)
	next = append(next, sb)
	list.Store(&next)
	mu.Unlock()
	return func() {
		if !sb.active.Swap(false) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		old := *list.Load()
		next := make([]*sub[E], 0, len(old))
		for _, o := range old {
			if o != sb {
				next = append(next, o)
			}
		}
		list.Store(&next)
	}
}

func fire[E any](list *atomic.Pointer[[]*sub[E]], e E) {
	for _, sb := range *list.Load() {
		if sb.active.Load() {
			sb.fn(e)
		}
	}
}

func (s *System) enter(op string) {
	if !s.running.CompareAndSwap(false, true) {
		panic("ticksys: " + op + " called while Advance or Reinitialize is running (from a callback or another goroutine)")
	}
}

// Advance advances time by dt of real time (a negative dt counts as zero)
// and fires the events for what passed. It returns the number of tick events
// fired. See System for the rules on calling it. It panics if the provider changes
// the tick rate of either time (a provider bug).
//
// The provider decides how far time moves: provider.Constant by dt, so a
// server's loop must pass the real time since its previous frame (Run
// does); provider.Steered by its own Clock, the one source of elapsed time
// on a client, so there dt is advisory and a fixed, clamped or scaled dt
// does not bend network time.
func (s *System) Advance(dt time.Duration) int {
	s.enter("Advance")
	defer s.running.Store(false)
	if dt < 0 {
		dt = 0
	}
	if s.reinit.Swap(false) {
		s.reinitialize()
	}

	s.mu.Lock()
	p0, s0 := s.predicted, s.server
	ok := s.cfg.Provider.AdvanceTime(&s.predicted, &s.server, dt)
	s.checkRate()
	p1, s1 := s.predicted, s.server
	s.shownP, s.shownS = p1, s1
	if !ok || p1.Before(p0) || s1.Before(s0) {
		ev := ResetEvent{Reason: ReasonHardReset, OldPredicted: p0, NewPredicted: p1,
			OldServer: s0, NewServer: s1, Skipped: p1.Tick() - p0.Tick()}
		s.lastFired = p1.Tick()
		s.stats.Resets++
		s.mu.Unlock()
		s.reset(ev)
		return 0
	}
	first, last := s.lastFired+1, p1.Tick()
	if last < first {
		s.mu.Unlock()
		return 0
	}
	var skipped int64
	if n := last - first + 1; n > int64(s.cfg.MaxTicksPerAdvance) {
		skipped = n - int64(s.cfg.MaxTicksPerAdvance)
		first += skipped
		s.stats.Skipped += skipped
		s.stats.Resets++
	}
	s.mu.Unlock()

	if skipped > 0 {
		s.reset(ResetEvent{Reason: ReasonStall, OldPredicted: p0, NewPredicted: p1,
			OldServer: s0, NewServer: s1, Skipped: skipped})
	}
	rate := s.cfg.TickRate
	for k := first; k <= last; k++ {
		pk := nettime.FromTick(rate, k, 0)
		sk := s0.Add(interpolate(s1.Sub(s0), pk.Sub(p0), p1.Sub(p0)))
		s.mu.Lock()
		s.lastFired = k
		s.stats.Ticks++
		s.shownP, s.shownS = pk, sk
		s.mu.Unlock()
		fire(&s.tickSubs, TickEvent{Predicted: pk, Server: sk, Late: p1.Sub(pk)})
	}
	s.mu.Lock()
	s.shownP, s.shownS = p1, s1
	s.mu.Unlock()
	return int(last - first + 1)
}

// interpolate returns span*num/den rounded down, for 0 <= num <= den and
// span >= 0, without overflow.
func interpolate(span, num, den time.Duration) time.Duration {
	if den <= 0 || num >= den {
		return span
	}
	if num <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(span), uint64(num))
	q, _ := bits.Div64(hi, lo, uint64(den)) // hi < den since num < den
	return time.Duration(q)
}

// Reinitialize asks the provider for fresh initial times, as after a
// reconnect to a restarted server, and fires a ResetEvent with
// ReasonReinitialize. Ticks resume after the new predicted tick. It follows
// Advance's rules (see System); from another goroutine, use
// RequestReinitialize.
func (s *System) Reinitialize() {
	s.enter("Reinitialize")
	defer s.running.Store(false)
	s.reinit.Store(false)
	s.reinitialize()
}

// RequestReinitialize makes the next Advance (or Run's next frame) start
// with a Reinitialize, on its goroutine. It is safe from any goroutine: a
// network goroutine that learns the server restarted calls it, and the
// game loop sees the ResetEvent between its own frames.
func (s *System) RequestReinitialize() { s.reinit.Store(true) }

func (s *System) reinitialize() {
	s.mu.Lock()
	p0, s0 := s.predicted, s.server
	s.predicted = s.server
	s.cfg.Provider.InitializeClient(&s.predicted, &s.server)
	s.checkRate()
	s.shownP, s.shownS = s.predicted, s.server
	s.lastFired = s.predicted.Tick()
	s.stats.Resets++
	ev := ResetEvent{Reason: ReasonReinitialize, OldPredicted: p0, NewPredicted: s.predicted,
		OldServer: s0, NewServer: s.server, Skipped: s.predicted.Tick() - p0.Tick()}
	s.mu.Unlock()
	s.reset(ev)
}

func (s *System) reset(ev ResetEvent) {
	if s.log != nil {
		s.log.Warn("netclock: time reset", "reason", ev.Reason.String(),
			"old_predicted", ev.OldPredicted.String(), "new_predicted", ev.NewPredicted.String(),
			"old_server", ev.OldServer.String(), "new_server", ev.NewServer.String(),
			"skipped_ticks", ev.Skipped)
	}
	fire(&s.rstSubs, ev)
}
