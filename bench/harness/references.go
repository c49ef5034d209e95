package harness

import (
	"github.com/netclock/netclock/internal/rank"
	"math"
	"slices"
	"time"
)

// Reference filters: textbook offset estimators that are not seeds, run at
// netclock's data rate (the same burst and PingInterval pings on a true-time
// timer, answered by the same echo server) and over netclock's window, so
// that a comparison with them measures the estimator and nothing else. Each
// recomputes its estimate at every pong and applies it at once (no slewing);
// none publishes a bound. They do not handle clock steps: a step ages out of
// the window.
//
//   - ref-median: the median offset of the window.
//   - ref-simpson: the windowed Simpson filter: median RTT, drop samples
//     whose RTT is more than one standard deviation above it, average the
//     offsets of the rest.
//   - ref-drift-mean: a least-squares line of offset over time through the
//     window (the mean, corrected for drift), read at the current time.
//   - ref-ntp: NTP's clock filter: the offset of the sample with the least
//     delay among the last 8.
//   - ref-chrony: a chrony-style weighted regression of offset over time:
//     each sample weighted by 1/(1+(excess/s)²), where excess is its RTT
//     above the window's minimum and s the median excess, read at the
//     current time.

// RefWindow is the reference filters' window: netclock's.
const RefWindow = 60 * time.Second

// refNTPSamples is the NTP clock filter's register: the last 8 samples.
const refNTPSamples = 8

// Names of the reference filters, in the order References returns them.
const (
	refNameMedian    = "ref-median"
	refNameSimpson   = "ref-simpson"
	refNameDriftMean = "ref-drift-mean"
	refNameNTP       = "ref-ntp"
	refNameChrony    = "ref-chrony"
)

type refKind uint8

const (
	refMedian refKind = iota
	refSimpson
	refDriftMean
	refNTP
	refChrony
)

// References returns the reference filters, in a fixed order: ref-median,
// ref-simpson, ref-drift-mean, ref-ntp, ref-chrony.
func References() []System {
	mk := func(name string, k refKind) System {
		return system(name, KindReference, PingInterval, func(ping time.Duration, toServer, toClient Link) (Client, Server) {
			return &refClient{to: toServer, interval: ping, kind: k}, &echoServer{toClient: toClient}
		})
	}
	return []System{
		mk(refNameMedian, refMedian),
		mk(refNameSimpson, refSimpson),
		mk(refNameDriftMean, refDriftMean),
		mk(refNameNTP, refNTP),
		mk(refNameChrony, refChrony),
	}
}

// refSample is one exchange: when its pong arrived (client clock), the
// offset it measured (server − client, at the midpoint) and its RTT.
type refSample struct {
	at, off, rtt time.Duration
}

type refClient struct {
	to       Link
	interval time.Duration
	kind     refKind
	seq      uint64

	win     []refSample // win[head:] is the window, oldest first
	head    int
	weights []float64
	// The window's offsets (relative to base0) and RTTs, kept sorted for
	// the filters that take medians.
	sortedOff, sortedRTT []float64
	base0                time.Duration

	have bool
	// The estimate: off0 + slope·(now − t0) (slope 0 for the constant
	// filters).
	off0  time.Duration
	t0    time.Duration
	slope float64
}

// Ping implements Pacer, with netclock's schedule.
func (c *refClient) Ping(now time.Duration) time.Duration {
	c.seq++
	c.to.Send(Msg{Kind: kindPing, Seq: c.seq, T1: now})
	if c.seq < BurstPings {
		return BurstInterval
	}
	return c.interval
}

func (c *refClient) Frame(now, dt time.Duration) {}

func (c *refClient) Receive(m Msg, now time.Duration) {
	if m.Kind != kindPong {
		return
	}
	rtt := now - m.T1 - (m.T3 - m.T2)
	if rtt < 0 {
		return // a client clock step; the sample means nothing
	}
	// The NTP offset ((T2−T1) + (T3−T4))/2.
	off := ((m.T2 - m.T1) + (m.T3 - now)) / 2
	if len(c.win) == 0 {
		c.base0 = off
	}
	add := refSample{at: now, off: off, rtt: rtt}
	c.win = append(c.win, add)
	c.sorted(add, insertSorted)
	for c.head < len(c.win) && c.win[c.head].at < now-RefWindow {
		c.sorted(c.win[c.head], removeSorted)
		c.head++
	}
	if c.head > 0 && c.head >= len(c.win)/2 {
		c.win = append(c.win[:0], c.win[c.head:]...)
		c.head = 0
	}
	c.estimate(now)
}

