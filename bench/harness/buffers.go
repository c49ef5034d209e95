package harness

import (
	"math"
	"time"

	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/provider"
)

// View is what a client's buffer policy may read at one client frame:
// netclock's clock (every model runs over it, so that the models differ
// only in how they size their margins) and the client's own measurements.
type View struct {
	// Now is the client clock reading; Dt the client time since the
	// previous frame.
	Now, Dt time.Duration
	// Estimate is netclock's estimate; Shared its server time now.
	Estimate provider.Estimate
	Shared   time.Duration
	// Predicted and Server are netclock's ticksys timelines (its fixed
	// buffers, provider.SteeredConfig defaults).
	Predicted, Server time.Duration
	// SRTT is a TCP-style smoothed RTT (1/8 gain) of the ping samples,
	// the RTT a transport reports.
	SRTT time.Duration
	// Tick is the simulation tick; SnapshotInterval the server's
	// snapshot interval.
	Tick, SnapshotInterval time.Duration
	// Samples are the ping samples netclock's estimator accepted since
	// the previous frame, oldest first (Estimate includes them). Valid
	// during the call only.
	Samples []provider.Sample
}

// Feedback is what the simulated server returns to the client in each
// snapshot: how early the client's inputs arrived.
type Feedback struct {
	// AgeEWMA is an exponential average (1/8 gain) of how long before
	// their tick the client's inputs arrived (negative: late), server
	// clock.
	AgeEWMA time.Duration
	// Valid is false until an input has arrived.
	Valid bool
	// Arrivals is the summary of the client's last inputs that netclock's
	// transport returns in its pongs (provider.ArrivalWindow), in one
	// snapshot per PingInterval as the pongs come; Count is 0 in the
	// others.
	Arrivals provider.Feedback
}

// BufferPolicy sizes a client's two margins: the predicted time its inputs
// are stamped for and the server time it interpolates at. Plug a policy in
// through BufferModel to measure it (see BufferOptions).
//
// Each client frame the harness calls Timelines once, then Snapshot for
// each snapshot received since the previous frame (a game reads the
// network once a frame), with the same View.
type BufferPolicy interface {
	// Timelines returns the predicted time (inputs are stamped with its
	// tick) and the interpolation (server) time at the frame v, both in
	// server time.
	Timelines(v View) (predicted, server time.Duration)
	// Snapshot tells the policy that the snapshot of server time at was
	// received at the frame v, carrying fb.
	Snapshot(v View, at time.Duration, fb Feedback)
}

// BufferModel names a policy to measure.
type BufferModel struct {
	// Name is the model's name in the results, such as "n4e". Required.
	Name string
	// New builds a fresh policy for each run. Required.
	New func() BufferPolicy
}

// BufferModels returns the models compared by default: netclock's adaptive
// buffers (its default), its fixed buffers, NGO as shipped, Netcode for
// Entities and Mirror.
func BufferModels() []BufferModel {
	return []BufferModel{
		{"netclock-adaptive", func() BufferPolicy { return &netclockAdaptive{} }},
		{"netclock-fixed", func() BufferPolicy { return netclockFixed{} }},
		{"ngo", func() BufferPolicy { return &ngoBuffers{} }},
		{"n4e", func() BufferPolicy { return &n4eBuffers{} }},
		{"mirror", func() BufferPolicy { return &mirrorBuffers{} }},
	}
}

// netclockFixed is ticksys' predicted and server time with the provider's
// default buffers: uplink + 2 ticks ahead, downlink + 1 tick behind.
type netclockFixed struct{}

func (netclockFixed) Snapshot(View, time.Duration, Feedback) {}

func (netclockFixed) Timelines(v View) (time.Duration, time.Duration) { return v.Predicted, v.Server }

// netclockAdaptive is netclock's default: a provider.Steered with its
// default (adaptive) buffers, fed what the transport feeds it (the
// estimate, each accepted ping sample, the arrival summary of each pong;
// here of each snapshot), advanced every frame as ticksys advances it.
type netclockAdaptive struct {
	prov              *provider.Steered
	now               time.Duration
	started           bool
	predicted, server nettime.Time
}

func (n *netclockAdaptive) Snapshot(_ View, at time.Duration, fb Feedback) {
	if n.prov == nil {
		return
	}
	n.prov.ObserveSnapshot(nettime.New(TickRate, at))
	if fb.Arrivals.Count > 0 {
		n.prov.ObserveFeedback(fb.Arrivals)
	}
}

