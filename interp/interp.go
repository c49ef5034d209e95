// Package interp holds Buffer, a client's snapshot interpolation buffer:
// the client adds each state the server sent, stamped with the server time
// (tick) it belongs to, and asks, every frame, for the two states around
// its server time and how far between them it is. The client's server time
// (ticksys' ServerTime) runs behind the newest state by the interpolation
// delay, so normally there is a state on both sides; when there is not, the
// buffer says it must extrapolate, and by how much, or hold.
//
// Snapshots may arrive out of order or twice: they are kept sorted by time,
// and a duplicate is dropped. The buffer holds at most Capacity snapshots,
// evicting the oldest.
package interp

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/netclock/netclock/nettime"
)

// Defaults of Config.
const (
	// DefaultCapacity is Mirror's snapshot buffer limit.
	DefaultCapacity = 32
	// DefaultMaxExtrapolationTicks is Netcode for Entities'
	// MaxExtrapolationTimeSimTicks.
	DefaultMaxExtrapolationTicks = 20
)

// Errors of Add; each is wrapped with the snapshot's time.
var (
	// ErrDuplicate: a snapshot with the same time is buffered; the first
	// is kept.
	ErrDuplicate = errors.New("interp: duplicate snapshot")
	// ErrTooOld: the buffer is full and the snapshot is older than all of
	// it; it is dropped.
	ErrTooOld = errors.New("interp: snapshot older than a full buffer")
	// ErrTickRate: the snapshot's tick rate differs from the buffered
	// ones' (or it is the zero Time).
	ErrTickRate = errors.New("interp: snapshot tick rate differs")
	// ErrInvalidConfig is wrapped by every configuration error.
	ErrInvalidConfig = errors.New("interp: invalid config")
)

// Config configures a Buffer. The zero value gives the defaults.
type Config struct {
	// Capacity is the most snapshots held; adding to a full buffer evicts
	// the oldest. Default: DefaultCapacity (32). At most 4096.
	Capacity int
	// MaxExtrapolation is how far past the newest snapshot At
	// extrapolates; beyond it, At holds there (ModeStale). Default:
	// DefaultMaxExtrapolationTicks ticks at the snapshots' tick rate.
	// Negative: never extrapolate.
	MaxExtrapolation time.Duration
}

// Mode says how At found its sample.
type Mode int

const (
	// ModeEmpty: no snapshot yet; the Sample is zero.
	ModeEmpty Mode = iota
	// ModeInterpolate: the time is between two snapshots (or on one):
	// From ≤ time ≤ To, 0 ≤ Frac ≤ 1.
	ModeInterpolate
	// ModeExtrapolate: the time is past the newest snapshot by
	// Sample.Extrapolated, at most MaxExtrapolation: Frac > 1 continues
	// the last pair's motion (Frac is 0 with one snapshot). The buffer
	// ran dry: the interpolation delay was too short for that arrival.
	ModeExtrapolate
	// ModeStale: the time is more than MaxExtrapolation past the newest
	// snapshot; the sample is held at MaxExtrapolation.
	ModeStale
	// ModeBehind: the time is before the oldest snapshot (evicted, or the
	// timeline was reset back); the sample holds the oldest, Frac 0.
	ModeBehind
)

