package netsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Direction names one or both directions of a path.
type Direction string

// The directions. The client is the one end, the server the other.
const (
	// DirUp is client to server.
	DirUp Direction = "up"
	// DirDown is server to client.
	DirDown Direction = "down"
	// DirBoth is both directions (only meaningful in a Change).
	DirBoth Direction = "both"
)

// LinkSpec describes one direction of a network path. The zero value is a
// perfect link: no delay, no loss.
//
// The one-way delay of a packet sent at true time t is
//
//	wait(t) + Base + flap(t) + step(t) + queue(t) + bloat(t) + jitter [+ ReorderDelay if held back]
//
// where every term is non-negative, so Base (plus the current flap and
// handover step) is the smallest delay the link ever produces; wait(t) is
// the time to the next service instant of Periodic. Delays are drawn per packet
// and delivery is not FIFO: as on a real UDP path, a packet that draws less
// jitter than its predecessor overtakes it. Consumers must not assume
// in-order arrival.
type LinkSpec struct {
	// Base is the fixed one-way delay (propagation and serialization), the
	// floor of all delays. Default 0.
	Base time.Duration

	// Jitter is the random per-packet extra delay, independent between
	// packets. Default none.
	Jitter JitterSpec

	// Queue, if set, adds a slowly varying queueing delay that is
	// correlated in time (bufferbloat). Default none.
	Queue *QueueSpec

	// Steps, if set, adds a piecewise constant extra delay that changes at
	// regular intervals (satellite handovers, route flaps). Default none.
	Steps *StepSpec

	// Loss is the probability that a packet is lost, independently of all
	// other packets. Default 0.
	Loss float64

	// Burst, if set, adds bursty loss on top of Loss. Default none.
	Burst *GilbertElliott

	// Reorder is the probability that a packet is held back an extra
	// ReorderDelay, so that later packets overtake it. Default 0.
	Reorder float64

	// ReorderDelay is the extra delay of a held-back packet; it must be
	// positive when Reorder is. Default 0.
	ReorderDelay time.Duration

	// Duplicate is the probability that a delivered packet is delivered a
	// second time. The copy draws its own jitter and reordering (it shares
	// Base, the step and the queue), so it may arrive before the original.
	// Lost packets are never duplicated. Default 0.
	Duplicate float64

	// Periodic, if set, holds every packet until the next service instant
	// (Wi-Fi power save, a cellular scheduling grant). Default none.
	Periodic *PeriodicSpec

	// Bloat, if set, adds a queue that competing traffic fills over
	// seconds and drains slowly. Default none.
	Bloat *BloatSpec

	// Flap, if set, flaps the floor between Base and Base+Flap.Extra.
	// Default none.
	Flap *FlapSpec
}

// GilbertElliott is the two-state Markov model of bursty loss. A link starts
// in the good state. For every packet, the packet is first lost with
// probability LossInBad if the link is in the bad state, then the state
// changes with probability PGoodToBad (from good) or PBadToGood (from bad).
// The bad state therefore lasts 1/PBadToGood packets on average, the link is
// bad a fraction PGoodToBad/(PGoodToBad+PBadToGood) of the time, and the loss
// rate it adds is that fraction times LossInBad. Transitions are per packet,
// so bursts measured in time scale with the send rate. The link's Loss
// applies independently in both states.
type GilbertElliott struct {
	// PGoodToBad is the per-packet probability of entering the bad state.
	PGoodToBad float64
	// PBadToGood is the per-packet probability of leaving the bad state;
	// it must be positive.
	PBadToGood float64
	// LossInBad is the probability that a packet sent in the bad state is
	// lost.
	LossInBad float64
}

// QueueSpec is a queueing delay that random-walks in time (bufferbloat): an
// Ornstein–Uhlenbeck process q with stationary mean Mean and standard
// deviation StdDev, whose values Δt apart have correlation exp(-Δt/Tau). The
// delay added is max(q, 0), so its mean is slightly above Mean when StdDev is
// comparable to Mean. Because the correlation is defined in time, not per
// packet, the process looks the same at any send rate.
type QueueSpec struct {
	// Mean is the stationary mean of the queueing delay.
	Mean time.Duration
	// StdDev is the stationary standard deviation.
	StdDev time.Duration
	// Tau is the correlation time: how long the queue takes to forget its
	// level. Zero makes the queue independent per packet.
	Tau time.Duration
}