func (n *netclockAdaptive) Timelines(v View) (time.Duration, time.Duration) {
	n.now = v.Now
	if n.prov == nil {
		cfg := provider.SteeredConfig{Clock: func() time.Duration { return n.now }}
		if v.SnapshotInterval != v.Tick {
			cfg.Buffers, _ = provider.NewAdaptive(provider.AdaptiveConfig{SnapshotInterval: v.SnapshotInterval})
		}
		n.prov, _ = provider.NewSteered(cfg)
	}
	if v.Estimate.Valid {
		n.prov.SetEstimate(v.Estimate)
	}
	for _, s := range v.Samples {
		n.prov.ObserveSample(s, v.Estimate)
	}
	switch {
	case !v.Estimate.Valid:
		return v.Predicted, v.Server
	case !n.started:
		n.started = true
		n.predicted, n.server = nettime.New(TickRate, v.Shared), nettime.New(TickRate, v.Shared)
		n.prov.InitializeClient(&n.predicted, &n.server)
	default:
		n.prov.AdvanceTime(&n.predicted, &n.server, v.Dt)
	}
	return n.predicted.Duration(), n.server.Duration()
}

// ngoBuffers is NGO as shipped (the constants of the ngo baseline): it
// anchors both timelines on the server tick of a TimeSyncMessage once a
// second (modelled as one snapshot a second, sent at its tick), so the downlink delay is inside them:
// local (predicted) time = received tick time + RTT + local buffer (one
// simulation tick), server time = received tick time − 50 ms. The offsets
// move toward their targets at ±1% of the elapsed time and are stepped
// beyond 200 ms. The RTT is the transport's smoothed RTT.
type ngoBuffers struct {
	have               bool
	nextSync           time.Duration
	desiredL, desiredS time.Duration // offsets from the client clock
	currentL, currentS time.Duration
}

func (n *ngoBuffers) Snapshot(v View, at time.Duration, _ Feedback) {
	if at < n.nextSync {
		return
	}
	n.nextSync = at + time.Second - v.Tick/2
	base := at - v.Now
	n.desiredL, n.desiredS = base+v.SRTT+v.Tick, base-ngoServerBuffer
	if !n.have {
		n.have, n.currentL, n.currentS = true, n.desiredL, n.desiredS
	}
}

func (n *ngoBuffers) Timelines(v View) (time.Duration, time.Duration) {
	if !n.have {
		return v.Predicted, v.Server
	}
	if absDur(n.desiredL-n.currentL) > ngoHardReset || absDur(n.desiredS-n.currentS) > ngoHardReset {
		n.currentL, n.currentS = n.desiredL, n.desiredS
	}
	step := v.Dt / ngoAdjust
	n.currentL = toward(n.currentL, n.desiredL, step)
	n.currentS = toward(n.currentS, n.desiredS, step)
	return v.Now + n.currentL, v.Now + n.currentS
}

// Constants of Netcode for Entities (ClientTickRate defaults, anchors.md).
const (
	n4eCommandSlack  = 2   // TargetCommandSlack, ticks
	n4eInterpTicks   = 2   // InterpolationTimeNetTicks
	n4eMaxScale      = 0.1 // time scale kept within 0.9..1.1
	n4eSlewTime      = time.Second
	n4eJitterFactor  = 2 // jitter margins: 2 × the RTT jitter
	n4eArrivalWeight = 1.0 / 8
)

// n4eBuffers: the lead starts at half the RTT + TargetCommandSlack and
// follows the server's command-age feedback so inputs arrive
// TargetCommandSlack ticks early; the interpolation delay is the
// downlink (RTT/2) + jitter + InterpolationTimeNetTicks snapshot arrival
// intervals. Both move by bounded time-scale changes (never backwards).
type n4eBuffers struct {
	started           bool
	lead, delay       time.Duration
	fb                Feedback
	lastArrival       time.Duration
	arrival           time.Duration // EWMA of snapshot inter-arrival time
	haveLast, haveAvg bool
}

func (n *n4eBuffers) Snapshot(v View, _ time.Duration, fb Feedback) {
	n.fb = fb
	if n.haveLast {
		d := v.Now - n.lastArrival
		if !n.haveAvg {
			n.arrival, n.haveAvg = d, true
		} else {
			n.arrival += time.Duration(float64(d-n.arrival) * n4eArrivalWeight)
		}
	}
	n.lastArrival, n.haveLast = v.Now, true
}

func (n *n4eBuffers) delayTarget(v View) time.Duration {
	interval := v.SnapshotInterval
	if n.haveAvg {
		interval = max(interval, n.arrival)
	}
	return v.SRTT/2 + n4eJitterFactor*v.Estimate.Jitter + n4eInterpTicks*interval
}

