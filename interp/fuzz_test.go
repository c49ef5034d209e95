package interp

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/netclock/netclock/nettime"
)

// FuzzAddAt feeds arbitrary snapshot times and queries: no panic, never
// more than Capacity snapshots, kept sorted and unique, and every
// interpolating sample brackets the asked time with 0 ≤ Frac ≤ 1.
func FuzzAddAt(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 5, 0x80, 0, 0, 0, 0, 0, 0, 0, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		b, _ := New[int](Config{Capacity: 4})
		for i := 0; i+9 <= len(data); i += 9 {
			d := time.Duration(int64(binary.LittleEndian.Uint64(data[i+1:])))
			d = max(min(d, nettime.MaxDuration), -nettime.MaxDuration)
			tm := nettime.New(rate, d)
			if data[i]&1 == 0 {
				b.Add(tm, i)
			} else {
				s := b.At(tm)
				if s.Mode == ModeInterpolate && (tm.Before(s.FromTime) || tm.After(s.ToTime) || s.Frac < 0 || s.Frac > 1) {
					t.Fatalf("At(%v) = %v..%v frac %v", tm, s.FromTime, s.ToTime, s.Frac)
				}
			}
			if b.Len() > 4 {
				t.Fatalf("%d snapshots held, capacity 4", b.Len())
			}
			for j := 1; j < len(b.snaps); j++ {
				if !b.snaps[j-1].t.Before(b.snaps[j].t) {
					t.Fatalf("snapshots out of order: %v then %v", b.snaps[j-1].t, b.snaps[j].t)
				}
			}
		}
	})
}
