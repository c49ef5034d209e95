package provider

import (
	"fmt"
	"time"
)

// Defaults and limits of AdaptiveConfig.
const (
	// DefaultOnTimeTarget is the default fraction of inputs to arrive
	// before their tick, and of frames to find a snapshot on both sides.
	DefaultOnTimeTarget = 0.99
	// DefaultDelayWindow is the default number of ping samples per
	// direction the delay distributions are taken over: 102.4s at the
	// transport's 10 Hz.
	DefaultDelayWindow = 1024
	// MaxDelayWindow bounds AdaptiveConfig.Window (32 KiB per direction).
	MaxDelayWindow = 4096
	// minDelaySamples: below this, Adaptive returns FixedBuffers' defaults.
	minDelaySamples = 16
	// minFeedback: summaries of fewer arrivals are ignored.
	minFeedback = 32
	// Feedback: the late fraction aimed at, as a share of 1 − Target; the
	// lead's move per window, in ticks per unit of relative error; the
	// share of lasting slack beyond slackTicks given back per window,
	// lasting meaning over the last slackWindows windows.
	aimShare, lateGain, narrowGain = 0.875, 0.03, 0.1
	// upTailShare: the uplink's Target quantile is extrapolated from the
	// delays beyond the quantile that leaves upTailShare times 1 − Target
	// (95% by default) as an exponential tail: a queue's peaks come in
	// episodes, so a 99% quantile rests on a few of them and wanders.
	upTailShare = 5
	// The long-run late fraction: over about longWindows feedback windows
	// (exponentially forgotten, 9 min at 60 inputs a second), starting
	// from the aim with the weight of longPrior windows; each window's aim
	// is lowered by longGain times its excess over the aim (raised by its
	// shortfall).
	longWindows, longPrior, longGain = 256, 64, 4

	slackTicks, slackWindows = 0.75, 4
	maxWiden                 = 2 // ticks per window
	maxCorrection            = time.Second
	// offsetStep: an estimate whose offset moved more than this between
	// two samples has stepped; the delays before it are discarded.
	offsetStep = 20 * time.Millisecond
)

// AdaptiveConfig configures Adaptive. The zero value gives the defaults.
type AdaptiveConfig struct {
	// Target is the fraction of inputs that should reach the server
	// before their tick starts, and of frames whose interpolation time
	// should have a snapshot on both sides, in (0.5, 1). Default: 0.99.
	Target float64
	// Window is how many ping samples of each direction the delay
	// quantiles are taken over, in [16, MaxDelayWindow]. Default: 1024.
	Window int
	// SnapshotInterval is how often the server sends the state the client
	// interpolates: ClientBuffer's share of it until snapshots are
	// observed. Default (0): one tick.
	SnapshotInterval time.Duration
	// InterpWindow is how many frames' interpolation needs
	// (ObserveInterpFrame) ClientBuffer is sized from, in [256,
	// MaxInterpWindow]. Default: 4096 (68s at 60 frames per second).
	InterpWindow int
}

func (c AdaptiveConfig) resolve() (AdaptiveConfig, error) {
	if c.Target == 0 {
		c.Target = DefaultOnTimeTarget
	}
	if c.Window == 0 {
		c.Window = DefaultDelayWindow
	}
	if c.InterpWindow == 0 {
		c.InterpWindow = DefaultInterpWindow
	}
	switch {
	case !(c.Target > 0.5 && c.Target < 1):
		return c, fmt.Errorf("%w: adaptive Target %v not in (0.5, 1)", ErrInvalidConfig, c.Target)
	case c.Window < minDelaySamples || c.Window > MaxDelayWindow:
		return c, fmt.Errorf("%w: adaptive Window %d not in [%d, %d]", ErrInvalidConfig, c.Window, minDelaySamples, MaxDelayWindow)
	case c.InterpWindow < minInterpNeeds || c.InterpWindow > MaxInterpWindow:
		return c, fmt.Errorf("%w: adaptive InterpWindow %d not in [%d, %d]", ErrInvalidConfig, c.InterpWindow, minInterpNeeds, MaxInterpWindow)
	case c.SnapshotInterval < 0:
		return c, fmt.Errorf("%w: adaptive SnapshotInterval %v is negative", ErrInvalidConfig, c.SnapshotInterval)
	}
	return c, nil
}

