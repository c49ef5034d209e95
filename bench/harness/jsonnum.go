package harness

import (
	"encoding/json"
	"math"
	"strconv"
)

// number is a float64 that encodes as JSON null when it is not finite:
// a figure with nothing to measure (a ratio without a seed system in the
// run, an oracle that found no lead) is NaN, which JSON cannot carry.
type number float64

func (n number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// MarshalJSON encodes a figure without a value as null.
func (s Spread) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Median number `json:"median"`
		Min    number `json:"min"`
		Max    number `json:"max"`
	}{number(s.Median), number(s.Min), number(s.Max)})
}

// MarshalJSON encodes a figure without a value as null.
func (d Distribution) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Median number `json:"median"`
		P10    number `json:"p10"`
		P90    number `json:"p90"`
		Min    number `json:"min"`
		Max    number `json:"max"`
	}{number(d.Median), number(d.P10), number(d.P90), number(d.Min), number(d.Max)})
}
