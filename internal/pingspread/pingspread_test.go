package pingspread

import (
	"fmt"
	"testing"
	"time"
)

// TestOffsetSpreadsEvenly: the offsets stay within the spread, average
// about zero, and fill every part of it.
func TestOffsetSpreadsEvenly(t *testing.T) {
	const spread = 10 * time.Millisecond
	const n = 100000
	var sum time.Duration
	var bins [20]int // 1 ms each, over [-10, 10) ms
	for i := uint64(0); i < n; i++ {
		o := Offset(i, spread)
		if o < -spread || o > spread {
			t.Fatalf("Offset(%d) = %v, outside ±%v", i, o, spread)
		}
		sum += o
		bins[min(19, int((o+spread)/time.Millisecond))]++
	}
	if mean := sum / n; mean < -100*time.Microsecond || mean > 100*time.Microsecond {
		t.Errorf("mean offset %v, want about 0", mean)
	}
	for i, c := range bins {
		if c < n/20*9/10 || c > n/20*11/10 {
			t.Errorf("bin %d ms: %d of %d offsets, want %d ±10%%", i-10, c, n, n/20)
		}
	}
}

func TestOffsetWithoutSpread(t *testing.T) {
	for _, s := range []time.Duration{0, -time.Millisecond} {
		if o := Offset(7, s); o != 0 {
			t.Errorf("Offset(7, %v) = %v, want 0", s, o)
		}
	}
}

func ExampleOffset() {
	period, spread := 100*time.Millisecond, 10*time.Millisecond
	for n := uint64(0); n < 3; n++ {
		next := period + Offset(n, spread)
		fmt.Println(next >= 90*time.Millisecond && next <= 110*time.Millisecond)
	}
	// Output:
	// true
	// true
	// true
}
