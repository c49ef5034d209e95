package nettime

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"
)

func FuzzUnmarshalBinary(f *testing.F) {
	for _, tm := range []Time{{}, New(60, 0), New(60, -1), New(1, MaxDuration), New(MaxTickRate, -MaxDuration)} {
		b, _ := tm.MarshalBinary()
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add(encode(0, 1))
	f.Add(encode(MaxTickRate+1, 0))
	f.Add(encode(60, math.MaxInt64))
	f.Add(append(encode(60, 0), 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tm Time
		if err := tm.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrInvalidRate) && !errors.Is(err, ErrOutOfRange) {
				t.Fatalf("UnmarshalBinary(%x): error %v wraps no sentinel", data, err)
			}
			if tm != (Time{}) {
				t.Fatalf("UnmarshalBinary(%x) failed but changed the target to %s", data, rawString(tm))
			}
			return
		}
		// Whatever decodes must be a Time the API could have made.
		if tm.rate == 0 && tm.d != 0 || tm.rate > MaxTickRate || tm.d > int64(MaxDuration) || tm.d < -int64(MaxDuration) {
			t.Fatalf("UnmarshalBinary(%x) accepted %s", data, rawString(tm))
		}
		b, err := tm.MarshalBinary()
		if err != nil || !bytes.Equal(b, data) {
			t.Fatalf("UnmarshalBinary(%x) then MarshalBinary = %x, %v", data, b, err)
		}
	})
}

// FuzzArithmetic runs the property checks on fuzzed inputs, using dt both as
// a duration and as a tick count.
func FuzzArithmetic(f *testing.F) {
	f.Add(uint32(60), int64(time.Second), int64(16_666_667))
	f.Add(uint32(29), int64(-1), int64(-1))
	f.Add(uint32(46923), int64(0), int64(-865595018914747))
	f.Add(uint32(0), int64(MaxDuration), int64(math.MinInt64))
	f.Add(uint32(math.MaxUint32), int64(math.MinInt64), int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, rate uint32, d, dt int64) {
		rate = rate%MaxTickRate + 1
		d = refClamp(bi(d))
		checkTime(t, rate, d)
		checkAdd(t, rate, d, dt)
		checkSub(t, rate, d, refClamp(bi(dt)))
		checkFromTick(t, rate, dt, d)
		checkFromTick(t, rate, New(rate, time.Duration(d)).Tick(), dt)
		checkTicksAgo(t, rate, d, dt)
	})
}