// String returns the mode's name: "empty", "interpolate",
// "extrapolate", "stale" or "behind" ("Mode(n)" for an unknown value).
func (m Mode) String() string {
	switch m {
	case ModeEmpty:
		return "empty"
	case ModeInterpolate:
		return "interpolate"
	case ModeExtrapolate:
		return "extrapolate"
	case ModeStale:
		return "stale"
	case ModeBehind:
		return "behind"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Sample is what At returns: blend From toward To by Frac.
type Sample[S any] struct {
	// Mode says which case this is; the other fields are zero in
	// ModeEmpty.
	Mode Mode
	// From and To are the states to blend, stamped FromTime and ToTime
	// (the same snapshot twice when there is only one to hold).
	From, To         S
	FromTime, ToTime nettime.Time
	// Frac is the position of the asked time between FromTime (0) and
	// ToTime (1); above 1 when extrapolating.
	Frac float64
	// Extrapolated is how far the asked time is past the newest snapshot
	// (ModeExtrapolate and ModeStale; 0 otherwise), unclamped: how short
	// the interpolation delay was.
	Extrapolated time.Duration
}

// Stats are running counts of a Buffer.
type Stats struct {
	Added      int64 // snapshots accepted
	OutOfOrder int64 // accepted snapshots older than the newest
	Duplicates int64 // dropped as ErrDuplicate
	TooOld     int64 // dropped as ErrTooOld
	Evicted    int64 // oldest snapshots evicted by newer ones
}

type snapshot[S any] struct {
	t     nettime.Time
	state S
}

// Buffer is a snapshot interpolation buffer of states S. It is not safe for
// concurrent use.
type Buffer[S any] struct {
	cfg   Config
	snaps []snapshot[S] // sorted by time, oldest first
	stats Stats
}

// New returns an empty Buffer, or an error wrapping ErrInvalidConfig.
func New[S any](cfg Config) (*Buffer[S], error) {
	switch {
	case cfg.Capacity == 0:
		cfg.Capacity = DefaultCapacity
	case cfg.Capacity < 2 || cfg.Capacity > 4096:
		return nil, fmt.Errorf("%w: Capacity %d not in [2, 4096]", ErrInvalidConfig, cfg.Capacity)
	}
	return &Buffer[S]{cfg: cfg, snaps: make([]snapshot[S], 0, cfg.Capacity)}, nil
}

// Add buffers the state the server had at time t (normally the start of
// the tick it was simulated for). It returns nil, or an error wrapping
// ErrDuplicate, ErrTooOld or ErrTickRate, and drops the snapshot then.
func (b *Buffer[S]) Add(t nettime.Time, state S) error {
	if t.IsZero() || (len(b.snaps) > 0 && t.TickRate() != b.snaps[0].t.TickRate()) {
		return fmt.Errorf("%w: %v", ErrTickRate, t)
	}
	i, found := slices.BinarySearchFunc(b.snaps, t, func(s snapshot[S], t nettime.Time) int { return s.t.Compare(t) })
	if found {
		b.stats.Duplicates++
		return fmt.Errorf("%w: %v", ErrDuplicate, t)
	}
	if len(b.snaps) == b.cfg.Capacity {
		if i == 0 {
			b.stats.TooOld++
			return fmt.Errorf("%w: %v, oldest %v", ErrTooOld, t, b.snaps[0].t)
		}
		b.snaps = slices.Delete(b.snaps, 0, 1)
		b.stats.Evicted++
		i--
	}
	if i < len(b.snaps) {
		b.stats.OutOfOrder++
	}
	b.snaps = slices.Insert(b.snaps, i, snapshot[S]{t, state})
	b.stats.Added++
	return nil
}

// At returns the sample at server time t. It does not change the buffer,
// so it may be called any number of times per frame. t's tick rate need
// not match the snapshots'.
func (b *Buffer[S]) At(t nettime.Time) Sample[S] {
	n := len(b.snaps)
	if n == 0 {
		return Sample[S]{}
	}
	at := t.Duration()
	// i: the first snapshot after t.
	i, _ := slices.BinarySearchFunc(b.snaps, at, func(s snapshot[S], d time.Duration) int {
		if s.t.Duration() <= d {
			return -1
		}
		return 1
	})
	switch {
	case i == 0:
		s := b.snaps[0]
		return Sample[S]{Mode: ModeBehind, From: s.state, To: s.state, FromTime: s.t, ToTime: s.t}
	case i < n:
		return b.pair(i-1, at, ModeInterpolate, 0)
	}
	newest := b.snaps[n-1]
	past := satSub(at, newest.t.Duration())
	if past == 0 {
		if n == 1 {
			return Sample[S]{Mode: ModeInterpolate, From: newest.state, To: newest.state, FromTime: newest.t, ToTime: newest.t}
		}
		return b.pair(n-2, at, ModeInterpolate, 0)
	}
	limit := b.cfg.MaxExtrapolation
	if limit == 0 {
		limit = DefaultMaxExtrapolationTicks * newest.t.FixedDelta()
	}
	limit = max(limit, 0)
	mode := ModeExtrapolate
	if past > limit {
		mode, at = ModeStale, satSub(newest.t.Duration(), -limit)
	}
	if n == 1 {
		return Sample[S]{Mode: mode, From: newest.state, To: newest.state, FromTime: newest.t, ToTime: newest.t, Extrapolated: past}
	}
	return b.pair(n-2, at, mode, past)
}

// pair returns the sample between snapshots j and j+1 at time at.
func (b *Buffer[S]) pair(j int, at time.Duration, mode Mode, past time.Duration) Sample[S] {
	a, c := b.snaps[j], b.snaps[j+1]
	from := float64(a.t.Duration()) // in float64: at may be far past the pair
	frac := (float64(at) - from) / (float64(c.t.Duration()) - from)
	return Sample[S]{Mode: mode, From: a.state, To: c.state, FromTime: a.t, ToTime: c.t, Frac: frac, Extrapolated: past}
}

// Len returns the number of snapshots buffered.
func (b *Buffer[S]) Len() int { return len(b.snaps) }

// Newest returns the time of the newest snapshot, and false if the buffer
// is empty.
func (b *Buffer[S]) Newest() (nettime.Time, bool) {
	if len(b.snaps) == 0 {
		return nettime.Time{}, false
	}
	return b.snaps[len(b.snaps)-1].t, true
}

// Stats returns the running counts.
func (b *Buffer[S]) Stats() Stats { return b.stats }

// Reset empties the buffer (after a reconnect to a restarted server); the
// counts stay.
func (b *Buffer[S]) Reset() {
	clear(b.snaps) // let the states go
	b.snaps = b.snaps[:0]
}

// satSub returns a-b saturated to the time.Duration range.
func satSub(a, b time.Duration) time.Duration {
	d := a - b
	if (b < 0 && d < a) || (b > 0 && d > a) {
		if b < 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return d
}
