package harness

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/netclock/netclock/internal/rank"
	"math"
	"time"

	"github.com/netclock/netclock/netsim"
)

// Limits of a Run: it keeps every client frame's error in memory (16 bytes
// a frame).
const (
	// MaxDuration is the longest run.
	MaxDuration = 24 * time.Hour
	// MaxFrames is the most client frames a run may have (2^23: 39 hours
	// at 60 Hz, 2.3 hours at the 1000 Hz limit of netsim).
	MaxFrames = 1 << 23
)

// Options configure a Run.
type Options struct {
	// Profile is the network and clocks to simulate.
	Profile netsim.Profile
	// Seed makes the run reproducible. Default: 1.
	Seed uint64
	// Duration is the simulated time. Default: 10 minutes.
	Duration time.Duration
	// Warmup is excluded from the error statistics. Default: 10s.
	Warmup time.Duration
	// Systems to run. Default: Systems().
	Systems []System
	// TraceEvery samples each system's error into Result.Trace at this
	// interval; 0 records no trace.
	TraceEvery time.Duration
	// Buffers, if set, also measures inputs and interpolation over each
	// netclock system's clock (Result.Buffers); nil measures neither and
	// costs nothing.
	Buffers *BufferOptions
}

// Systems returns netclock followed by the seed baselines.
func Systems() []System { return append([]System{Netclock()}, Baselines()...) }

// AllSystems returns netclock, the seed baselines and the reference filters.
func AllSystems() []System { return append(Systems(), References()...) }

// Percentiles of |error| in milliseconds.
type Percentiles struct {
	P50  float64 `json:"p50"`  // median
	P99  float64 `json:"p99"`  // 99th percentile
	P999 float64 `json:"p999"` // 99.9th percentile
	Max  float64 `json:"max"`  // the largest
}

// Result is one system's measurements.
type Result struct {
	// System is the System's Name.
	System string `json:"system"`
	// Kind is "netclock", "seed" or "reference".
	Kind Kind `json:"kind"`
	// PingS is the system's request period in seconds (0: once).
	PingS float64 `json:"ping_s"`
	// SharedErrorMS: |shared − true server time| over every client frame
	// after the warm-up.
	SharedErrorMS Percentiles `json:"shared_error_ms"`
	// ConvergeS is when |error| came within 5ms for good; nil if it never
	// did.
	ConvergeS *float64 `json:"converge_s"`
	// Resets counts hard resets (snaps); 0 for systems that don't report.
	Resets int `json:"resets"`
	// BoundCoverage is the fraction of frames after the warm-up whose
	// |error| was within the system's bound; nil without a bound.
	BoundCoverage *float64 `json:"bound_coverage"`
	// RateP99PPM is the 99th percentile of |rate − 1| per frame after the
	// warm-up, in ppm, of the timeline the system's ticks follow (Shared,
	// or Timeliner's): how steadily ticks are delivered.
	RateP99PPM float64 `json:"rate_p99_ppm"`
	// ReversalsPerMin counts switches between running fast (> +500 ppm)
	// and running slow (< −500 ppm), per minute after the warm-up: steady
	// oscillation.
	ReversalsPerMin float64 `json:"reversals_per_min"`
	// Buffers holds the input and interpolation measurements of each
	// buffer model over this system's clock (Options.Buffers; netclock
	// systems only).
	Buffers []BufferResult `json:"buffers,omitempty"`
	// OracleSendLeadMS is the hindsight oracle's lead: the smallest
	// constant lead (predicted time − true server time) with which this
	// run's client, sending each input at the first of its frames whose
	// predicted time reached the input's tick, would have put 99% of its
	// inputs on time, ms (see OracleFrameLead; nil if no lead up to
	// MaxOracleLead would).
	// OracleLeadMS is how long before their tick the oracle's inputs
	// arrive, on average, ms: the figure to compare with each model's
	// InputLeadMS.Mean. OracleTickSendLeadMS and OracleTickLeadMS are the
	// same for inputs sent exactly at a chosen time before their tick, as
	// no frame-driven game can (see OracleLead): the uplink's share alone.
	// OracleInterpDelayMS is the smallest constant interpolation delay
	// (true server time − interpolation time) that would have starved at
	// most 1% of the client's frames, ms. Set with Buffers.
	OracleSendLeadMS     *float64 `json:"oracle_send_lead_ms,omitempty"`
	OracleLeadMS         *float64 `json:"oracle_lead_ms,omitempty"`
	OracleTickSendLeadMS *float64 `json:"oracle_tick_send_lead_ms,omitempty"`
	OracleTickLeadMS     *float64 `json:"oracle_tick_lead_ms,omitempty"`
	OracleInterpDelayMS  *float64 `json:"oracle_interp_delay_ms,omitempty"`
	// Trace holds samples of the error and bound if Options.TraceEvery is
	// set.
	Trace []TracePoint `json:"-"`
}

