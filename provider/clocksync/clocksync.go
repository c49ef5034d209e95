// Package clocksync estimates the server clock from ping/pong samples: the
// offset of the server clock from the client clock, its drift, the one-way
// delays, and an honest error bound. Its Estimate feeds provider.Client.
//
// # How
//
// A sample (the NTP quadruple T1..T4) gives two one-way deltas,
//
//	u = T2 − T1 = θ + d↑    w = T4 − T3 = −θ + d↓
//
// where θ is the offset and d↑, d↓ the delays. Queueing only ever adds delay,
// so over a window the minimum of u (detrended by the drift) is θ + base↑
// and the minimum of w is −θ + base↓, and
//
//	θ̂ = (min u − min w − A) / 2
//
// where A, the path asymmetry base↑ − base↓, is unobservable and assumed 0
// at the start: a fixed asymmetry costs A/2, the physical limit. Taking the
// minimum in each direction separately converges like 1/N and is unbiased
// when jitter differs by direction; averaging converges like 1/√N and is
// biased by the jitter asymmetry.
//
// The drift (the server clock's rate against the client's) comes from a
// pooled least-squares fit over the low-delay samples of both directions.
//
// Steps are classified: when a direction's floor drops below its minimum
// (which queueing cannot do) for JumpConfirm samples, or rises above it for
// RiseConfirm samples, the estimator compares both directions. A change of
// equal size and opposite sign is a clock jump (suspend/resume, VM
// migration): the window restarts. Anything else is a path change (a route
// or latency step): the history is rebased onto the new floors and A absorbs
// the one-sided part, so the offset does not move — where every RTT/2 method
// moves by half the step.
//
// The error bound comes from the spacing of the lowest samples in each
// direction (an estimate of how far the minimum can still be above the true
// floor), plus the drift's extrapolation error, and is never more than the
// hard bound (min RTT + |A|)/2 that holds whatever the jitter.
package clocksync

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/netclock/netclock/provider"
)

// Defaults of Config.
const (
	DefaultWindow      = 60 * time.Second
	DefaultMaxSamples  = 1024
	DefaultJumpConfirm = 3
	DefaultRiseConfirm = 10
	DefaultMaxRTT      = 10 * time.Second
)

// Sentinel errors.
var (
	// ErrInvalidConfig is wrapped by configuration errors.
	ErrInvalidConfig = errors.New("clocksync: invalid config")
	// ErrBadSample is wrapped when Observe rejects a sample.
	ErrBadSample = errors.New("clocksync: bad sample")
)

// Config configures an Estimator. The zero value gives the defaults.
type Config struct {
	// Window is how long a sample is remembered. Longer windows find lower
	// floors (more accuracy) but follow drift changes more slowly.
	// Default: 60s.
	Window time.Duration
	// MaxSamples caps the samples remembered. Default: 1024 (102s at 10 Hz).
	MaxSamples int
	// JumpConfirm is how many consecutive samples below a floor confirm a
	// step down (a clock jump or a shorter path). Default: 3.
	JumpConfirm int
	// RiseConfirm is how many consecutive samples above a floor confirm a
	// step up (a longer path). Default: 10.
	RiseConfirm int
	// MaxRTT rejects samples with a longer round trip as absurd.
	// Default: 10s.
	MaxRTT time.Duration
}

func (c Config) resolve() (Config, error) {
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.MaxSamples == 0 {
		c.MaxSamples = DefaultMaxSamples
	}
	if c.JumpConfirm == 0 {
		c.JumpConfirm = DefaultJumpConfirm
	}
	if c.RiseConfirm == 0 {
		c.RiseConfirm = DefaultRiseConfirm
	}
	if c.MaxRTT == 0 {
		c.MaxRTT = DefaultMaxRTT
	}
	switch {
	case c.Window < 0:
		return c, fmt.Errorf("%w: Window %v is negative", ErrInvalidConfig, c.Window)
	case c.MaxSamples < 16 || c.MaxSamples > 1<<16:
		return c, fmt.Errorf("%w: MaxSamples %d not in [16, 65536]", ErrInvalidConfig, c.MaxSamples)
	case c.JumpConfirm < 1 || c.JumpConfirm > 16:
		return c, fmt.Errorf("%w: JumpConfirm %d not in [1, 16]", ErrInvalidConfig, c.JumpConfirm)
	case c.RiseConfirm < c.JumpConfirm || c.RiseConfirm > c.MaxSamples/4:
		return c, fmt.Errorf("%w: RiseConfirm %d not in [JumpConfirm, MaxSamples/4]", ErrInvalidConfig, c.RiseConfirm)
	case c.MaxRTT < 0:
		return c, fmt.Errorf("%w: MaxRTT %v is negative", ErrInvalidConfig, c.MaxRTT)
	}
	return c, nil
}