// AdaptiveState is the stage an Adaptive policy is in.
type AdaptiveState int

const (
	// AdaptiveWarmup: fewer than 16 samples; the buffers are FixedBuffers'
	// defaults.
	AdaptiveWarmup AdaptiveState = iota
	// AdaptiveOpenLoop: the buffers are sized from the measured delay
	// distributions; no server feedback yet.
	AdaptiveOpenLoop
	// AdaptiveClosedLoop: the lead is also corrected by the server's
	// feedback.
	AdaptiveClosedLoop
)

// String returns the state's name.
func (s AdaptiveState) String() string {
	switch s {
	case AdaptiveWarmup:
		return "warmup"
	case AdaptiveOpenLoop:
		return "open-loop"
	case AdaptiveClosedLoop:
		return "closed-loop"
	}
	return fmt.Sprintf("AdaptiveState(%d)", int(s))
}

// InterpSource says what an Adaptive policy sizes ClientBuffer from.
type InterpSource int

const (
	// InterpFromDelays: the Target quantile of the downlink delays plus
	// the snapshot interval, until 256 frames' needs have been observed.
	InterpFromDelays InterpSource = iota
	// InterpFromNeeds: the frames' interpolation needs (see Adaptive).
	InterpFromNeeds
	// InterpFromLevel: the frames' interpolation needs, their level
	// followed every frame where it wanders (the level rule; see
	// Adaptive).
	InterpFromLevel
)

// String returns the source's name.
func (s InterpSource) String() string {
	switch s {
	case InterpFromDelays:
		return "from-delays"
	case InterpFromNeeds:
		return "from-needs"
	case InterpFromLevel:
		return "from-level"
	}
	return fmt.Sprintf("InterpSource(%d)", int(s))
}