// TracePoint is one sample of a system's error and bound.
type TracePoint struct {
	T       float64 // true time since the start, in seconds
	ErrMS   float64 // shared − true server time, in ms
	BoundMS float64 // the system's error bound, in ms; 0 if it publishes none
}

// Report is the outcome of a Run.
type Report struct {
	Profile   string   `json:"profile"`    // the profile's name
	Seed      uint64   `json:"seed"`       // Options.Seed
	DurationS float64  `json:"duration_s"` // simulated time, in seconds
	Results   []Result `json:"results"`    // one per system, in Options.Systems' order
}

const (
	convergeWithin = 5 * time.Millisecond
	reversalPPM    = 500
)

// Run simulates every system on the profile, each on its own copy of the
// same seeded network, and measures them.
func Run(o Options) (Report, error) {
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Duration == 0 {
		o.Duration = 10 * time.Minute
	}
	if o.Warmup == 0 {
		o.Warmup = 10 * time.Second
	}
	if o.Systems == nil {
		o.Systems = Systems()
	}
	frame := o.Profile.Frames.Interval
	if frame <= 0 {
		frame = netsim.DefaultFrameInterval
	}
	switch {
	case o.Duration < 0 || o.Warmup < 0:
		return Report{}, errors.New("harness: negative duration or warm-up")
	case o.Duration > MaxDuration:
		return Report{}, fmt.Errorf("harness: duration %v is longer than the maximum %v", o.Duration, MaxDuration)
	case o.Duration/frame > MaxFrames:
		return Report{}, fmt.Errorf("harness: %v of %v frames is more than %d frames: shorten the run", o.Duration, frame, MaxFrames)
	case o.Warmup >= o.Duration:
		return Report{}, fmt.Errorf("harness: warm-up %v is not shorter than the run %v", o.Warmup, o.Duration)
	}
	if err := o.Profile.Validate(); err != nil {
		return Report{}, fmt.Errorf("harness: profile %q: %w", o.Profile.Name, err)
	}
	rep := Report{Profile: o.Profile.Name, Seed: o.Seed, DurationS: o.Duration.Seconds()}
	for _, sys := range o.Systems {
		r, err := runOne(o, sys)
		if err != nil {
			return Report{}, fmt.Errorf("harness: %s: %w", sys.Name, err)
		}
		rep.Results = append(rep.Results, r)
	}
	return rep, nil
}

// event kinds, in the order simultaneous events are handled.
const (
	evToServer = iota
	evToClient
	evServerFrame
	evClientFrame
	evClientPing
)

type event struct {
	at   time.Duration // true time
	kind int
	seq  uint64 // FIFO among equal times
	msg  Msg
}

// eventQueue is a binary min-heap of events, typed (container/heap would
// box every event in an interface: an allocation per message).
type eventQueue []event

func (q eventQueue) less(i, j int) bool {
	if c := cmp.Compare(q[i].at, q[j].at); c != 0 {
		return c < 0
	}
	if q[i].kind != q[j].kind {
		return q[i].kind < q[j].kind
	}
	return q[i].seq < q[j].seq
}