// Event says what the estimator detected in a sample.
type Event int

const (
	// EventNone: an ordinary sample.
	EventNone Event = iota
	// EventClockJump: one clock stepped; the window restarted.
	EventClockJump
	// EventPathChange: a one-way delay stepped; the offset held.
	EventPathChange
	// EventClockShift: the floors moved equally and oppositely over
	// seconds: a clock slewed; the offset followed it.
	EventClockShift
)

// String returns the event's name as logs print it: "none", "clock-jump",
// "path-change" or "clock-shift" ("Event(n)" for an unknown value).
func (e Event) String() string {
	switch e {
	case EventNone:
		return "none"
	case EventClockJump:
		return "clock-jump"
	case EventPathChange:
		return "path-change"
	case EventClockShift:
		return "clock-shift"
	}
	return fmt.Sprintf("Event(%d)", int(e))
}

// Stats are running counts of an Estimator.
type Stats struct {
	Samples     int64 // accepted samples
	Rejected    int64 // samples Observe rejected
	Duplicates  int64 // samples ignored as exact repeats
	Jumps       int64 // clock jumps detected
	PathChanges int64 // path changes detected
	ClockShifts int64 // slow clock moves (slews) detected
}

// Estimator turns samples into an Estimate. It is not safe for concurrent
// use; the transport calls it from one goroutine and hands the Estimate on.
type Estimator struct {
	cfg Config

	// The ring of samples, oldest at head. Times are client-clock ns. u
	// and w are the one-way deltas (rebased after path changes); ud and wd
	// are them detrended to the anchor: ud = u − r(t−t0), wd = w + r(t−t0).
	t, u, w, ud, wd []int64
	head, n         int

	t0     int64   // anchor of the detrended values
	r      float64 // drift: server seconds per client second − 1
	rSE    float64 // standard error of r
	fitted bool    // r comes from a fit, not the prior (rSE can be 0 on a perfect path)
	asym   int64   // A: assumed base↑ − base↓, ns
	lastT1 int64
	lastT4 int64

	bound int64 // statistical error bound from the last fit, −1 if none

	// The summary of the samples before the newest RiseConfirm (ring
	// positions [0, olderN)), kept up to date as samples enter and leave
	// it; recomputed when dirty. Sums are relative to refU, refW.
	older      scanned
	olderN     int
	olderDirty bool
	refU, refW int64

	belowU, belowW int // consecutive samples below the floor
	aboveU, aboveW int // consecutive samples above it by more than the tolerance
	riseAtU        int64
	riseAtW        int64
	sinceFit       int

	est   provider.Estimate
	stats Stats
	last  Event

	// The drift tracker: the minimum u and w of each BinDuration of client
	// time, for the last len(bins) bins, oldest at binHead.
	bins     []bin
	binHead  int
	binN     int
	binsDone int // bins completed since the last restart
	cur      bin

	// scratch for the regression, preallocated.
	xs, ys, ws []float64
}

// bin holds the lowest one-way deltas seen in one stretch of client time,
// and when they were seen.
type bin struct {
	start      int64
	tu, tw     int64
	minU, minW int64
	n          int
}

const (
	binDuration = int64(2 * time.Second)
	numBins     = 64 // 128s of drift history
)

// New returns an Estimator, or an error wrapping ErrInvalidConfig.
func New(cfg Config) (*Estimator, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	m := 1 << bits.Len(uint(cfg.MaxSamples-1)) // a power of two, for masking
	return &Estimator{
		cfg: cfg,
		t:   make([]int64, m), u: make([]int64, m), w: make([]int64, m),
		ud: make([]int64, m), wd: make([]int64, m),
		bins: make([]bin, numBins),
		xs:   make([]float64, 0, 2*numBins), ys: make([]float64, 0, 2*numBins), ws: make([]float64, 0, 2*numBins),
		bound: -1,
	}, nil
}

// Estimate returns the current estimate; Valid is false before the first
// sample.
func (e *Estimator) Estimate() provider.Estimate { return e.est }