// Adaptive is netclock's default BufferPolicy: it sizes both buffers from
// the one-way delays of each direction, which netclock measures
// separately (every ping sample, read through the estimate's offset,
// gives the uplink delay T2−T1−offset and the downlink delay
// T4−T3+offset), and corrects the lead by the server's feedback.
//
//	lead   = Uplink + ServerBuffer = Target quantile of the uplink delays (an exponential tail) + correction (initially a tick)
//	delay  = Downlink + ClientBuffer = what the frames' interpolation needed (see below),
//	         or, until 256 frames were observed, Target quantile of the downlink delays + SnapshotInterval
//
// The quantiles are over the last Window samples, so a spike widens the
// buffers at once and is forgotten after Window samples. The uplink's is
// estimated as an exponential tail beyond the 1 − 5×(1 − Target)
// quantile (95% by default): that threshold plus the mean excess beyond
// it times ln 5 (a queue's peaks come in episodes: the 99% quantile of a
// window rests on a few of them).
//
// The interpolation delay: a quantile of the downlink delays plus a
// snapshot interval counts the worst delay and the worst phase together,
// and misses what pings cannot see (lost snapshots in bursts, the frame
// that reads them). So once the game reports the snapshots it receives
// (Steered.ObserveSnapshot), each frame's need is observed directly
// (InterpFrame: the estimated server time minus the newest stamp
// received), and the delay is the 1 − 0.9×(1 − Target) quantile of the
// needs of the last InterpWindow frames (99.1% by default), estimated as
// an exponential tail beyond their 1 − 5×0.9×(1 − Target) quantile (the
// threshold plus the mean excess beyond it times ln 5: lost snapshots come
// in bursts, so the quantile itself rests on a handful of them and
// wanders). Where that tail is short, its scale (the mean excess) under
// 3/4 of a snapshot interval, the share aimed at is divided by up to 2
// (by 3/4 interval over the scale): starving less costs the scale times
// the log of the divisor, at most 0.28 of an interval, and a run's
// starved share wanders around the aim; where the tail is long (bursts of
// losses), the aim stays. The delay is raised by how far the median of
// the newest quarter of the window is above the window's (a step up
// counts within seconds; until the window's median moves, the tail holds
// the step too, and it counts twice), and by the needs' rise while they ramp (the median of each of
// the last three runs of 128 frames above the one before: a queue filling
// faster than the buffer moves), plus 0.5ms. Where the needs' level
// wanders (a queue filling and draining over seconds), the delay follows
// it instead while that is cheaper (the level rule): the median of the
// last 16 frames' needs, taken again every frame and moving no faster
// than the buffer may (InterpFrame.MaxMove), plus the 1 − 0.3×(1 − Target)
// quantile (estimated the same way) of the needs' residuals from that
// median 8 frames before them, plus 0.5ms. The rule is played in the
// shadow whatever is in use; it is used while its mean delay over the
// window is under the window rule's tail quantile, and barred until the
// windows start over once it would have starved more than allowed there
// (a level stepping up faster than the buffer may follow). Frames in a
// silence longer than 250ms (an outage) are left out: no delay worth
// having covers one.
//
// The lead's correction absorbs what pings cannot see (a game loop sending an input up to a
// frame after its tick began, its stalls, inputs queued behind other
// traffic) by the server's feedback: each time a window of FeedbackWindow
// arrivals newer than the last correction has come in, the lead moves by
// 0.03 tick per unit of relative error of the window's late fraction
// against the window's aim, relative to the aim, 87.5% of 1 − Target (at
// most two ticks wider per window, and no further than would have put its
// 1st percentile on time, plus an eighth of a tick: a late burst is one
// stall, not a trend). A window without a late input narrows it by 0.03
// tick times the window's aim over the aim (at most half its
// 1st-percentile margin), and by 1/10 of the lasting slack beyond 3/4
// tick: the smallest 1st-percentile margin of the last 4 windows (about
// 8 s at 60 Hz), so that a quiet spell of a delay that wanders on a scale
// of seconds is not taken for slack. So the lead widens at once when
// inputs come late and gives back its slack slowly.
//
// The window's aim is the aim lowered by 4 times the excess of the
// long-run late fraction over it (raised by its shortfall), within
// [0, 1 − Target]. The long-run fraction is taken over about 256 windows
// (exponentially forgotten: 9 minutes at 60 inputs a second), from the
// first window without a late input on (those before are the open loop's
// guess), starting from the aim with the weight of 64 windows. What the
// window rule lets through (a step the lead could not follow at once, a
// quiet spell's slack given back that was needed) is made up by the
// windows after it, so the late fraction over minutes settles on the aim
// whatever the network, and the aim needs to sit below 1 − Target only by
// what the late fraction of a session wanders around it.
//
// It keeps 2×Window durations per direction and 4×InterpWindow durations
// and InterpWindow flags for the interpolation needs (164 KiB by default
// in all), and never allocates after
// NewAdaptive. It is not safe for concurrent use on its own; a Steered
// provider serializes its calls, so give each one its own.
type Adaptive struct {
	cfg              AdaptiveConfig
	up, down         delayWindow
	upQ, downQ       time.Duration // Target quantiles of the windows
	uplink, downlink time.Duration // the estimate's, at the last sample
	corr             time.Duration
	state            AdaptiveState
	lastTotal        uint32
	tick             time.Duration // the last Buffers' tick: bounds a widening
	lastOff          time.Duration // the estimate's offset at the last sample
	haveOff          bool
	p1s              [slackWindows]time.Duration // the last windows' P1, a ring
	p1n              int                         // windows seen
	needs            needWindow
	interpDelay      time.Duration // the interpolation delay the needs ask
	interp           InterpSource
	lastSilence      time.Duration // the last frame's InterpFrame.Silence
	silentRun        int           // frames added since a snapshot last came
	outage           bool          // the current silence is an outage

	// The long-run late fraction is longLate/longCount, from the first
	// window without a late input on (settled).
	longLate, longCount float64
	settled             bool
}

var (
	_ BufferPolicy   = (*Adaptive)(nil)
	_ InterpObserver = (*Adaptive)(nil)
)

// NewAdaptive returns an Adaptive policy, or an error wrapping
// ErrInvalidConfig.
func NewAdaptive(cfg AdaptiveConfig) (*Adaptive, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	return &Adaptive{cfg: cfg, tick: time.Second / 60, up: newDelayWindow(cfg.Window), down: newDelayWindow(cfg.Window),
		needs: newNeedWindow(cfg.InterpWindow)}, nil
}