func (n *n4eBuffers) Timelines(v View) (time.Duration, time.Duration) {
	if !n.started {
		if !v.Estimate.Valid {
			return v.Shared, v.Shared
		}
		n.started = true
		n.lead = v.SRTT/2 + n4eCommandSlack*v.Tick
		n.delay = n.delayTarget(v)
		return v.Shared + n.lead, v.Shared - n.delay
	}
	limit := time.Duration(n4eMaxScale * float64(v.Dt))
	if n.fb.Valid {
		// Age above the slack: inputs wait too long, lower the lead.
		e := n4eCommandSlack*v.Tick - n.fb.AgeEWMA
		n.lead += clampDur(time.Duration(float64(e)*float64(v.Dt)/float64(n4eSlewTime)), limit)
	}
	e := n.delayTarget(v) - n.delay
	n.delay += clampDur(time.Duration(float64(e)*float64(v.Dt)/float64(n4eSlewTime)), limit)
	return v.Shared + n.lead, v.Shared - n.delay
}

// Constants of Mirror's snapshot interpolation (anchors.md).
const (
	mirrorTolerance  = 1.0  // dynamicAdjustmentTolerance
	mirrorMultiplier = 2.0  // bufferTimeMultiplier, before the first σ
	mirrorCatchup    = 0.02 // speed-up when more than one interval behind
	mirrorSlowdown   = 0.04 // slow-down when more than one interval ahead
	mirrorDriftS     = 1.0  // drift averaged over 1 s
	mirrorDeliveryS  = 2.0  // delivery-time σ over 2 s
)

// mirrorBuffers: the interpolation timeline runs in server time at a
// rate of 1, +2% or −4%, chasing newest remote time − buffer time, buffer
// time = interval × ((interval + σ of inter-arrival) / interval +
// tolerance). Mirror has no input buffer (commands run when they
// arrive); its inputs are modeled as stamped at server time + RTT/2.
type mirrorBuffers struct {
	started          bool
	timeline, newest time.Duration
	drift            ema
	delivery         ema
	lastArrival      time.Duration
	haveLast         bool
	multiplier       float64
	scale            float64
	interval         time.Duration
}

func (m *mirrorBuffers) bufferTime() time.Duration {
	return time.Duration(float64(m.interval) * m.multiplier)
}

func (m *mirrorBuffers) Snapshot(v View, at time.Duration, _ Feedback) {
	m.interval = v.SnapshotInterval
	rate := float64(time.Second) / float64(m.interval)
	if !m.started {
		m.started, m.multiplier, m.scale = true, mirrorMultiplier, 1
		m.drift = newEMA(int(mirrorDriftS * rate))
		m.delivery = newEMA(int(mirrorDeliveryS * rate))
		m.timeline = at - m.bufferTime()
	}
	if m.haveLast {
		m.delivery.add(float64(v.Now - m.lastArrival))
		m.multiplier = (float64(m.interval)+m.delivery.std())/float64(m.interval) + mirrorTolerance
	}
	m.lastArrival, m.haveLast = v.Now, true
	m.newest = max(m.newest, at)
	m.drift.add(float64(at - m.timeline))
	drift := time.Duration(m.drift.mean) - m.bufferTime()
	switch {
	case drift > m.interval:
		m.scale = 1 + mirrorCatchup
	case drift < -m.interval:
		m.scale = 1 - mirrorSlowdown
	default:
		m.scale = 1
	}
}

func (m *mirrorBuffers) Timelines(v View) (time.Duration, time.Duration) {
	predicted := v.Shared + v.SRTT/2
	if !m.started {
		return predicted, v.Server
	}
	m.timeline += time.Duration(float64(v.Dt) * m.scale)
	return predicted, m.timeline
}

// ema is an exponential moving average and variance over about n samples
// (alpha 2/(n+1)), as Mirror's.
type ema struct {
	alpha, mean, variance float64
	init                  bool
}

func newEMA(n int) ema { return ema{alpha: 2 / (float64(max(n, 1)) + 1)} }

func (e *ema) add(x float64) {
	if !e.init {
		e.mean, e.init = x, true
		return
	}
	d := x - e.mean
	e.mean += e.alpha * d
	e.variance = (1 - e.alpha) * (e.variance + e.alpha*d*d)
}

func (e *ema) std() float64 { return math.Sqrt(e.variance) }

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func clampDur(d, limit time.Duration) time.Duration { return max(-limit, min(limit, d)) }

func toward(cur, target, step time.Duration) time.Duration {
	if target > cur {
		return min(target, cur+step)
	}
	return max(target, cur-step)
}