// Stats returns the running counts.
func (e *Estimator) Stats() Stats { return e.stats }

// LastEvent returns what the last accepted sample revealed.
func (e *Estimator) LastEvent() Event { return e.last }

// Reset forgets every sample, as when connecting to another server.
func (e *Estimator) Reset() {
	*e = Estimator{cfg: e.cfg, t: e.t, u: e.u, w: e.w, ud: e.ud, wd: e.wd, bins: e.bins,
		xs: e.xs, ys: e.ys, ws: e.ws, stats: e.stats, bound: -1, olderDirty: true}
}

func (e *Estimator) at(i int) int { return (e.head + i) & (len(e.t) - 1) }

// Observe adds a sample. It returns an error wrapping ErrBadSample, and
// changes nothing, if the sample is impossible (received before sent, a
// negative round trip) or absurd (a round trip over MaxRTT). An exact repeat
// of the previous sample is ignored.
func (e *Estimator) Observe(s provider.Sample) error {
	if err := s.Validate(); err != nil {
		e.stats.Rejected++
		return fmt.Errorf("%w: %w", ErrBadSample, err)
	}
	if rtt := s.RTT(); rtt > e.cfg.MaxRTT {
		e.stats.Rejected++
		return fmt.Errorf("%w: round trip %v over %v", ErrBadSample, rtt, e.cfg.MaxRTT)
	}
	if e.n > 0 && int64(s.ClientSend) == e.lastT1 && int64(s.ClientReceive) == e.lastT4 {
		e.stats.Duplicates++
		return nil
	}
	e.lastT1, e.lastT4 = int64(s.ClientSend), int64(s.ClientReceive)
	e.stats.Samples++

	tc := int64(s.ClientSend) + int64(s.ClientReceive-s.ClientSend)/2
	u := int64(s.ServerReceive - s.ClientSend)
	w := int64(s.ClientReceive - s.ServerSend)
	if e.n == 0 {
		e.t0 = tc
		e.olderDirty = true
	}
	e.expire(tc)
	if e.n == e.cfg.MaxSamples {
		e.dropHead()
	}
	i := e.at(e.n)
	e.t[i], e.u[i], e.w[i] = tc, u, w
	e.ud[i] = u - e.trend(tc)
	e.wd[i] = w + e.trend(tc)
	e.n++

	e.last = e.detectSteps()
	binDone := e.addToBin(tc, u, w)
	e.sinceFit++
	if e.sinceFit >= fitEvery(e.n) || binDone || e.last != EventNone {
		e.fit(tc, binDone || e.last != EventNone)
		e.sinceFit = 0
	}
	e.update()
	return nil
}

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
		e.older.minU = min(e.older.minU, u)
		e.older.minW = min(e.older.minW, w)
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
		for j, u := range us {
			w := ws[j]
			s.minU = min(s.minU, u)
			s.minW = min(s.minW, w)
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
	return scanned{minU: min(s.minU, o.minU), minW: min(s.minW, o.minW),
		sumU: s.sumU + o.sumU, sumW: s.sumW + o.sumW, n: s.n + o.n}
}

// meanExcessOf returns the mean distance of a range's samples above the
// given floors.
func (e *Estimator) meanExcessOf(s scanned, fu, fw int64) (int64, int64) {
	if s.n == 0 {
		return 0, 0
	}
	return s.sumU/s.n + e.refU - fu, s.sumW/s.n + e.refW - fw
}

// tolerances returns how far below a floor a sample must be to count as a
// step down (a quarter of the mean excess over the floor, which the floor
// settling cannot produce once the window holds a few dozen samples), and
// how far above for a step up (twice the mean excess: ten such samples in a
// row happen by chance about once in 10⁹ for exponential jitter, never for
// uniform), per direction, never under 200µs.
func (e *Estimator) tolerances(older scanned) (dropU, dropW, riseU, riseW int64) {
	meanU, meanW := e.meanExcessOf(older, older.minU, older.minW)
	// The floors are tilted by as much as the drift's error over the window.
	rse := e.rSE
	if !e.fitted {
		rse = priorDriftSE
	}
	floor := int64(200*time.Microsecond) + int64(3*rse*float64(e.t[e.at(e.n-1)]-e.t[e.head]))
	return max(floor, meanU/4), max(floor, meanW/4), max(floor, 2*meanU), max(floor, 2*meanW)
}