// Config returns the configuration in use, defaults filled in.
func (a *Adaptive) Config() AdaptiveConfig { return a.cfg }

// State returns the policy's stage.
func (a *Adaptive) State() AdaptiveState { return a.state }

// Correction returns the lead correction learned from the server's
// feedback (positive: the lead is wider than the uplink delays alone ask).
func (a *Adaptive) Correction() time.Duration { return a.corr }

// ObserveSample adds the sample's one-way delays, read through e's offset.
// Invalid samples and estimates, and samples with a delay below zero (the
// estimate has not followed a clock step yet), are ignored; when the
// estimate's offset steps by more than 20ms between two samples, the
// delays seen before are dropped (the buffers stay until 16 new samples
// are in).
func (a *Adaptive) ObserveSample(s Sample, e Estimate) {
	if !e.Valid || s.Validate() != nil {
		return
	}
	a.followOffset(e.ServerTime(s.ClientSend) - s.ClientSend)
	up := s.ServerReceive - e.ServerTime(s.ClientSend)
	down := e.ServerTime(s.ClientReceive) - s.ServerSend
	if up < 0 || down < 0 {
		return // a delay below zero: the estimate has not followed a clock step yet
	}
	a.up.add(up)
	a.down.add(down)
	a.uplink, a.downlink = e.Uplink, e.Downlink
	if a.up.n < minDelaySamples || a.down.n < minDelaySamples {
		return
	}
	if a.state == AdaptiveWarmup {
		// Until the server's feedback says otherwise, allow a tick for
		// what pings cannot see: a game loop sends an input up to a frame
		// after its tick began.
		a.state, a.corr = AdaptiveOpenLoop, a.tick
	}
	a.upQ, a.downQ = a.up.tailQuantile(a.cfg.Target, upTailShare), a.down.quantile(a.cfg.Target)
}

// followOffset records the estimate's offset off, and starts the delay
// and snapshot windows over if it stepped by more than 20ms: what they
// hold was read through the old offset.
func (a *Adaptive) followOffset(off time.Duration) {
	if a.haveOff && (off-a.lastOff > offsetStep || a.lastOff-off > offsetStep) {
		// The estimate stepped (a clock jump followed, a restart). Keep
		// the buffers until the windows refill.
		a.up.reset()
		a.down.reset()
		a.needs.reset()
	}
	a.lastOff, a.haveOff = off, true
}

// ObserveInterpFrame implements InterpObserver: it adds a frame's
// interpolation need, and from 256 frames on sizes ClientBuffer from them
// (InterpFromNeeds; see Adaptive). The frames of a silence longer than
// 250ms (or 4 snapshot intervals) are left out, those before it was that
// long too. An offset step seen by ObserveSample starts the window over
// (the buffer stays until it refills).
func (a *Adaptive) ObserveInterpFrame(f InterpFrame, e Estimate) {
	if e.Valid {
		a.downlink = e.Downlink
	}
	interval := a.cfg.SnapshotInterval
	if interval == 0 {
		interval = a.tick
	}
	if f.Silence <= a.lastSilence {
		a.silentRun, a.outage = 0, false // a snapshot came in between
	}
	a.lastSilence = f.Silence
	if f.Silence > max(maxSilence, 4*interval) {
		if !a.outage {
			a.needs.drop(a.silentRun)
			a.outage = true
			if a.interp == InterpFromNeeds && a.needs.n > 0 {
				a.interpDelay = a.needs.delay(interpAim*(1-a.cfg.Target), interval)
			}
		}
		return
	}
	a.silentRun++
	a.needs.add(f.Need, f.MaxMove)
	if a.needs.n < minInterpNeeds {
		return
	}
	if a.interp == InterpFromNeeds && a.needs.since < solveEvery {
		if d, ok := a.needs.follow(); ok {
			a.interpDelay = d
		}
		return
	}
	a.interpDelay, a.interp = a.needs.delay(interpAim*(1-a.cfg.Target), interval), InterpFromNeeds
}

// Interp returns what ClientBuffer is sized from.
func (a *Adaptive) Interp() InterpSource {
	if a.interp == InterpFromNeeds && a.needs.level {
		return InterpFromLevel
	}
	return a.interp
}

