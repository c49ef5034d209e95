// Package nettime holds Time, a point on a tick-based network timeline, with
// exact integer arithmetic.
//
// A timeline runs at a tick rate of r ticks per second. Tick k starts at the
// first nanosecond at or after k/r seconds, that is at ceil(k*1e9/r) ns, so the
// tick of a time d is floor(d*r/1e9). Ticks are therefore 1e9/r ns long rounded
// down or up, and they tile the timeline with no gap and no overlap: every
// nanosecond belongs to exactly one tick. No floating point is used inside;
// conversions are exact over the whole accepted range, [-MaxDuration,
// MaxDuration] (about ±292 years), for every rate in [1, MaxTickRate].
//
// Negative times and ticks are valid and use floor semantics: the time -1ns is
// in tick -1.
//
// A Time prints, logs (log/slog), and encodes to text and JSON as
// tick+offset@rate, for example "1234+5.5ms@60Hz", exactly to the
// nanosecond; see Time.MarshalText for the grammar. Its binary encoding is
// 13 bytes; see Time.AppendBinary.
package nettime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"
)

const (
	// MaxTickRate is the highest accepted tick rate, in ticks per second.
	MaxTickRate = 1_000_000

	// MaxDuration is the largest accepted distance from tick 0, in either
	// direction (about 292 years). One second short of the int64 range so that
	// the start and end of every tick that holds an accepted time are
	// representable too.
	MaxDuration = time.Duration(math.MaxInt64 - int64(time.Second))

	nsPerSec = uint64(time.Second)
)

// Sentinel errors returned, wrapped, by decoding and validation.
var (
	// ErrInvalidRate means a tick rate outside [1, MaxTickRate].
	ErrInvalidRate = errors.New("nettime: invalid tick rate")
	// ErrOutOfRange means a time beyond ±MaxDuration.
	ErrOutOfRange = errors.New("nettime: time out of range")
	// ErrMalformed means encoded data of the wrong length or version.
	ErrMalformed = errors.New("nettime: malformed encoding")
)

// Time is a point on a network timeline: a tick rate and the exact number of
// nanoseconds since the start of tick 0. Tick and offset within the tick are
// derived from it exactly.
//
// Time is a small value type; copy it freely. Two Times are == when they have
// the same rate and the same instant. The zero Time has no tick rate: it means
// "unset", reports tick 0, and combining it with a valid Time panics.
type Time struct {
	d    int64  // ns since the start of tick 0, in [-MaxDuration, MaxDuration]
	rate uint32 // ticks per second, 0 only for the zero Time
}

// ValidateRate reports whether rate is an accepted tick rate; the error wraps
// ErrInvalidRate.
func ValidateRate(rate uint32) error {
	if rate == 0 || rate > MaxTickRate {
		return fmt.Errorf("%w: %d Hz (want 1..%d)", ErrInvalidRate, rate, MaxTickRate)
	}
	return nil
}

func mustRate(rate uint32) {
	if err := ValidateRate(rate); err != nil {
		panic(err)
	}
}

// clamp saturates d to the accepted range.
func clamp(d int64) int64 {
	switch {
	case d > int64(MaxDuration):
		return int64(MaxDuration)
	case d < -int64(MaxDuration):
		return -int64(MaxDuration)
	}
	return d
}

// New returns the time d after the start of tick 0 on a timeline of the given
// rate. A d beyond ±MaxDuration saturates. New panics if rate is outside
// [1, MaxTickRate]: that is a programmer error.
func New(rate uint32, d time.Duration) Time {
	mustRate(rate)
	return Time{d: clamp(int64(d)), rate: rate}
}

// FromTick returns the time offset after the start of the given tick. The
// offset may be negative or longer than a tick; the result is normalized, so
// FromTick(60, 1, 0) == FromTick(60, 0, FixedDelta of tick 0). Results beyond
// ±MaxDuration saturate. FromTick panics if rate is outside [1, MaxTickRate].
func FromTick(rate uint32, tick int64, offset time.Duration) Time {
	mustRate(rate)
	start, ok := tickStart(tick, rate)
	if !ok {
		// An offset of the other sign may bring the result back into range.
		// Move its whole seconds into the tick, exactly (tick k+s*rate starts
		// s seconds after tick k); what is left is under a second, too little
		// to bring back a start beyond int64.
		if s := int64(offset / time.Second); s != 0 && (s < 0) == (tick > 0) {
			return FromTick(rate, tick+s*int64(rate), offset-time.Duration(s)*time.Second)
		}
		if tick > 0 {
			return Time{d: int64(MaxDuration), rate: rate}
		}
		return Time{d: -int64(MaxDuration), rate: rate}
	}
	return Time{d: clamp(addSat(start, int64(offset))), rate: rate}
}