// detectSteps looks for a floor that moved, and rebases or restarts.
func (e *Estimator) detectSteps() Event {
	jc, rc := e.cfg.JumpConfirm, e.cfg.RiseConfirm
	if e.n < 2*rc+jc { // too few samples to tell a step from the floor settling
		return EventNone
	}
	newest := e.at(e.n - 1)
	older := e.olderSummary()
	fu, fw := older.minU, older.minW
	dropU, dropW, riseU, riseW := e.tolerances(older)

	count := func(c *int, cond bool) {
		if cond {
			*c++
		} else {
			*c = 0
		}
	}
	count(&e.belowU, e.ud[newest] < fu-dropU)
	count(&e.belowW, e.wd[newest] < fw-dropW)
	// The rise threshold is frozen when a run starts: the samples after a
	// step raise the mean excess it derives from, and would otherwise lift
	// it past the step.
	if e.aboveU == 0 {
		e.riseAtU = riseU
	}
	if e.aboveW == 0 {
		e.riseAtW = riseW
	}
	count(&e.aboveU, e.ud[newest] > fu+e.riseAtU)
	count(&e.aboveW, e.wd[newest] > fw+e.riseAtW)
	// A rise must also last: a queue (bufferbloat) can hold one direction
	// high for a second or two, a route change stays. Waiting costs
	// nothing, since a rise cannot drag the minimum.
	risen := func(n int) bool {
		return n >= rc && e.t[newest]-e.t[e.at(e.n-n)] >= int64(riseHold)
	}

	dropped := e.belowU >= jc || e.belowW >= jc
	if !dropped && !risen(e.aboveU) && !risen(e.aboveW) {
		return EventNone
	}
	spanU, spanW := e.aboveU, e.aboveW
	if dropped {
		spanU, spanW = e.belowU, e.belowW
		// A clock jump moves the two floors by the same amount in
		// opposite directions: one side drops below its floor (which
		// queueing can't explain) and the other rises by about as much,
		// over the same samples. When in doubt it is a jump: restarting
		// the window only costs precision for a while, while holding the
		// offset across a real jump would keep its error.
		span := min(max(spanU, spanW), e.n-1)
		a, b := e.change(span)
		meanU, meanW := riseU/2, riseW/2
		isJump := (a < -dropU && b > dropW) || (b < -dropW && a > dropU)
		if ma, mb := abs64(a), abs64(b); isJump && abs64(ma-mb) <= max(meanU+meanW, max(ma, mb)/4) {
			e.belowU, e.belowW, e.aboveU, e.aboveW = 0, 0, 0, 0
			e.olderDirty = true
			e.restart(span)
			e.stats.Jumps++
			return EventClockJump
		}
		if e.belowU < jc {
			spanU = 0
		}
		if e.belowW < jc {
			spanW = 0
		}
	} else {
		// Measure both floors over the span of the rise: a clock that
		// slews (NTP runs CLOCK_MONOTONIC up to 500 ppm fast or slow)
		// lowers one floor as fast as it lifts the other, and the falling
		// one is absorbed sample by sample without any event. Equal and
		// opposite moves are the clock: shift both and keep A.
		span := min(max(spanU, spanW), e.n-1)
		a, b := e.change(span)
		meanU, meanW := riseU/2, riseW/2
		noiseU := max(int64(200*time.Microsecond), 6*meanU/int64(span))
		noiseW := max(int64(200*time.Microsecond), 6*meanW/int64(span))
		if (a < 0) != (b < 0) && abs64(a) > noiseU && abs64(b) > noiseW &&
			abs64(a+b) <= max(noiseU+noiseW, max(abs64(a), abs64(b))/2) {
			// The rate changed: the window and the drift history keep
			// only what followed the shift, and the drift is refitted on
			// every new bin until the history fills again.
			e.belowU, e.belowW, e.aboveU, e.aboveW = 0, 0, 0, 0
			e.head = e.at(e.n - span)
			e.n = span
			e.olderN, e.olderDirty = 0, true
			since := e.t[e.head]
			for e.binN > 0 && e.bins[e.binHead].start < since {
				e.binHead = (e.binHead + 1) % numBins
				e.binN--
			}
			e.binsDone = e.binN
			e.stats.ClockShifts++
			return EventClockShift
		}
		if !risen(e.aboveU) {
			spanU = 0
		}
		if !risen(e.aboveW) {
			spanW = 0
		}
	}
	// A path change: each direction that moved is rebased from before its
	// own step onto its new floor, and A absorbs the difference, so the
	// offset holds.
	var a, b int64
	if spanU > 0 {
		spanU = min(spanU, e.n-1)
		a, _ = e.change(spanU)
	}
	if spanW > 0 {
		spanW = min(spanW, e.n-1)
		_, b = e.change(spanW)
	}
	// Only a change beyond the step tolerances is a step.
	if abs64(a) <= dropU {
		a, spanU = 0, 0
	}
	if abs64(b) <= dropW {
		b, spanW = 0, 0
	}
	if a == 0 && b == 0 {
		e.belowU, e.belowW, e.aboveU, e.aboveW = 0, 0, 0, 0
		return EventNone
	}
	e.belowU, e.belowW, e.aboveU, e.aboveW = 0, 0, 0, 0
	e.olderDirty = true
	e.rebase(spanU, a, spanW, b)
	e.asym += a - b
	e.stats.PathChanges++
	return EventPathChange
}