// StepSpec is an extra delay that is constant for Interval, then jumps to a
// new value drawn uniformly from [0, Max), at every multiple of Interval of
// true time. It models LEO satellite handovers (Starlink reassigns a
// terminal's satellite every 15 s) and other periodic route changes. The
// values are a pure function of the link's seed and the interval index.
type StepSpec struct {
	// Interval is the time between changes; it must be positive.
	Interval time.Duration
	// Max bounds the extra delay: each interval draws from [0, Max).
	Max time.Duration
}

// Validate reports whether s is a usable link spec.
func (s LinkSpec) Validate() error {
	var v validator
	s.validate(&v, "link")
	return v.err()
}

func (s LinkSpec) validate(v *validator, path string) {
	v.delay(path+".base", s.Base)
	s.Jitter.validate(v, path+".jitter")
	if q := s.Queue; q != nil {
		v.delay(path+".queue.mean", q.Mean)
		v.delay(path+".queue.stdDev", q.StdDev)
		v.delay(path+".queue.tau", q.Tau)
	}
	if st := s.Steps; st != nil {
		if st.Interval <= 0 {
			v.addf(path+".steps.interval", "must be positive, got %v", st.Interval)
		}
		v.delay(path+".steps.max", st.Max)
	}
	v.prob(path+".loss", s.Loss)
	if b := s.Burst; b != nil {
		v.prob(path+".burst.pGoodToBad", b.PGoodToBad)
		v.prob(path+".burst.pBadToGood", b.PBadToGood)
		v.prob(path+".burst.lossInBad", b.LossInBad)
		if b.PBadToGood == 0 {
			v.addf(path+".burst.pBadToGood", "must be positive: 0 would never leave the bad state")
		}
	}
	v.prob(path+".reorder", s.Reorder)
	v.delay(path+".reorderDelay", s.ReorderDelay)
	if s.Reorder > 0 && s.ReorderDelay == 0 {
		v.addf(path+".reorderDelay", "must be positive when reorder is set (got reorder %v)", s.Reorder)
	}
	v.prob(path+".duplicate", s.Duplicate)
	v.periodic(path+".periodic", s.Periodic)
	v.bloat(path+".bloat", s.Bloat)
	v.flap(path+".flap", s.Flap)
}

// LinkStats counts what a Link did.
type LinkStats struct {
	// Sent is the number of Send and SendAppend calls.
	Sent uint64
	// Lost is the number of packets lost to random (Loss) or bursty
	// (Burst) loss, outside outages.
	Lost uint64
	// OutageDropped is the number of packets dropped by outages.
	OutageDropped uint64
	// Delivered is the number of copies delivered, duplicates included.
	Delivered uint64
	// Duplicated is the number of extra copies delivered.
	Duplicated uint64
	// Reordered is the number of copies held back by ReorderDelay.
	Reordered uint64
}

// linkSegment is the link's changeable state from start on.
type linkSegment struct {
	start        time.Duration
	base         time.Duration
	jitter       JitterSpec
	loss         float64
	queue        *QueueSpec
	queueFrom    time.Duration // start of the run of segments with a queue that holds this one
	steps        *StepSpec
	reorder      float64
	reorderDelay time.Duration
	duplicate    float64
	periodic     *PeriodicSpec
	ramp         time.Duration // > 0: values move from the previous segment's over [start, start+ramp)
}

type window struct{ from, to time.Duration } // [from, to)