// addSat adds with saturation at the int64 bounds.
func addSat(a, b int64) int64 {
	s := a + b
	if (s > a) != (b > 0) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// tickOf returns floor(d*rate/1e9) and the remainder d*rate - tick*1e9, which
// is in [0, 1e9).
func tickOf(d int64, rate uint32) (tick int64, rem uint64) {
	neg := d < 0
	a := uint64(d)
	if neg {
		a = -a
	}
	hi, lo := bits.Mul64(a, uint64(rate))
	var q, r uint64
	if hi == 0 {
		q, r = lo/nsPerSec, lo%nsPerSec // division by a constant: a multiply
	} else {
		// hi < rate < 1e9, so the quotient fits.
		q, r = bits.Div64(hi, lo, nsPerSec)
	}
	if !neg {
		return int64(q), r
	}
	if r == 0 {
		return -int64(q), 0
	}
	return -int64(q) - 1, nsPerSec - r
}

// tickStart returns ceil(tick*1e9/rate), the first nanosecond of the tick, and
// false if that is beyond the int64 range.
func tickStart(tick int64, rate uint32) (int64, bool) {
	neg := tick < 0
	a := uint64(tick)
	if neg {
		a = -a
	}
	hi, lo := bits.Mul64(a, nsPerSec)
	if hi >= uint64(rate) {
		return 0, false
	}
	q, r := bits.Div64(hi, lo, uint64(rate))
	if !neg {
		// Check before rounding up: q can be 1<<64-1, and q+1 would wrap to 0.
		if q > math.MaxInt64 || (q == math.MaxInt64 && r != 0) {
			return 0, false
		}
		if r != 0 {
			q++
		}
		return int64(q), true
	}
	// ceil(-x) = -floor(x)
	if q > 1<<63 {
		return 0, false
	}
	return int64(-q), true
}

// Tick returns the tick that holds t: floor(t.Duration() * rate / 1s).
func (t Time) Tick() int64 {
	tick, _ := tickOf(t.d, t.rate)
	return tick
}

// TickRate returns the tick rate in ticks per second; 0 for the zero Time.
func (t Time) TickRate() uint32 { return t.rate }

// TickOffset returns the time since the start of t's tick, in [0, FixedDelta()).
func (t Time) TickOffset() time.Duration {
	if t.rate == 0 {
		return 0
	}
	// With d*rate = tick*1e9 + rem, the tick starts at d - floor(rem/rate).
	_, rem := tickOf(t.d, t.rate)
	return time.Duration(uint32(rem) / t.rate)
}

// Duration returns the exact time since the start of tick 0.
func (t Time) Duration() time.Duration { return time.Duration(t.d) }

// Seconds returns Duration in seconds, as a float for display and for
// engines that want float time. Never feed it back into tick arithmetic.
func (t Time) Seconds() float64 { return float64(t.d) / 1e9 }

// FixedTime returns the start of t's tick, as a duration since tick 0.
func (t Time) FixedTime() time.Duration { return time.Duration(t.d) - t.TickOffset() }

// FixedDelta returns the exact length of t's tick: 1s/rate rounded down or up,
// so that the lengths of consecutive ticks add up to exact seconds. It is 0
// for the zero Time.
func (t Time) FixedDelta() time.Duration {
	if t.rate == 0 {
		return 0
	}
	tick, _ := tickOf(t.d, t.rate)
	// Both starts are in range: t is, and MaxDuration leaves a second to spare.
	a, _ := tickStart(tick, t.rate)
	b, _ := tickStart(tick+1, t.rate)
	return time.Duration(b - a)
}

// TickWithPartial returns the tick as a float with the fraction of the tick
// that has passed: t.Duration()*rate/1s. For display and interpolation only.
func (t Time) TickWithPartial() float64 {
	tick, rem := tickOf(t.d, t.rate)
	return float64(tick) + float64(rem)/float64(nsPerSec)
}

// ToFixed returns the start of t's tick. The first tick at -MaxDuration
// starts before it: there the result saturates, as FromTick(rate, t.Tick(), 0)
// does.
func (t Time) ToFixed() Time {
	t.d = clamp(t.d - int64(t.TickOffset()))
	return t
}

// Add returns t+d. The result saturates at ±MaxDuration. Adding to the
// zero Time returns the zero Time: it has no timeline to move along.
func (t Time) Add(d time.Duration) Time {
	if t.rate == 0 {
		return t
	}
	t.d = clamp(addSat(t.d, int64(d)))
	return t
}

// Sub returns t-u, saturated to the time.Duration range (two accepted times
// can be almost 2*MaxDuration apart). It panics if t and u have different
// tick rates (a programmer error: convert one first with WithRate).
func (t Time) Sub(u Time) time.Duration {
	t.sameRate(u)
	return time.Duration(addSat(t.d, -u.d)) // u.d is in ±MaxDuration: -u.d fits
}

// TicksAgo returns the time n ticks before t: in tick t.Tick()-n, at the same
// offset into the tick, or at the tick's last nanosecond if that tick is
// shorter. A negative n looks forward. Results beyond ±MaxDuration saturate.
func (t Time) TicksAgo(n int64) Time {
	if t.rate == 0 {
		return t
	}
	tick := t.Tick()
	target := tick - n
	if (n > 0 && target > tick) || (n < 0 && target < tick) { // int64 overflow
		if n > 0 {
			return Time{d: -int64(MaxDuration), rate: t.rate}
		}
		return Time{d: int64(MaxDuration), rate: t.rate}
	}
	r := FromTick(t.rate, target, 0)
	if r.Tick() != target { // saturated
		return r
	}
	off := t.TickOffset()
	if l := r.FixedDelta(); off >= l {
		off = l - 1
	}
	// Not r.Add(off): r is clamped to -MaxDuration when the tick starts before it.
	return FromTick(t.rate, target, off)
}

// Compare returns -1 if t is before u, 0 if they are equal and +1 if t is
// after u. It panics if t and u have different tick rates.
func (t Time) Compare(u Time) int {
	t.sameRate(u)
	switch {
	case t.d < u.d:
		return -1
	case t.d > u.d:
		return 1
	}
	return 0
}

// Before reports whether t is before u. It panics on different tick rates.
func (t Time) Before(u Time) bool { return t.Compare(u) < 0 }

// After reports whether t is after u. It panics on different tick rates.
func (t Time) After(u Time) bool { return t.Compare(u) > 0 }

// IsZero reports whether t is the zero Time (no tick rate).
func (t Time) IsZero() bool { return t.rate == 0 }

// WithRate returns the same instant on a timeline of another tick rate. It
// panics if rate is outside [1, MaxTickRate].
func (t Time) WithRate(rate uint32) Time {
	mustRate(rate)
	t.rate = rate
	return t
}

func (t Time) sameRate(u Time) {
	if t.rate != u.rate {
		panic(fmt.Sprintf("nettime: mixing tick rates %d Hz and %d Hz", t.rate, u.rate))
	}
}

// encodedLen is the length of the binary encoding: version, rate, duration.
const (
	encodedLen     = 1 + 4 + 8
	encodedVersion = 1
)

// AppendBinary appends the binary encoding of t to b: a version byte (1), the
// rate as a big-endian uint32 and the duration since tick 0 as a big-endian
// int64, 13 bytes in all.
func (t Time) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, encodedVersion)
	b = binary.BigEndian.AppendUint32(b, t.rate)
	return binary.BigEndian.AppendUint64(b, uint64(t.d)), nil
}