// rebase moves the samples before the newest spanU onto the uplink's new
// floor (by a), and those before the newest spanW onto the downlink's (by
// b), with the drift history from before the earlier of the two steps; what
// straddles or follows it is dropped.
func (e *Estimator) rebase(spanU int, a int64, spanW int, b int64) {
	stepAt := e.t[e.at(e.n-1)]
	if a != 0 {
		stepAt = min(stepAt, e.t[e.at(e.n-spanU)])
	}
	if b != 0 {
		stepAt = min(stepAt, e.t[e.at(e.n-spanW)])
	}
	for k := 0; k < e.n-spanU; k++ {
		i := e.at(k)
		e.u[i] += a
		e.ud[i] += a
	}
	for k := 0; k < e.n-spanW; k++ {
		i := e.at(k)
		e.w[i] += b
		e.wd[i] += b
	}
	for k := 0; k < e.binN; k++ {
		bn := &e.bins[(e.binHead+k)%numBins]
		if bn.start+binDuration > stepAt {
			e.binN = k
			break
		}
		bn.minU += a
		bn.minW += b
	}
	e.cur = bin{}
}

// change returns how far each floor moved: the minimum of the newest span
// samples against the minimum of the rest.
func (e *Estimator) change(span int) (a, b int64) {
	ru, rw := e.minDetrended(e.n-span, e.n)
	fu, fw := e.minDetrended(0, e.n-span)
	return ru - fu, rw - fw
}

// restart keeps only the newest keep samples. The path did not change, so
// A stays; neither does the drift.
func (e *Estimator) restart(keep int) {
	e.head = e.at(e.n - keep)
	e.n = keep
	e.olderN, e.olderDirty = 0, true
	e.bound = -1
	e.binN, e.binsDone, e.cur = 0, 0, bin{}
}

// addToBin records a sample in the drift tracker and reports whether it
// completed a bin.
func (e *Estimator) addToBin(t, u, w int64) bool {
	done := false
	if e.cur.n > 0 && t-e.cur.start >= binDuration {
		done = true
		if e.binN == numBins {
			e.binHead = (e.binHead + 1) % numBins
			e.binN--
		}
		e.bins[(e.binHead+e.binN)%numBins] = e.cur
		e.binN++
		e.binsDone++
		e.cur = bin{}
	}
	if e.cur.n == 0 {
		e.cur = bin{start: t, tu: t, tw: t, minU: u, minW: w}
	}
	if u < e.cur.minU {
		e.cur.minU, e.cur.tu = u, t
	}
	if w < e.cur.minW {
		e.cur.minW, e.cur.tw = w, t
	}
	e.cur.n++
	return done
}

// fit re-estimates the drift from the bin minima if they changed, and
// re-anchors the detrended values at now.
func (e *Estimator) fit(now int64, drift bool) {
	// The drift changes slowly: refit on every new bin while the history
	// is short, on every fourth after.
	changed := false
	if drift && (e.binsDone < 16 || e.binsDone%4 == 0 || e.last != EventNone) {
		if r, se, ok := e.regressBins(0); ok {
			// Shrink toward zero by the prior on clock drift: a slope
			// fitted to a few noisy bins must not steer the clock.
			k := driftPrior * driftPrior / (driftPrior*driftPrior + se*se)
			r, se = r*k, math.Sqrt(k)*se
			changed = r != e.r
			e.r, e.rSE, e.fitted = r, se, true
		}
	}
	if !changed {
		if drift || e.n < 64 {
			e.bound = e.statBound()
		}
		return
	}
	// A new drift tilts every detrended value: re-anchor them at now.
	e.t0 = now
	e.olderDirty = true
	for k := 0; k < e.n; k++ {
		i := e.at(k)
		tr := e.trend(e.t[i])
		e.ud[i] = e.u[i] - tr
		e.wd[i] = e.w[i] + tr
	}
	if drift || e.n < 64 {
		e.bound = e.statBound()
	}
}