// ObserveFeedback corrects the lead by the server's summary f, if it covers
// at least 32 arrivals, all newer than the last correction (f.Total tells).
func (a *Adaptive) ObserveFeedback(f Feedback) {
	if f.Count < minFeedback || a.state == AdaptiveWarmup {
		return
	}
	if a.state == AdaptiveClosedLoop && f.Total-a.lastTotal < uint32(f.Count) {
		return // the window still holds arrivals from before the last correction
	}
	a.state, a.lastTotal = AdaptiveClosedLoop, f.Total
	a.p1s[a.p1n%slackWindows] = f.P1
	a.p1n++
	// Integral control of the late fraction: each window moves the lead
	// by lateGain ticks per unit of relative error against aim, at most a
	// tick wider, so the late fraction settles on aim whatever makes
	// inputs late (the delays, the game loop's frame phase, its stalls).
	aim := aimShare * (1 - a.cfg.Target)
	e := (float64(f.Late)/float64(f.Count) - a.windowAim(f, aim)) / aim
	switch move := time.Duration(min(maxWiden, lateGain*e) * float64(a.tick)); {
	case f.Late == 0:
		// Narrow by at most half the 1st-percentile margin: where the
		// delays hardly vary, a whole step could make many inputs late
		// at once.
		a.corr += max(move, -f.P1/2)
		// Slack that lasted beyond most of a tick (a game loop's frame
		// phase may take up to a frame of it) is not needed: give it
		// back faster.
		if slack, thr := a.lastingSlack(), time.Duration(slackTicks*float64(a.tick)); slack > thr {
			a.corr -= time.Duration(narrowGain * float64(slack-thr))
		}
	case move > 0:
		// Widen no further than would have put the 1st percentile on
		// time (and a little): a late burst is one frame phase, or one
		// stall, not a trend.
		if f.P1 < 0 {
			move = min(move, -f.P1+a.tick/8)
		}
		a.corr += move
	}
	a.corr = max(-maxCorrection, min(maxCorrection, a.corr))
}

// windowAim returns the late fraction this window is held to: aim, moved
// against the long-run late fraction's error, so that lateness the window
// rule lets through (a step the lead could not follow at once, slack given
// back that was needed) is made up by the windows after it, and the late
// fraction over minutes stays at aim. The windows before the first without
// a late input do not count: they are the open loop's guess.
func (a *Adaptive) windowAim(f Feedback, aim float64) float64 {
	if !a.settled {
		if f.Late > 0 {
			return aim
		}
		a.settled = true
		a.longLate, a.longCount = aim*longPrior*FeedbackWindow, longPrior*FeedbackWindow
	}
	const keep = 1 - 1.0/longWindows
	a.longLate = keep*a.longLate + float64(f.Late)
	a.longCount = keep*a.longCount + float64(f.Count)
	return max(0, min(1-a.cfg.Target, aim-longGain*(a.longLate/a.longCount-aim)))
}

// lastingSlack is the smallest 1st-percentile margin of the last
// slackWindows feedback windows (fewer at the start).
func (a *Adaptive) lastingSlack() time.Duration {
	m := a.p1s[(a.p1n-1)%slackWindows]
	for i := 2; i <= min(a.p1n, slackWindows); i++ {
		m = min(m, a.p1s[(a.p1n-i)%slackWindows])
	}
	return m
}

// Buffers returns ServerBuffer and ClientBuffer (see Adaptive); in
// AdaptiveWarmup, FixedBuffers' defaults but for a ClientBuffer sized from
// snapshots.
func (a *Adaptive) Buffers(tick time.Duration) (server, client time.Duration) {
	a.tick = tick
	if a.state == AdaptiveWarmup {
		server, client = FixedBuffers{}.Buffers(tick)
	} else {
		interval := a.cfg.SnapshotInterval
		if interval == 0 {
			interval = tick
		}
		server, client = max(0, a.upQ-a.uplink+a.corr), max(0, a.downQ-a.downlink+interval)
	}
	if a.interp == InterpFromNeeds {
		client = max(0, a.interpDelay-a.downlink)
	}
	return server, client
}