func (q *eventQueue) push(e event) {
	*q = append(*q, e)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *eventQueue) pop() event {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h.less(l, m) {
			m = l
		}
		if r := l + 1; r < n && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}

// sim is one system's run.
type sim struct {
	now    time.Duration // true time
	q      eventQueue
	seq    uint64
	up     *netsim.Link
	down   *netsim.Link
	buf    []time.Duration
	client *netsim.Clock
	server *netsim.Clock
}

func (s *sim) push(at time.Duration, kind int, m Msg) {
	s.seq++
	s.q.push(event{at: at, kind: kind, seq: s.seq, msg: m})
}

type linkFunc func(Msg)

func (f linkFunc) Send(m Msg) { f(m) }

func runOne(o Options, sys System) (Result, error) {
	up, down, err := o.Profile.NewLinks(o.Seed)
	if err != nil {
		return Result{}, err
	}
	cc, sc, err := o.Profile.NewClocks()
	if err != nil {
		return Result{}, err
	}
	frames, err := o.Profile.NewFrames(o.Seed)
	if err != nil {
		return Result{}, err
	}
	s := &sim{up: up, down: down, client: cc, server: sc}
	toServer := linkFunc(func(m Msg) {
		s.buf = s.up.SendAppend(s.buf[:0], s.now)
		for _, at := range s.buf {
			s.push(at, evToServer, m)
		}
	})
	toClient := linkFunc(func(m Msg) {
		s.buf = s.down.SendAppend(s.buf[:0], s.now)
		for _, at := range s.buf {
			s.push(at, evToClient, m)
		}
	})
	client, server := sys.New(toServer, toClient)
	pacer, paced := client.(Pacer)
	var jt *jit
	if nc, ok := client.(*ncClient); ok && o.Buffers != nil {
		if jt, err = newJIT(o, s, nc); err != nil {
			return Result{}, err
		}
	}

	s.push(0, evClientFrame, Msg{})
	if paced {
		s.push(0, evClientPing, Msg{})
	}
	s.push(sc.TrueTimeAfter(0, 0), evServerFrame, Msg{})
	serverFrames := time.Duration(0)

	m := newMeter(o)
	lastClient := cc.Read(0)
	for len(s.q) > 0 {
		ev := s.q.pop()
		if ev.at > o.Duration {
			break
		}
		s.now = ev.at
		if until, asleep := cc.SuspendedUntil(s.now); asleep {
			// The client sleeps: what arrives for it is lost, its
			// frames and timers run again when it wakes.
			switch ev.kind {
			case evToClient, evSnapshot:
				continue
			case evClientFrame, evClientPing:
				s.push(until, ev.kind, ev.msg)
				continue
			}
		}
		switch ev.kind {
		case evToServer:
			server.Receive(ev.msg, sc.Read(s.now))
		case evToClient:
			client.Receive(ev.msg, cc.Read(s.now))
		case evClientPing:
			next := pacer.Ping(cc.Read(s.now))
			s.push(s.now+max(next, time.Microsecond), evClientPing, Msg{})
		case evServerFrame:
			server.Frame(sc.Read(s.now))
			if jt != nil {
				jt.serverFrame(int64(serverFrames / ServerFrame))
			}
			serverFrames += ServerFrame
			s.push(sc.TrueTimeAfter(serverFrames, s.now+1), evServerFrame, Msg{})
		case evClientFrame:
			now := cc.Read(s.now)
			client.Frame(now, now-lastClient)
			lastClient = now
			truth := sc.Read(s.now)
			shared := client.Shared(now)
			timeline := shared
			if tl, ok := client.(Timeliner); ok {
				timeline = tl.Timeline(now)
			}
			bound, hasBound := client.Bound(now)
			m.frame(s.now, shared-truth, timeline-truth, bound, hasBound)
			if jt != nil {
				jt.clientFrame(s.now, now)
			}
			s.push(s.now+frames.Next(), evClientFrame, Msg{})
		case evInput, evSnapshot, evProbe, evFrameProbe:
			jt.deliver(ev, sc.Read(s.now), cc.Read(s.now))
		}
	}
	r := m.result(sys.Name)
	r.Kind, r.PingS = sys.Kind, sys.Ping.Seconds()
	if rs, ok := client.(Resetter); ok {
		r.Resets = rs.Resets()
	}
	if jt != nil {
		jt.results(&r)
	}
	return r, nil
}