// regressBins fits the drift to the lower envelope of the one-way deltas:
// one slope through the bin minima of u and of −w, with an intercept per
// direction (gonum's weighted LinearRegression on centred data). A second
// pass keeps only the bins at or below the first line's median residual,
// since the minimum of a bin can be late (queueing) but never early. It
// returns the drift, its standard error, and false with fewer than 4 bins.
func (e *Estimator) regressBins(from int) (r, se float64, ok bool) {
	if e.binN-from < 4 {
		return 0, 0, false
	}
	// Centre each direction's points on its own means, then one
	// regression through the origin gives the pooled slope.
	load := func(keep func(x, y, fitted float64) bool, slope float64) {
		e.xs, e.ys, e.ws = e.xs[:0], e.ys[:0], e.ws[:0]
		for dir := range 2 {
			start := len(e.xs)
			var mx, my float64
			for k := from; k < e.binN; k++ {
				bn := e.bins[(e.binHead+k)%numBins]
				x, y := float64(bn.tu-e.t0)/1e9, float64(bn.minU)/1e9
				if dir == 1 {
					x, y = float64(bn.tw-e.t0)/1e9, -float64(bn.minW)/1e9
				}
				e.xs, e.ys = append(e.xs, x), append(e.ys, y)
			}
			pts := e.xs[start:]
			for j := range pts {
				mx += pts[j]
				my += e.ys[start+j]
			}
			mx /= float64(len(pts))
			my /= float64(len(pts))
			for j := range pts {
				e.xs[start+j] -= mx
				e.ys[start+j] -= my
			}
		}
		for j := range e.xs {
			w := 1.0
			if keep != nil && !keep(e.xs[j], e.ys[j], slope*e.xs[j]) {
				w = 0
			}
			e.ws = append(e.ws, w)
		}
	}
	load(nil, 0)
	_, beta := stat.LinearRegression(e.xs, e.ys, e.ws, true)
	// The standard error comes from the scatter of every bin about the
	// first line: the trimmed half below scatters less than the slope
	// really wanders, and an overconfident drift steers the clock.
	var ss, sxx float64
	for j := range e.xs {
		d := e.ys[j] - beta*e.xs[j]
		ss += d * d
		sxx += e.xs[j] * e.xs[j]
	}
	n := float64(len(e.xs))
	if sxx == 0 || n < 8 {
		return 0, 0, false
	}
	se = math.Sqrt(ss/(n-3)) / math.Sqrt(sxx)
	// Queues that last longer than a bin make neighbouring bins' residuals
	// alike, and then n overstates what the bins know: widen the error by
	// the lag-1 autocorrelation ρ of the residuals (effective sample size
	// n(1−ρ)/(1+ρ)).
	var c0, c1 float64
	per := len(e.xs) / 2
	for dir := range 2 {
		prev := math.NaN()
		for j := dir * per; j < (dir+1)*per; j++ {
			d := e.ys[j] - beta*e.xs[j]
			c0 += d * d
			if !math.IsNaN(prev) {
				c1 += d * prev
			}
			prev = d
		}
	}
	if rho := c1 / c0; rho > 0 && c0 > 0 {
		se *= math.Sqrt((1 + min(rho, 0.9)) / (1 - min(rho, 0.9)))
	}
	// Refit on the lower half of the residuals.
	res := e.ws[:0]
	for j := range e.xs {
		res = append(res, e.ys[j]-beta*e.xs[j])
	}
	med := medianOf(res)
	load(func(x, y, fitted float64) bool { return y-fitted <= med }, beta)
	_, beta = stat.LinearRegression(e.xs, e.ys, e.ws, true)
	return beta, se, true
}

