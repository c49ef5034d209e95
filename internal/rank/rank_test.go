package rank

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestNthIsTheSortedElement(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, span := range []int{1, 3, 20, 1 << 20} { // many ties to none
		for range 500 {
			v := make([]int64, 1+r.IntN(80))
			for i := range v {
				v[i] = r.Int64N(int64(span))
			}
			k := r.IntN(len(v))
			sorted := slices.Sorted(slices.Values(v))
			if got := Nth(v, k); got != sorted[k] {
				t.Fatalf("Nth(%v, %d) = %d, want %d", sorted, k, got, sorted[k])
			}
			for i := range v {
				if (i < k && v[i] > v[k]) || (i > k && v[i] < v[k]) {
					t.Fatalf("Nth left %v unpartitioned around %d", v, k)
				}
			}
		}
	}
}

func TestNthDoesNotAllocate(t *testing.T) {
	v := make([]float64, 64)
	if n := testing.AllocsPerRun(100, func() {
		for i := range v {
			v[i] = float64((i * 37) % 64)
		}
		Nth(v, 32)
	}); n != 0 {
		t.Errorf("Nth allocates %v times", n)
	}
}

func ExampleNth() {
	delays := []time.Duration{9 * time.Millisecond, 2 * time.Millisecond, 30 * time.Millisecond, 4 * time.Millisecond, 5 * time.Millisecond}
	fmt.Println(Nth(delays, len(delays)/2)) // the median, in linear time
	// Output: 5ms
}

func BenchmarkNth(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]float64, 600)
	for i := range src {
		src[i] = r.ExpFloat64()
	}
	v := make([]float64, len(src))
	for b.Loop() {
		copy(v, src)
		Nth(v, len(v)/2)
	}
}