// meter turns per-frame errors into a Result.
type meter struct {
	o                       Options
	errs                    []float64 // |error| ms after warm-up
	rates                   []float64 // |rate−1| ppm after warm-up
	lastBad                 time.Duration
	everBad, any            bool
	lastT                   time.Duration
	lastTL                  time.Duration
	covered, bounded, total int
	state                   int // −1 slow, +1 fast, 0 neither yet
	reversals               int
	nextTrace               time.Duration
	trace                   []TracePoint
}

// maxPrealloc caps the per-frame buffers preallocated for a run (about an
// hour of 60 Hz frames); longer runs grow them as they go.
const maxPrealloc = 1 << 18

func newMeter(o Options) *meter {
	n := int(min(o.Duration/(16*time.Millisecond), maxPrealloc))
	return &meter{o: o, errs: make([]float64, 0, n), rates: make([]float64, 0, n)}
}

// frame records one client frame at true time t with shared-time error e;
// tl is the ticking timeline's distance from true time, for the rate.
func (m *meter) frame(t, e, tl, bound time.Duration, hasBound bool) {
	abs := e
	if abs < 0 {
		abs = -abs
	}
	if abs > convergeWithin {
		m.lastBad, m.everBad = t, true
	}
	if m.o.TraceEvery > 0 && t >= m.nextTrace {
		tp := TracePoint{T: t.Seconds(), ErrMS: float64(e) / 1e6}
		if hasBound {
			tp.BoundMS = float64(bound) / 1e6
		}
		m.trace = append(m.trace, tp)
		m.nextTrace = t + m.o.TraceEvery
	}
	if m.any && t >= m.o.Warmup {
		m.errs = append(m.errs, float64(abs)/1e6)
		// The rate of shared time against true server time is
		// 1 + d(error)/dt.
		if dt := t - m.lastT; dt > 0 {
			ppm := float64(tl-m.lastTL) / float64(dt) * 1e6
			m.rates = append(m.rates, math.Abs(ppm))
			switch {
			case ppm > reversalPPM:
				if m.state == -1 {
					m.reversals++
				}
				m.state = 1
			case ppm < -reversalPPM:
				if m.state == 1 {
					m.reversals++
				}
				m.state = -1
			}
		}
		m.total++
		if hasBound {
			m.bounded++
			if abs <= bound {
				m.covered++
			}
		}
	}
	m.any, m.lastT, m.lastTL = true, t, tl
}

func (m *meter) result(name string) Result {
	r := Result{System: name, Trace: m.trace}
	r.SharedErrorMS = Percentiles{P50: selectQuantile(m.errs, 0.5), P99: selectQuantile(m.errs, 0.99),
		P999: selectQuantile(m.errs, 0.999), Max: selectQuantile(m.errs, 1)}
	r.RateP99PPM = selectQuantile(m.rates, 0.99)
	if after := m.o.Duration - m.o.Warmup; after > 0 {
		r.ReversalsPerMin = float64(m.reversals) / after.Minutes()
	}
	// Converged for good: the last bad frame was not the last frame.
	if !m.everBad {
		z := 0.0
		r.ConvergeS = &z
	} else if m.lastBad < m.lastT {
		c := m.lastBad.Seconds()
		r.ConvergeS = &c
	}
	if m.bounded > 0 {
		c := float64(m.covered) / float64(m.bounded)
		r.BoundCoverage = &c
	}
	return r
}

// selectQuantile is quantile on unsorted v, which it reorders: a linear
// selection instead of a sort.
func selectQuantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return rank.Nth(v, max(0, min(len(v)-1, i)))
}

// quantile returns the q-quantile of sorted v (nearest rank); 0 if empty.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[max(0, min(len(v)-1, i))]
}
