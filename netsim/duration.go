package netsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration with a human-friendly JSON form. It is used only
// by the JSON encoding of profiles; the Go API uses time.Duration throughout.
//
// It encodes as a string in time.Duration's format with "us" for
// microseconds, e.g. "10ms", "1.5ms", "200us", "1m30s". It decodes from
//   - a string accepted by time.ParseDuration ("10ms", "1.5ms", "250us",
//     "250µs", "-2s", "0"), or
//   - a JSON number, meaning a whole number of nanoseconds (1500000 is
//     1.5ms; 1e6 is 1ms; 1.5 is rejected).
//
// null leaves the value unchanged.
type Duration time.Duration

// String formats d like time.Duration.String, with "us" instead of "µs".
func (d Duration) String() string {
	return strings.Replace(time.Duration(d).String(), "µs", "us", 1)
}

// MarshalJSON encodes d as a quoted duration string such as "10ms".
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(d.String())), nil
}

// UnmarshalJSON decodes a duration string or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := parseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	v, err := parseNanos(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

func parseDuration(s string) (time.Duration, error) {
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: want a number with a unit such as \"10ms\", \"1.5ms\", \"250us\" or \"2s\"", s)
	}
	return v, nil
}

func parseNanos(s string) (time.Duration, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Duration(v), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("invalid duration %s: want a string such as \"10ms\" or a whole number of nanoseconds", s)
	}
	if f != math.Trunc(f) || f >= 1<<63 || f < -(1<<63) {
		return 0, fmt.Errorf("invalid duration %s: a plain number means nanoseconds and must be a whole number within about ±292 years; write fractions with a unit, e.g. \"1.5ms\"", s)
	}
	return time.Duration(int64(f)), nil
}