// estimate recomputes the filter over the window.
func (c *refClient) estimate(now time.Duration) {
	w := c.win[c.head:]
	if len(w) == 0 {
		return
	}
	c.have, c.slope, c.t0 = true, 0, now
	base := w[0].off // offsets relative to it, to keep floats exact
	switch c.kind {
	case refMedian:
		c.off0 = c.base0 + time.Duration(math.Round(medianSorted(c.sortedOff)))
	case refSimpson:
		var sum float64
		for _, s := range w {
			sum += float64(s.rtt)
		}
		n := float64(len(w))
		mean := sum / n
		var ss float64
		for _, s := range w {
			d := float64(s.rtt) - mean
			ss += d * d
		}
		limit := medianSorted(c.sortedRTT) + math.Sqrt(ss/n)
		var acc float64
		k := 0
		for _, s := range w {
			if float64(s.rtt) <= limit {
				acc += float64(s.off - base)
				k++
			}
		}
		c.off0 = base + time.Duration(math.Round(acc/float64(k)))
	case refNTP:
		best := w[max(0, len(w)-refNTPSamples):]
		b := best[0]
		for _, s := range best[1:] {
			if s.rtt < b.rtt {
				b = s
			}
		}
		c.off0 = b.off
	case refDriftMean:
		c.weights = c.weights[:0]
		for range w {
			c.weights = append(c.weights, 1)
		}
		c.fit(w, base, now)
	case refChrony:
		minRTT := c.sortedRTT[0]
		scale := max(medianSorted(c.sortedRTT)-minRTT, 1e3) // at least 1 µs
		c.weights = c.weights[:0]
		for _, s := range w {
			e := (float64(s.rtt) - minRTT) / scale
			c.weights = append(c.weights, 1/(1+e*e))
		}
		c.fit(w, base, now)
	}
}

// fit sets the estimate to a least-squares line of offset over time through
// w, weighted by c.weights, read at now. With a single distinct time it is
// the weighted mean.
func (c *refClient) fit(w []refSample, base, now time.Duration) {
	var sw, sx, sy float64
	for i, s := range w {
		k := c.weights[i]
		sw += k
		sx += k * float64(s.at-now)
		sy += k * float64(s.off-base)
	}
	mx, my := sx/sw, sy/sw
	var sxx, sxy float64
	for i, s := range w {
		k := c.weights[i]
		dx := float64(s.at-now) - mx
		sxx += k * dx * dx
		sxy += k * dx * (float64(s.off-base) - my)
	}
	slope := 0.0
	if sxx > 0 {
		slope = sxy / sxx
	}
	c.slope = slope
	c.off0 = base + time.Duration(math.Round(my-slope*mx))
}

func (c *refClient) Shared(now time.Duration) time.Duration {
	if !c.have {
		return now
	}
	return now + c.off0 + time.Duration(c.slope*float64(now-c.t0))
}

func (c *refClient) Bound(time.Duration) (time.Duration, bool) { return 0, false }

// sorted applies op to the sorted windows the filter uses.
func (c *refClient) sorted(s refSample, op func([]float64, float64) []float64) {
	switch c.kind {
	case refMedian:
		c.sortedOff = op(c.sortedOff, float64(s.off-c.base0))
	case refSimpson, refChrony:
		c.sortedRTT = op(c.sortedRTT, float64(s.rtt))
	}
}

func insertSorted(v []float64, x float64) []float64 {
	i, _ := slices.BinarySearch(v, x)
	return slices.Insert(v, i, x)
}

func removeSorted(v []float64, x float64) []float64 {
	i, found := slices.BinarySearch(v, x)
	if !found {
		panic("harness: reference window out of sync")
	}
	return slices.Delete(v, i, i+1)
}

// median returns the median of v (the mean of the two middle values for an
// even length), reordering v. Quickselect: linear on average.
func median(v []float64) float64 {
	n := len(v)
	if n == 0 {
		return 0
	}
	hi := rank.Nth(v, n/2)
	if n%2 == 1 {
		return hi
	}
	// After nth, v[:n/2] holds the smaller half; its maximum is the lower
	// middle.
	lo := v[0]
	for _, x := range v[1 : n/2] {
		lo = max(lo, x)
	}
	return lo + (hi-lo)/2
}