// MarshalBinary returns the 13-byte encoding described at AppendBinary.
func (t Time) MarshalBinary() ([]byte, error) {
	return t.AppendBinary(make([]byte, 0, encodedLen))
}

// UnmarshalBinary decodes what MarshalBinary produced. It rejects data of the
// wrong length or version (ErrMalformed), an invalid rate (ErrInvalidRate)
// and a time beyond ±MaxDuration (ErrOutOfRange), leaving t unchanged. The
// zero Time round-trips.
func (t *Time) UnmarshalBinary(data []byte) error {
	if len(data) != encodedLen {
		return fmt.Errorf("%w: %d bytes, want %d", ErrMalformed, len(data), encodedLen)
	}
	if data[0] != encodedVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrMalformed, data[0], encodedVersion)
	}
	rate := binary.BigEndian.Uint32(data[1:])
	d := int64(binary.BigEndian.Uint64(data[5:]))
	if rate == 0 && d == 0 {
		*t = Time{}
		return nil
	}
	if err := ValidateRate(rate); err != nil {
		return err
	}
	if d > int64(MaxDuration) || d < -int64(MaxDuration) {
		return fmt.Errorf("%w: %d ns", ErrOutOfRange, d)
	}
	*t = Time{d: d, rate: rate}
	return nil
}
