package ticksys

import "time"

// wakeMargin learns how early a waiter must stop sleeping to be awake by a
// deadline: a high quantile of how late its recent sleeps ended
// (oversleep), capped. It keeps the last marginWindow oversleeps in
// buckets of marginBucket, so a quantile costs a walk over the buckets, not
// a sort.
type wakeMargin struct {
	max    time.Duration // the cap; 0 never spins
	ring   [marginWindow]uint8
	n, i   int // samples held, next slot
	counts [marginBuckets]int
}

const (
	// marginWindow is how many recent sleeps the margin is learned from:
	// 2 s at 128 Hz, 17 s at 30 Hz.
	marginWindow = 256
	// marginBucket is the resolution of the learned margin.
	marginBucket = 50 * time.Microsecond
	// marginBuckets covers oversleeps up to marginBuckets*marginBucket
	// (12.75 ms); longer ones share the last bucket.
	marginBuckets = 256
	// marginQuantile: the margin is the oversleep that marginQuantile of
	// recent sleeps stayed within (rounded up to a bucket). Later sleeps
	// cost lateness, earlier ones spin.
	marginQuantile = 0.99
)

// observe records that a sleep ended late by over (≤ 0: on time).
func (m *wakeMargin) observe(over time.Duration) {
	b := min(int(max(over, 0)/marginBucket), marginBuckets-1)
	if m.n == marginWindow {
		m.counts[m.ring[m.i]]--
	} else {
		m.n++
	}
	m.ring[m.i] = uint8(b)
	m.counts[b]++
	m.i = (m.i + 1) % marginWindow
}

// margin returns how long before a deadline to stop sleeping: the upper
// edge of the bucket holding the marginQuantile of the recent oversleeps
// (of all of them while there are fewer than 100), at most max.
func (m *wakeMargin) margin() time.Duration {
	if m.max <= 0 || m.n == 0 {
		return max(m.max, 0)
	}
	// The number of samples allowed above the margin.
	allowed := int(float64(m.n) * (1 - marginQuantile))
	above := 0
	for b := marginBuckets - 1; b >= 0; b-- {
		if above += m.counts[b]; above > allowed {
			return min(time.Duration(b+1)*marginBucket, m.max)
		}
	}
	return min(marginBucket, m.max)
}
