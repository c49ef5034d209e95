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
	// direction the delay distributions are taken over: 25.6s at the
	// transport's 10 Hz.
	DefaultDelayWindow = 256
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
	aimShare, lateGain, narrowGain = 0.7, 0.03, 0.1
	slackTicks, slackWindows       = 0.75, 4
	maxWiden                       = 2 // ticks per window
	maxCorrection                  = time.Second
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
	// quantiles are taken over, in [16, MaxDelayWindow]. Default: 256.
	Window int
	// SnapshotInterval is how often the server sends the state the client
	// interpolates. Default (0): one tick.
	SnapshotInterval time.Duration
}

func (c AdaptiveConfig) resolve() (AdaptiveConfig, error) {
	if c.Target == 0 {
		c.Target = DefaultOnTimeTarget
	}
	if c.Window == 0 {
		c.Window = DefaultDelayWindow
	}
	switch {
	case !(c.Target > 0.5 && c.Target < 1):
		return c, fmt.Errorf("%w: adaptive Target %v not in (0.5, 1)", ErrInvalidConfig, c.Target)
	case c.Window < minDelaySamples || c.Window > MaxDelayWindow:
		return c, fmt.Errorf("%w: adaptive Window %d not in [%d, %d]", ErrInvalidConfig, c.Window, minDelaySamples, MaxDelayWindow)
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

// Adaptive is netclock's default BufferPolicy: it sizes both buffers from
// the one-way delays of each direction, which netclock measures
// separately (every ping sample, read through the estimate's offset,
// gives the uplink delay T2−T1−offset and the downlink delay
// T4−T3+offset), and corrects the lead by the server's feedback.
//
//	lead   = Uplink + ServerBuffer = Target quantile of the uplink delays + correction (initially a tick)
//	delay  = Downlink + ClientBuffer = Target quantile of the downlink delays + SnapshotInterval
//
// The quantiles are over the last Window samples, so a spike widens the
// buffers at once and is forgotten after Window samples. The correction
// absorbs what pings cannot see (a game loop sending an input up to a
// frame after its tick began, its stalls, inputs queued behind other
// traffic) by the server's feedback: each time a window of FeedbackWindow
// arrivals newer than the last correction has come in, the lead moves by
// 0.03 tick per unit of relative error of the window's late fraction
// against 70% of 1 − Target (at most two ticks wider per window, and no
// further than would have put its 1st percentile on time, plus an eighth
// of a tick: a late burst is one stall, not a trend). A window without a
// late input narrows it by 0.03 tick (at most half its 1st-percentile
// margin), and by 1/10 of the lasting slack beyond 3/4 tick: the smallest
// 1st-percentile margin of the last 4 windows (about 8 s at 60 Hz), so
// that a quiet spell of a delay that wanders on a scale of seconds is not
// taken for slack. So the lead widens at once when inputs come late and
// gives back its slack slowly. The aim sits below 1 − Target by what the
// late fraction wanders around it: stalls make late inputs in bursts.
//
// It keeps 2×Window durations and never allocates after NewAdaptive. It is
// not safe for concurrent use on its own; a Steered provider serializes its
// calls, so give each one its own.
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
}

var _ BufferPolicy = (*Adaptive)(nil)

// NewAdaptive returns an Adaptive policy, or an error wrapping
// ErrInvalidConfig.
func NewAdaptive(cfg AdaptiveConfig) (*Adaptive, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	return &Adaptive{cfg: cfg, tick: time.Second / 60, up: newDelayWindow(cfg.Window), down: newDelayWindow(cfg.Window)}, nil
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
	off := e.ServerTime(s.ClientSend) - s.ClientSend
	if a.haveOff && (off-a.lastOff > offsetStep || a.lastOff-off > offsetStep) {
		// The estimate stepped (a clock jump followed, a restart): the
		// delays read through the old offset are wrong. Start the
		// windows over, keeping the buffers until they refill.
		a.up.reset()
		a.down.reset()
	}
	a.lastOff, a.haveOff = off, true
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
	a.upQ, a.downQ = a.up.quantile(a.cfg.Target), a.down.quantile(a.cfg.Target)
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
	e := (float64(f.Late)/float64(f.Count) - aim) / aim
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
// AdaptiveWarmup, FixedBuffers' defaults.
func (a *Adaptive) Buffers(tick time.Duration) (server, client time.Duration) {
	a.tick = tick
	if a.state == AdaptiveWarmup {
		return FixedBuffers{}.Buffers(tick)
	}
	interval := a.cfg.SnapshotInterval
	if interval == 0 {
		interval = tick
	}
	return max(0, a.upQ-a.uplink+a.corr), max(0, a.downQ-a.downlink+interval)
}
