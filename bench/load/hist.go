package main

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// hist is a concurrent log-linear histogram of durations in nanoseconds:
// exact below 64 ns, then 64 buckets per power of two, so a quantile it
// reports (a bucket's midpoint) is within 0.8% of the true sample. Its
// size is fixed (30 KiB), so recording allocates nothing: a server
// measuring its own memory is not disturbed by the samples it keeps.
type hist struct {
	counts   [histBuckets]atomic.Uint64
	n        atomic.Uint64
	sum      atomic.Int64
	min, max atomic.Int64 // valid when n > 0
}

const (
	histSubBits = 6
	histSub     = 1 << histSubBits
	histBuckets = (64 - histSubBits + 1) * histSub
)

func newHist() *hist {
	h := &hist{}
	h.min.Store(math.MaxInt64)
	return h
}

func histIndex(v uint64) int {
	if v < histSub {
		return int(v)
	}
	e := bits.Len64(v) - histSubBits - 1 // v>>e is in [histSub, 2*histSub)
	return (e+1)*histSub + int(v>>e) - histSub
}

// histMid returns the midpoint of bucket i.
func histMid(i int) float64 {
	if i < histSub {
		return float64(i)
	}
	e := i/histSub - 1
	m := uint64(i%histSub + histSub)
	lo := m << e
	return float64(lo) + float64(uint64(1)<<e)/2
}

// record adds one duration; negative ones count as 0.
func (h *hist) record(d time.Duration) {
	v := int64(d)
	if v < 0 {
		v = 0
	}
	h.counts[histIndex(uint64(v))].Add(1)
	h.n.Add(1)
	h.sum.Add(v)
	for {
		m := h.min.Load()
		if v >= m || h.min.CompareAndSwap(m, v) {
			break
		}
	}
	for {
		m := h.max.Load()
		if v <= m || h.max.CompareAndSwap(m, v) {
			break
		}
	}
}

// quantile returns the nearest-rank q-quantile in ns (0 when empty).
func (h *hist) quantile(q float64) float64 {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n)))
	if rank < 1 {
		rank = 1
	}
	var cum uint64
	for i := range h.counts {
		cum += h.counts[i].Load()
		if cum >= rank { // the midpoint, within the samples' range
			return min(max(histMid(i), float64(h.min.Load())), float64(h.max.Load()))
		}
	}
	return float64(h.max.Load())
}

// Dist summarizes a distribution of durations, in microseconds.
type Dist struct {
	Count  uint64  `json:"count"`   // samples
	MinUS  float64 `json:"min_us"`  // smallest
	P50US  float64 `json:"p50_us"`  // median
	P90US  float64 `json:"p90_us"`  // 90th percentile
	P99US  float64 `json:"p99_us"`  // 99th percentile
	P999US float64 `json:"p999_us"` // 99.9th percentile
	MaxUS  float64 `json:"max_us"`  // largest
	MeanUS float64 `json:"mean_us"` // mean
}

func (h *hist) dist() Dist {
	n := h.n.Load()
	if n == 0 {
		return Dist{}
	}
	us := func(ns float64) float64 { return math.Round(ns/10) / 100 } // µs, 2 decimals
	return Dist{
		Count: n,
		MinUS: us(float64(h.min.Load())), MaxUS: us(float64(h.max.Load())),
		P50US: us(h.quantile(0.50)), P90US: us(h.quantile(0.90)),
		P99US: us(h.quantile(0.99)), P999US: us(h.quantile(0.999)),
		MeanUS: us(float64(h.sum.Load()) / float64(n)),
	}
}