// Link is one direction of a simulated path: it turns send times into arrival
// times. It is deterministic: the same spec, changes, seed and sequence of
// Send calls give the same arrivals. A Link is not safe for concurrent use.
//
// Times are true times (time.Duration since the start of the run); the Link
// never reads a clock, so the same Link serves a virtual-time simulation and
// a wall-time emulator (which passes time.Since(start)). Send times should not
// decrease; if they do, changes and outages still apply by the send time, but
// the queue holds its state (it does not run backwards).
type Link struct {
	dir     Direction
	spec    LinkSpec
	segs    []linkSegment // segs[0].start == math.MinInt64; sorted by start
	seg     int           // cached index into segs
	outages []window      // sorted, disjoint

	jitRNG, lossRNG, burstRNG, queueRNG, reRNG, dupRNG *rand.Rand
	stepSeed                                           uint64

	bad   bool    // Gilbert–Elliott state
	qInit bool    // queue state initialised
	q     float64 // queue state, ns
	qLast time.Duration
	qRun  time.Duration // queueFrom of the run the state belongs to

	bloat *bloat      // nil without Bloat
	flap  *alternator // nil without Flap
	ramp  linkSegment // scratch: the interpolated segment during a ramp

	stats LinkStats
}

// NewLink builds the link of direction dir (DirUp or DirDown) from spec, the
// changes that name dir or DirBoth, and seed.
func NewLink(spec LinkSpec, dir Direction, changes []Change, seed uint64) (*Link, error) {
	var v validator
	if dir != DirUp && dir != DirDown {
		v.addf("direction", "must be \"up\" or \"down\", got %q", dir)
	}
	spec.validate(&v, string(dir))
	for i, c := range changes {
		c.validate(&v, fmt.Sprintf("changes[%d]", i))
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	l := &Link{
		dir:      dir,
		spec:     cloneLinkSpec(spec),
		jitRNG:   newRand(seed, streamJitter),
		lossRNG:  newRand(seed, streamLoss),
		burstRNG: newRand(seed, streamBurst),
		queueRNG: newRand(seed, streamQueue),
		reRNG:    newRand(seed, streamReorder),
		dupRNG:   newRand(seed, streamDuplicate),
		stepSeed: derive(seed, streamSteps),
	}
	if spec.Bloat != nil {
		l.bloat = newBloat(*spec.Bloat, seed)
	}
	if spec.Flap != nil {
		l.flap = newFlap(*spec.Flap, seed)
	}
	var mine []Change
	for _, c := range changes {
		if c.applies(dir) {
			mine = append(mine, c)
		}
	}
	slices.SortStableFunc(mine, func(a, b Change) int { return cmpDur(a.At, b.At) })
	l.segs = []linkSegment{{start: math.MinInt64, queueFrom: math.MinInt64, base: spec.Base, jitter: spec.Jitter, loss: spec.Loss,
		queue: spec.Queue, steps: spec.Steps, reorder: spec.Reorder, reorderDelay: spec.ReorderDelay,
		duplicate: spec.Duplicate, periodic: spec.Periodic}}
	for _, c := range mine {
		if c.Outage > 0 {
			l.outages = append(l.outages, window{c.At, c.At + c.Outage})
		}
		if !c.setsLink() {
			continue
		}
		s := l.segs[len(l.segs)-1]
		if s.start != c.At {
			s.start = c.At
			s.ramp = 0
			l.segs = append(l.segs, s)
		}
		p := &l.segs[len(l.segs)-1]
		p.ramp = max(p.ramp, c.Ramp)
		if c.Base != nil {
			p.base = *c.Base
		}
		if c.Jitter != nil {
			p.jitter = *c.Jitter
		}
		if c.Loss != nil {
			p.loss = *c.Loss
		}
		if c.Queue != nil {
			p.queue = ptr(*c.Queue)
			if *c.Queue == (QueueSpec{}) {
				p.queue = nil
			}
		}
		if c.Steps != nil {
			p.steps = ptr(*c.Steps)
		}
		if c.Reorder != nil {
			p.reorder = *c.Reorder
		}
		if c.ReorderDelay != nil {
			p.reorderDelay = *c.ReorderDelay
		}
		if c.Duplicate != nil {
			p.duplicate = *c.Duplicate
		}
		if c.Periodic != nil {
			p.periodic = ptr(*c.Periodic)
			if c.Periodic.Period == 0 {
				p.periodic = nil
			}
		}
	}
	for i := range l.segs {
		switch {
		case l.segs[i].queue == nil:
		case i > 0 && l.segs[i-1].queue != nil:
			l.segs[i].queueFrom = l.segs[i-1].queueFrom
		default:
			l.segs[i].queueFrom = l.segs[i].start
		}
	}
	var v2 validator
	for _, sg := range l.segs {
		if sg.reorder > 0 && sg.reorderDelay == 0 {
			v2.addf(fmt.Sprintf("%s.reorderDelay", dir), "must be positive while reorder is set (reorder %v from %v)", sg.reorder, max(sg.start, 0))
		}
	}
	if err := v2.err(); err != nil {
		return nil, err
	}
	slices.SortFunc(l.outages, func(a, b window) int { return cmpDur(a.from, b.from) })
	var merged []window
	for _, w := range l.outages {
		if n := len(merged); n > 0 && w.from <= merged[n-1].to {
			merged[n-1].to = max(merged[n-1].to, w.to)
			continue
		}
		merged = append(merged, w)
	}
	l.outages = merged
	return l, nil
}

// Direction returns the link's direction.
func (l *Link) Direction() Direction { return l.dir }

// Stats returns the counters so far.
func (l *Link) Stats() LinkStats { return l.stats }

// Spec returns the link's spec in effect at true time now, with the changes
// up to now applied (outages and the handover step are not part of it).
func (l *Link) Spec(now time.Duration) LinkSpec {
	s := cloneLinkSpec(l.spec)
	seg := l.segmentAt(now)
	s.Base, s.Jitter, s.Loss = seg.base, seg.jitter, seg.loss
	s.Queue, s.Steps, s.Periodic = nil, nil, nil
	if seg.queue != nil {
		s.Queue = ptr(*seg.queue)
	}
	if seg.steps != nil {
		s.Steps = ptr(*seg.steps)
	}
	if seg.periodic != nil {
		s.Periodic = ptr(*seg.periodic)
	}
	s.Reorder, s.ReorderDelay, s.Duplicate = seg.reorder, seg.reorderDelay, seg.duplicate
	return s
}

// MinDelay returns the floor of the one-way delay at true time now: the base
// delay in effect plus the current flap and handover step (queues, periodic
// waits and jitter excluded). It is the ground truth a minimum-delay filter
// tries to find.
func (l *Link) MinDelay(now time.Duration) time.Duration {
	seg := l.segmentAt(now)
	return seg.base + l.flapAt(now) + l.step(seg, now)
}

// flapAt returns the flap's extra delay at now.
func (l *Link) flapAt(now time.Duration) time.Duration {
	if l.flap == nil || l.flap.count(now)%2 == 0 {
		return 0
	}
	return l.spec.Flap.Extra
}

// InOutage reports whether a packet sent at true time now is dropped by an
// outage.
func (l *Link) InOutage(now time.Duration) bool {
	// First window starting after now; the one before it may hold now.
	lo, hi := 0, len(l.outages)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if l.outages[m].from <= now {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo > 0 && now < l.outages[lo-1].to
}

// Send sends one packet at true time now and returns the true arrival times
// of its delivered copies: none if it is lost, two if it is duplicated. The
// original comes first; the times are not sorted.
func (l *Link) Send(now time.Duration) []time.Duration {
	var buf [2]time.Duration
	out := l.SendAppend(buf[:0], now)
	if len(out) == 0 {
		return nil
	}
	return slices.Clone(out)
}

// SendAppend is Send appending the arrival times to buf; it does not allocate
// when buf has room for two more.
func (l *Link) SendAppend(buf []time.Duration, now time.Duration) []time.Duration {
	l.stats.Sent++
	seg := l.segmentAt(now)

	// Draw everything this packet needs from every stream, whether or not
	// it is delivered, so that each stream's sequence depends only on the
	// number of packets sent.
	lost := l.lossRNG.Float64() < seg.loss
	if b := l.spec.Burst; b != nil {
		u1, u2 := l.burstRNG.Float64(), l.burstRNG.Float64()
		if l.bad {
			if u1 < b.LossInBad {
				lost = true
			}
			if u2 < b.PBadToGood {
				l.bad = false
			}
		} else if u2 < b.PGoodToBad {
			l.bad = true
		}
	}
	var q time.Duration
	if seg.queue != nil {
		q = l.queue(now, seg)
	}
	if l.bloat != nil {
		q += l.bloat.at(now)
	}
	jit := seg.jitter.sample(l.jitRNG)
	held := seg.reorder > 0 && l.reRNG.Float64() < seg.reorder
	dup := seg.duplicate > 0 && l.dupRNG.Float64() < seg.duplicate

	if l.InOutage(now) {
		l.stats.OutageDropped++
		return buf
	}
	if lost {
		l.stats.Lost++
		return buf
	}
	common := now + seg.periodic.wait(now) + seg.base + l.flapAt(now) + l.step(seg, now) + q
	t := common + jit
	if held {
		t += seg.reorderDelay
		l.stats.Reordered++
	}
	buf = append(buf, t)
	l.stats.Delivered++
	if dup {
		t := common + seg.jitter.sample(l.dupRNG)
		if seg.reorder > 0 && l.dupRNG.Float64() < seg.reorder {
			t += seg.reorderDelay
			l.stats.Reordered++
		}
		buf = append(buf, t)
		l.stats.Delivered++
		l.stats.Duplicated++
	}
	return buf
}

// segmentAt returns the change segment in effect at now.
func (l *Link) segmentAt(now time.Duration) *linkSegment {
	i := l.seg
	if now < l.segs[i].start || (i+1 < len(l.segs) && now >= l.segs[i+1].start) {
		lo, hi := 0, len(l.segs)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if l.segs[m].start <= now {
				lo = m + 1
			} else {
				hi = m
			}
		}
		i = lo - 1
		l.seg = i
	}
	s := &l.segs[i]
	if s.ramp > 0 && now < s.start+s.ramp && i > 0 {
		l.ramp = rampSegment(&l.segs[i-1], s, float64(now-s.start)/float64(s.ramp))
		return &l.ramp
	}
	return s
}

// step returns the handover step delay at now.
func (l *Link) step(seg *linkSegment, now time.Duration) time.Duration {
	st := seg.steps
	if st == nil || st.Max == 0 {
		return 0
	}
	k := now / st.Interval
	if now%st.Interval < 0 {
		k--
	}
	u := unitFloat(mix(l.stepSeed ^ uint64(k)))
	return time.Duration(u * float64(st.Max))
}

// queue advances the queue process to now, with the parameters of seg, and
// returns its delay. A queue present from the start starts in its
// stationary distribution; one switched on by a change starts empty at the
// change and builds up with its Tau.
func (l *Link) queue(now time.Duration, seg *linkSegment) time.Duration {
	z := l.queueRNG.NormFloat64()
	spec := seg.queue
	mean, sd, tau := float64(spec.Mean), float64(spec.StdDev), float64(spec.Tau)
	if seg.queueFrom != math.MinInt64 && (!l.qInit || l.qRun != seg.queueFrom) {
		l.qInit, l.qRun, l.q, l.qLast = true, seg.queueFrom, 0, seg.queueFrom
	}
	switch {
	case !l.qInit:
		// Start in the stationary distribution.
		l.qInit, l.qLast = true, now
		l.q = mean + sd*z
	case tau == 0:
		l.q = mean + sd*z
		l.qLast = max(l.qLast, now)
	default:
		// Exact discretization of the Ornstein–Uhlenbeck process.
		dt := float64(max(now-l.qLast, 0))
		a := math.Exp(-dt / tau)
		l.q = mean + (l.q-mean)*a + sd*math.Sqrt(1-a*a)*z
		l.qLast = max(l.qLast, now)
	}
	return clampDelay(l.q, 0)
}

func cloneLinkSpec(s LinkSpec) LinkSpec {
	if s.Queue != nil {
		q := *s.Queue
		s.Queue = &q
	}
	if s.Steps != nil {
		st := *s.Steps
		s.Steps = &st
	}
	if s.Burst != nil {
		b := *s.Burst
		s.Burst = &b
	}
	if s.Periodic != nil {
		s.Periodic = ptr(*s.Periodic)
	}
	if s.Bloat != nil {
		s.Bloat = ptr(*s.Bloat)
	}
	if s.Flap != nil {
		s.Flap = ptr(*s.Flap)
	}
	return s
}
