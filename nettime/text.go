package nettime

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// String formats t as tick+offset@rate, for example "1234+5.5ms@60Hz": the
// exact text form that UnmarshalText reads back (see MarshalText).
func (t Time) String() string {
	b, _ := t.AppendText(make([]byte, 0, 32))
	return string(b)
}

// AppendText appends the text form of t to b (see MarshalText). It never
// fails.
func (t Time) AppendText(b []byte) ([]byte, error) {
	tick, _ := tickOf(t.d, t.rate)
	b = strconv.AppendInt(b, tick, 10)
	b = append(b, '+')
	b = append(b, t.TickOffset().String()...)
	b = append(b, '@')
	b = strconv.AppendUint(b, uint64(t.rate), 10)
	return append(b, "Hz"...), nil
}

// MarshalText returns the exact text form of t, tick+offset@rate, for
// example "1234+5.5ms@60Hz" (tick 1234 of a 60 Hz timeline, 5.5ms into
// it). The offset is printed as time.Duration.String prints it, to the
// nanosecond, so UnmarshalText restores t exactly. The zero Time is
// "0+0s@0Hz".
//
// Grammar:
//
//	time   = tick "+" offset "@" rate "Hz"
//	tick   = ["-"] digits                     (an int64)
//	offset = digits ["." digits] unit          (whole ns, less than the tick's length)
//	unit   = "s" | "ms" | "µs" | "us" | "ns"
//	rate   = digits                            (1..MaxTickRate; 0 only in "0+0s@0Hz")
func (t Time) MarshalText() ([]byte, error) { return t.AppendText(nil) }

// UnmarshalText decodes the text form written by MarshalText. It also
// accepts "us" for "µs" and redundant zeros. It rejects malformed text
// (ErrMalformed), including an offset that is not a whole number of
// nanoseconds or not within the tick, an invalid rate (ErrInvalidRate) and
// a time beyond ±MaxDuration (ErrOutOfRange), leaving t unchanged.
func (t *Time) UnmarshalText(text []byte) error {
	v, err := parseText(string(text))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// MarshalJSON encodes t as a JSON string holding its text form (see
// MarshalText), for example "1234+5.5ms@60Hz".
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 34)
	b = append(b, '"')
	b, _ = t.AppendText(b) // no character of the text form needs escaping
	return append(b, '"'), nil
}

// UnmarshalJSON decodes a JSON string holding the text form (see
// UnmarshalText). A JSON null leaves t unchanged, as encoding/json does for
// other types. Errors wrap the sentinels UnmarshalText uses; anything but a
// string or null is ErrMalformed.
func (t *Time) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var s string
	if len(data) == 0 || data[0] != '"' {
		return fmt.Errorf("%w: JSON %.40q is not a string", ErrMalformed, data)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return t.UnmarshalText([]byte(s))
}

// LogValue makes slog print t in its text form, for example
// "1234+5.5ms@60Hz", with every handler: the JSON handler would otherwise
// print the struct's (unexported) fields as {}.
func (t Time) LogValue() slog.Value { return slog.StringValue(t.String()) }

var _ slog.LogValuer = Time{}

// maxTextLen bounds the input parseText looks at: the longest valid text
// is far shorter, so longer input is rejected before any work.
const maxTextLen = 64

func parseText(s string) (Time, error) {
	malformed := func(why string) (Time, error) {
		return Time{}, fmt.Errorf("%w: %.*q: %s", ErrMalformed, maxTextLen, s, why)
	}
	if len(s) > maxTextLen {
		return malformed("too long")
	}
	tickText, rest, ok := strings.Cut(s, "+")
	if !ok {
		return malformed(`want tick+offset@rateHz, such as "1234+5.5ms@60Hz"`)
	}
	offText, rateText, ok := strings.Cut(rest, "@")
	if !ok {
		return malformed(`no "@" before the rate`)
	}
	rateText, ok = strings.CutSuffix(rateText, "Hz")
	if !ok {
		return malformed(`the rate does not end in "Hz"`)
	}
	tick, ok := parseInt(tickText)
	if !ok {
		return malformed("the tick is not a decimal integer")
	}
	rate, ok := parseUint(rateText)
	if !ok {
		return malformed("the rate is not a decimal integer")
	}
	off, why := parseOffset(offText)
	if why != "" {
		return malformed(why)
	}
	if rate == 0 && tick == 0 && off == 0 {
		return Time{}, nil
	}
	if rate == 0 || rate > MaxTickRate {
		return Time{}, fmt.Errorf("%w: %d Hz (want 1..%d)", ErrInvalidRate, rate, MaxTickRate)
	}
	start, ok := tickStart(tick, uint32(rate))
	if !ok || start > int64(MaxDuration) || start < -int64(MaxDuration)-int64(time.Second) {
		return Time{}, fmt.Errorf("%w: tick %d at %d Hz", ErrOutOfRange, tick, rate)
	}
	// start and off are both within about a second of ±MaxDuration: the
	// sum fits.
	d := start + int64(off)
	if d > int64(MaxDuration) || d < -int64(MaxDuration) {
		return Time{}, fmt.Errorf("%w: %q", ErrOutOfRange, s)
	}
	v := Time{d: d, rate: uint32(rate)}
	if v.Tick() != tick {
		return malformed(fmt.Sprintf("offset %v is not within tick %d (%v long)",
			off, tick, FromTick(uint32(rate), tick, 0).FixedDelta()))
	}
	return v, nil
}

// parseUint parses a non-empty run of ASCII digits; false on anything else
// or overflow.
func parseUint(s string) (uint64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// parseInt parses an optional "-" and digits (no "+", unlike strconv).
func parseInt(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	u, ok := parseUint(strings.TrimPrefix(s, "-"))
	switch {
	case !ok:
		return 0, false
	case neg && u <= 1<<63:
		return int64(-u), true
	case !neg && u < 1<<63:
		return int64(u), true
	}
	return 0, false
}

// units of an offset, with the number of fraction digits that still name
// whole nanoseconds.
var units = []struct {
	name   string
	ns     uint64
	digits int
}{
	{"ns", 1, 0},
	{"µs", 1e3, 3},
	{"us", 1e3, 3},
	{"ms", 1e6, 6},
	{"s", 1e9, 9},
}

// parseOffset parses a duration below one second in time.Duration.String's
// form, exactly; why is "" on success.
func parseOffset(s string) (off time.Duration, why string) {
	for _, u := range units {
		num, ok := strings.CutSuffix(s, u.name)
		if !ok {
			continue
		}
		whole, frac, hasFrac := strings.Cut(num, ".")
		w, ok := parseUint(whole)
		if !ok || hasFrac && frac == "" {
			return 0, "the offset is not a number followed by s, ms, µs, us or ns"
		}
		// Redundant trailing zeros are fine; digits finer than a
		// nanosecond are not.
		frac = strings.TrimRight(frac, "0")
		if len(frac) > u.digits {
			return 0, "the offset is not a whole number of nanoseconds"
		}
		var f uint64
		if frac != "" {
			var ok bool
			if f, ok = parseUint(frac); !ok {
				return 0, "the offset's fraction is not decimal digits"
			}
			for range u.digits - len(frac) {
				f *= 10
			}
		}
		if w >= 1e9/u.ns {
			return 0, "the offset is not shorter than a second"
		}
		return time.Duration(w*u.ns + f), ""
	}
	return 0, "the offset has no unit (s, ms, µs, us or ns)"
}
