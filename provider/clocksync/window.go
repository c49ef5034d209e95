package clocksync

import "math"

// trend returns r·(t − t0) in ns.
func (e *Estimator) trend(t int64) int64 { return int64(e.r * float64(t-e.t0)) }

// fitEvery spreads the O(n) refits: often while the window fills, every 8
// samples after.
func fitEvery(n int) int {
	if n < 64 {
		return 1
	}
	return 8
}

// expire drops samples older than the window.
func (e *Estimator) expire(now int64) {
	for e.n > 0 && now-e.t[e.head] > int64(e.cfg.Window) {
		e.dropHead()
	}
}

// dropHead forgets the oldest sample.
func (e *Estimator) dropHead() {
	if e.olderN > 0 {
		i := e.head
		if e.ud[i] == e.older.minU || e.wd[i] == e.older.minW {
			e.olderDirty = true // the floor leaves: find the next one
		} else {
			e.older.sumU -= e.ud[i] - e.refU
			e.older.sumW -= e.wd[i] - e.refW
			e.older.n--
		}
		e.olderN--
	}
	e.head = e.at(1)
	e.n--
}

// olderSummary returns the summary of ring positions [0, n−RiseConfirm),
// bringing it up to date.
func (e *Estimator) olderSummary() scanned {
	want := max(0, e.n-e.cfg.RiseConfirm)
	if e.olderDirty || e.olderN > want {
		e.refU, e.refW = e.ud[e.head], e.wd[e.head]
		e.older, e.olderN, e.olderDirty = e.scan(0, want), want, false
		return e.older
	}
	for ; e.olderN < want; e.olderN++ {
		i := e.at(e.olderN)
		u, w := e.ud[i], e.wd[i]
		if u < e.older.minU {
			e.older.minU, e.older.tu = u, e.t[i]
		}
		if w < e.older.minW {
			e.older.minW, e.older.tw = w, e.t[i]
		}
		e.older.sumU += u - e.refU
		e.older.sumW += w - e.refW
		e.older.n++
	}
	return e.older
}

// minDetrended returns the floors of the samples in [from, to).
func (e *Estimator) minDetrended(from, to int) (mu, mw int64) {
	s := e.scan(from, to)
	return s.minU, s.minW
}

// scanned summarizes the detrended samples in a range: their floors and the
// sums of their distances above a reference (the anchor sample's values,
// which keeps the sums far from overflow).
type scanned struct {
	minU, minW int64
	tu, tw     int64 // when the floors were seen
	sumU, sumW int64
	n          int64
}

func (e *Estimator) scan(from, to int) scanned {
	s := scanned{minU: math.MaxInt64, minW: math.MaxInt64, n: int64(max(0, to-from))}
	ru, rw := e.refU, e.refW
	// The range is at most two contiguous runs of the ring.
	for _, seg := range e.segments(from, to) {
		us, ws := e.ud[seg[0]:seg[1]], e.wd[seg[0]:seg[1]]
		ws = ws[:len(us)]
		ts := e.t[seg[0]:seg[1]]
		for j, u := range us {
			w := ws[j]
			if u < s.minU {
				s.minU, s.tu = u, ts[j]
			}
			if w < s.minW {
				s.minW, s.tw = w, ts[j]
			}
			s.sumU += u - ru
			s.sumW += w - rw
		}
	}
	return s
}

// segments returns the physical index runs holding ring positions
// [from, to).
func (e *Estimator) segments(from, to int) [2][2]int {
	if from >= to {
		return [2][2]int{}
	}
	a, b := e.at(from), e.at(to-1)+1
	if a < b {
		return [2][2]int{{a, b}, {0, 0}}
	}
	return [2][2]int{{a, len(e.t)}, {0, b}}
}

// merge combines the summaries of two adjacent ranges.
func (s scanned) merge(o scanned) scanned {
	m := scanned{minU: s.minU, minW: s.minW, tu: s.tu, tw: s.tw,
		sumU: s.sumU + o.sumU, sumW: s.sumW + o.sumW, n: s.n + o.n}
	if o.minU < m.minU {
		m.minU, m.tu = o.minU, o.tu
	}
	if o.minW < m.minW {
		m.minW, m.tw = o.minW, o.tw
	}
	return m
}

// meanExcessOf returns the mean distance of a range's samples above the
// given floors.
func (e *Estimator) meanExcessOf(s scanned, fu, fw int64) (int64, int64) {
	if s.n == 0 {
		return 0, 0
	}
	return s.sumU/s.n + e.refU - fu, s.sumW/s.n + e.refW - fw
}

// span is the client time the window covers: between its oldest and
// newest samples, either way round (a clock stepped back puts the newest
// before the oldest).
func (e *Estimator) span() int64 {
	if e.n < 2 {
		return 0
	}
	return abs64(e.t[e.at(e.n-1)] - e.t[e.head])
}