// medianOf returns the median of v, reordering it.
func medianOf(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// spacing returns the mean spacing of the k lowest values of vals above the
// floor: an estimate of how far the floor can still be above the true one
// (for a density that is finite at the floor the spacings are exponential
// with this mean).
func (e *Estimator) spacing(vals []int64) int64 {
	const k = 8
	var low [k]int64
	m := 0
	for j := 0; j < e.n; j++ {
		v := vals[e.at(j)]
		if m < k {
			low[m] = v
			m++
		} else if v < low[k-1] {
			low[k-1] = v
		} else {
			continue
		}
		for q := m - 1; q > 0 && low[q] < low[q-1]; q-- {
			low[q], low[q-1] = low[q-1], low[q]
		}
	}
	if m < 2 {
		return -1
	}
	return (low[m-1] - low[0]) / int64(m-1)
}

// statBound is the statistical part of the error bound: the offset error
// (εu − εw)/2 stays under 2.65·(mu + mw) with 99% when the floor excesses
// are exponential with means mu, mw (P(ε > x) = e^(−x/m), ln 200 = 5.3),
// plus three standard errors of the drift over half the window.
func (e *Estimator) statBound() int64 {
	if e.n < 8 {
		return -1
	}
	mu, mw := e.spacing(e.ud), e.spacing(e.wd)
	b := 2.65 * float64(mu+mw)
	rse := e.rSE
	if !e.fitted {
		rse = priorDriftSE
	}
	span := float64(e.t[e.at(e.n-1)] - e.t[e.head])
	b += 3 * rse * span / 2
	b += wanderK * e.wander()
	return int64(b) + int64(20*time.Microsecond) // timestamp resolution
}

// wander returns the standard deviation of the offsets the drift history's
// bins imply, (min u − min w)/2 with the drift removed, over the window: on a
// stable path only the floor noise, on one whose asymmetry wanders (satellite
// handovers, queues that build one way) more, which the spacing of the
// lowest samples cannot see.
func (e *Estimator) wander() float64 {
	var s, ss, n float64
	for k := 0; k < e.binN; k++ {
		bn := e.bins[(e.binHead+k)%numBins]
		if e.n > 0 && bn.start < e.t[e.head] {
			continue // older than the window
		}
		u := float64(bn.minU) - e.r*float64(bn.tu-e.t0)
		w := float64(bn.minW) + e.r*float64(bn.tw-e.t0)
		th := (u - w) / 2
		s += th
		ss += th * th
		n++
	}
	if n < 4 {
		return 0
	}
	m := s / n
	return math.Sqrt(max(0, ss/n-m*m))
}

// wanderK scales wander in the bound.
const wanderK = 2.0

// priorDriftSE is the drift uncertainty assumed before it can be fitted:
// consumer clocks drift up to about 500 ppm.
const priorDriftSE = 250e-6

// riseHold is how long a floor must stay risen before it counts as a path
// change.
const riseHold = 5 * time.Second

// driftPrior is the spread of clock drifts the fitted drift is shrunk by
// (a normal prior centred on 0): consumer clocks drift by a median of about
// 78 ppm and some beyond 500 ppm.
const driftPrior = 200e-6

// update recomputes the Estimate after a sample. Samples in an unconfirmed
// run below a floor are held out: until classified they may be a clock
// jump, which must not drag one floor alone.
func (e *Estimator) update() {
	use := e.n - max(e.belowU, e.belowW)
	if use < 1 {
		use = e.n
	}
	var used scanned
	if older := e.olderSummary(); use >= e.olderN {
		used = older.merge(e.scan(e.olderN, use))
	} else {
		used = e.scan(0, use)
	}
	all := used.merge(e.scan(use, e.n))
	fu, fw := used.minU, used.minW
	meanU, meanW := e.meanExcessOf(all, fu, fw)
	// A can't be more than the round trip: clamping keeps the estimate in
	// the interval every sample allows.
	rttFloor := max(0, fu+fw)
	asym := max(-rttFloor, min(rttFloor, e.asym))
	theta := (fu - fw - asym) / 2
	upFloor := (rttFloor + asym) / 2
	downFloor := rttFloor - upFloor
	hard := (rttFloor + abs64(asym)) / 2
	bound := hard
	if e.bound >= 0 {
		bound = min(hard, e.bound)
	}
	e.est = provider.Estimate{
		Valid:      true,
		At:         time.Duration(e.t0),
		Offset:     time.Duration(theta),
		DriftPPM:   e.r * 1e6,
		Uplink:     time.Duration(upFloor + meanU),
		Downlink:   time.Duration(downFloor + meanW),
		Jitter:     time.Duration(meanU + meanW),
		ErrorBound: time.Duration(bound),
	}
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
