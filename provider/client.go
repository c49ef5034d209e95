package provider

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/netclock/netclock/nettime"
)

// ErrInvalidConfig is wrapped by every configuration error.
var ErrInvalidConfig = errors.New("provider: invalid config")

// Defaults of SteeredConfig, used where a field is zero.
const (
	DefaultHardResetThreshold  = 200 * time.Millisecond
	DefaultCorrectionTolerance = 100 * time.Microsecond
	DefaultSlewTime            = time.Second
	DefaultMaxScaleDeviation   = 0.05
)

// SteeredConfig configures a Steered provider. The zero value gives the
// defaults.
type SteeredConfig struct {
	// Clock reads the client's monotonic clock: the clock the estimator's
	// sample client times come from. It is also the provider's only source
	// of elapsed time: AdvanceTime advances both times by the time this
	// clock moved since the previous call, whatever dt the game loop
	// passes. Default: time since the process started, from the
	// monotonic clock.
	Clock func() time.Duration

	// Buffers sizes ClientBuffer and ServerBuffer. Default (nil, with
	// ClientBuffer and ServerBuffer zero and HardResetOnly false): an
	// Adaptive policy with AdaptiveConfig's defaults, fed by
	// ObserveSample and ObserveFeedback (the transport does both). With
	// HardResetOnly, or either fixed buffer set: FixedBuffers of them. Set
	// it to FixedBuffers{} for netclock's fixed defaults, to an Adaptive
	// of another configuration, or to a policy of your own; it may not be
	// combined with ClientBuffer or ServerBuffer.
	Buffers BufferPolicy

	// ClientBuffer fixes how far server time stays behind the newest
	// state the client can have received, so that state can be
	// interpolated smoothly (NGO-style; see Buffers). Default (0, with
	// ServerBuffer set): one tick. Negative: none.
	ClientBuffer time.Duration

	// ServerBuffer fixes how far predicted time stays ahead of the moment
	// a message sent now reaches the server, so that inputs wait in the
	// server's queue rather than arrive late (NGO-style; see Buffers).
	// Default (0, with ClientBuffer set): two ticks. Negative: none.
	ServerBuffer time.Duration

	// HardResetThreshold is the error beyond which either time is stepped
	// to its target instead of slewed; both are stepped together.
	// Default: 200ms.
	HardResetThreshold time.Duration

	// CorrectionTolerance is a dead band: errors up to it are not
	// corrected. Corrections grow continuously from its edge, so there is
	// no on/off switching. Default (0): 100µs. Negative: none.
	CorrectionTolerance time.Duration

	// SlewTime is the time constant of the correction: an error of e is
	// corrected at the rate e/SlewTime, so it decays exponentially without
	// overshoot. Default: 1s.
	SlewTime time.Duration

	// MaxScaleDeviation bounds how far the time scale may move from the
	// server's rate while slewing, as a fraction: 0.05 allows 0.95..1.05.
	// Default: 0.05. At most 0.5.
	MaxScaleDeviation float64

	// HardResetOnly disables slewing: both times advance at exactly the
	// real rate (scale 1, no drift compensation) and are stepped only when
	// the error passes HardResetThreshold. For rhythm games, where audio
	// must not be resampled.
	HardResetOnly bool
}

var processStart = time.Now()

func sinceProcessStart() time.Duration { return time.Since(processStart) }

// resolve fills in the defaults and validates.
func (c SteeredConfig) resolve() (SteeredConfig, error) {
	if c.Clock == nil {
		c.Clock = sinceProcessStart
	}
	if c.HardResetThreshold == 0 {
		c.HardResetThreshold = DefaultHardResetThreshold
	}
	if c.CorrectionTolerance == 0 {
		c.CorrectionTolerance = DefaultCorrectionTolerance
	} else if c.CorrectionTolerance < 0 {
		c.CorrectionTolerance = 0
	}
	if c.SlewTime == 0 {
		c.SlewTime = DefaultSlewTime
	}
	if c.MaxScaleDeviation == 0 {
		c.MaxScaleDeviation = DefaultMaxScaleDeviation
	}
	fixed := c.ClientBuffer != 0 || c.ServerBuffer != 0
	switch {
	case c.Buffers != nil && fixed:
		return c, fmt.Errorf("%w: Buffers set together with ClientBuffer %v or ServerBuffer %v",
			ErrInvalidConfig, c.ClientBuffer, c.ServerBuffer)
	case c.Buffers == nil && (fixed || c.HardResetOnly):
		c.Buffers = FixedBuffers{Server: c.ServerBuffer, Client: c.ClientBuffer}
	case c.Buffers == nil:
		c.Buffers, _ = NewAdaptive(AdaptiveConfig{}) // the defaults are valid
	}
	switch {
	case c.HardResetThreshold < 0:
		return c, fmt.Errorf("%w: HardResetThreshold %v is negative", ErrInvalidConfig, c.HardResetThreshold)
	case c.SlewTime < 0:
		return c, fmt.Errorf("%w: SlewTime %v is negative", ErrInvalidConfig, c.SlewTime)
	case !(c.MaxScaleDeviation > 0 && c.MaxScaleDeviation <= 0.5):
		return c, fmt.Errorf("%w: MaxScaleDeviation %v not in (0, 0.5]", ErrInvalidConfig, c.MaxScaleDeviation)
	case c.CorrectionTolerance >= c.HardResetThreshold:
		return c, fmt.Errorf("%w: CorrectionTolerance %v must be below HardResetThreshold %v",
			ErrInvalidConfig, c.CorrectionTolerance, c.HardResetThreshold)
	}
	return c, nil
}

// Steered is the provider of a client: it steers predicted and server time
// toward targets computed from the latest Estimate,
//
//	shared    = estimated server clock now
//	predicted → shared + Uplink + ServerBuffer
//	server    → shared − Downlink − ClientBuffer
//
// Both advance at the server clock's rate (the estimate's drift fed
// forward) plus a correction proportional to their error, bounded by
// MaxScaleDeviation, and never larger than the error itself, so the error
// shrinks smoothly to the dead band without overshoot. Beyond
// HardResetThreshold both are stepped to their targets.
//
// Until the first valid Estimate both times advance at the real rate.
// A Steered is safe for concurrent use: estimates may be set from a network
// goroutine while the game loop advances time.
//
// Elapsed time has one source of truth, the Clock: the targets are read
// from it, so the times must advance by it too, or every disagreement
// between the game loop's dt and the clock becomes an error to correct. A
// 230ms hitch seen through a time.Ticker (a stale tick, then a long one)
// used to be two errors beyond HardResetThreshold, two hard resets. So
// AdvanceTime's dt is advisory: the provider advances by the time Clock moved
// since its previous AdvanceTime or InitializeClient (dt only on a first
// call without InitializeClient), and never backwards if Clock does. A
// game loop may pass a fixed, clamped or scaled dt; network time does not
// follow it. After a hitch the times are where the clock says, and the
// ticks that passed fire as catch-up ticks (ticksys caps them).
//
// ServerBuffer and ClientBuffer come from the BufferPolicy (SteeredConfig.
// Buffers). A change of them is never a reset: the buffers in use move
// toward the policy's at most at MaxScaleDeviation/2 of the elapsed time
// (2.5% by default: 25ms a second), and the timelines move with them (the
// move is fed forward rather than left to the correction, which would lag
// it by the rate times SlewTime), so a buffer change adds no error however
// large it is; the correction has the rest of MaxScaleDeviation. Only
// InitializeClient takes the policy's buffers at once.
type Steered struct {
	cfg SteeredConfig

	mu       sync.Mutex
	est      Estimate
	status   SteeredStatus
	last     time.Duration // Clock at the previous AdvanceTime or InitializeClient
	haveLast bool
	// sb, cb: the ServerBuffer and ClientBuffer in use, moving toward the
	// policy's; valid once haveBuf.
	sb, cb  time.Duration
	haveBuf bool
	snaps   snapshotTrack
}

// snapshotTrack is what a Steered knows of the snapshots the game
// received (ObserveSnapshot).
type snapshotTrack struct {
	newest    time.Duration // the newest stamp received
	frame     time.Duration // the newest stamp the current frame had
	recv      time.Duration // Clock when a snapshot was last received
	frameRecv time.Duration // the same, as the current frame had it
	have      bool          // newest is valid
	frameHas  bool          // frame is valid
}

// SteeredStatus is the state of a Steered provider after its last
// AdvanceTime.
type SteeredStatus struct {
	// PredictedScale and ServerScale are how fast the two times advanced
	// relative to real time in the last frame (1 is nominal).
	PredictedScale, ServerScale float64
	// PredictedError and ServerError are target minus time after the last
	// frame: positive when the time is behind its target. 0 without an
	// estimate.
	PredictedError, ServerError time.Duration
	// Resets is the number of hard resets so far.
	Resets int
	// ServerBuffer and ClientBuffer are the buffers in use in the last
	// frame (see Steered: they follow the BufferPolicy's smoothly).
	ServerBuffer, ClientBuffer time.Duration
}

var _ Provider = (*Steered)(nil)

// NewSteered returns a Steered provider with the given configuration, or an
// error wrapping ErrInvalidConfig.
func NewSteered(cfg SteeredConfig) (*Steered, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	return &Steered{cfg: cfg, status: SteeredStatus{PredictedScale: 1, ServerScale: 1}}, nil
}

// Config returns the configuration in use, defaults filled in.
func (c *Steered) Config() SteeredConfig { return c.cfg }

// SetEstimate replaces the estimate the client steers by.
func (c *Steered) SetEstimate(e Estimate) {
	c.mu.Lock()
	c.est = e
	c.mu.Unlock()
}

// Estimate returns the estimate in use.
func (c *Steered) Estimate() Estimate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.est
}

// ObserveSample hands a ping sample the estimator accepted, and the
// estimator's estimate e after it, to the BufferPolicy. The transport calls
// it for every sample.
func (c *Steered) ObserveSample(s Sample, e Estimate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cfg.Buffers.ObserveSample(s, e)
}

// ObserveFeedback hands the server's summary of this client's arrivals to
// the BufferPolicy. The transport calls it for every pong that carries one.
func (c *Steered) ObserveFeedback(f Feedback) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cfg.Buffers.ObserveFeedback(f)
}

// maxStampAhead is how far past the estimated server time a snapshot's
// stamp may be and still count: the estimate's error, with room to spare.
const maxStampAhead = time.Second

// ObserveSnapshot tells the provider that the game received the snapshot
// stamped stamp (the server time of the state it carries) now, by Clock.
// Call it where the game takes each snapshot it will interpolate (next to
// interp.Buffer.Add), from any goroutine. From then on, every AdvanceTime
// hands the BufferPolicy, if it is an InterpObserver (Adaptive is), the
// previous frame's interpolation need: the estimated server time at that
// frame minus the newest stamp received by then (a snapshot received at
// the Clock reading of the frame's AdvanceTime counts for that frame, as
// one read at the start of the frame). With it, the default policy sizes
// ClientBuffer from what interpolation actually needed; without it, from
// the ping delays. The zero Time is ignored, and so is a stamp more than
// a second past the estimated server time (no snapshot is stamped after
// it is sent): one absurd stamp would otherwise stand as the newest for
// good.
func (c *Steered) ObserveSnapshot(stamp nettime.Time) {
	if stamp.IsZero() {
		return
	}
	d := stamp.Duration()
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Clock()
	if c.est.Valid && d > c.est.ServerTime(now)+maxStampAhead {
		return
	}
	sn := &c.snaps
	if !sn.have || d > sn.newest {
		sn.newest, sn.have = d, true
	}
	sn.recv = now
	if c.haveLast && now <= c.last { // received in the frame that advanced last
		if !sn.frameHas || d > sn.frame {
			sn.frame, sn.frameHas = d, true
		}
		sn.frameRecv = now
	}
}

// observeNeed hands the policy the need of the frame that ended at clock
// reading now, and starts the next frame with every snapshot received so
// far. Called with c.mu held, before c.last moves to now.
func (c *Steered) observeNeed(now time.Duration) {
	sn := &c.snaps
	if o, ok := c.cfg.Buffers.(InterpObserver); ok && sn.frameHas && c.est.Valid && c.haveLast {
		o.ObserveInterpFrame(InterpFrame{Need: c.est.ServerTime(c.last) - sn.frame, Silence: c.last - sn.frameRecv,
			MaxMove: time.Duration(c.bufferRate() * float64(max(0, now-c.last)))}, c.est)
	}
	if sn.have {
		sn.frame, sn.frameHas, sn.frameRecv = sn.newest, true, sn.recv
	}
}

// Status returns the state after the last AdvanceTime.
func (c *Steered) Status() SteeredStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// Targets returns the times predicted and server time steer toward now, in
// time since tick 0, and false if there is no valid estimate.
func (c *Steered) Targets(rate uint32) (predicted, server time.Duration, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.est.Valid {
		return 0, 0, false
	}
	if !c.haveBuf {
		c.sb, c.cb = c.policyBuffers(rate)
		c.haveBuf = true
	}
	predicted, server = c.targets(c.cfg.Clock())
	return predicted, server, true
}

// targets uses the buffers in use, c.sb and c.cb.
func (c *Steered) targets(now time.Duration) (predicted, server time.Duration) {
	shared := c.est.ServerTime(now)
	return shared + c.est.Uplink + c.sb, shared - c.est.Downlink - c.cb
}

func (c *Steered) policyBuffers(rate uint32) (server, client time.Duration) {
	s, cl := c.cfg.Buffers.Buffers(nettime.FromTick(rate, 0, 0).FixedDelta())
	return max(0, s), max(0, cl)
}

// moveBuffers moves the buffers in use toward the policy's, by at most
// bufferRate of dt each.
func (c *Steered) moveBuffers(rate uint32, dt time.Duration) {
	ps, pc := c.policyBuffers(rate)
	if !c.haveBuf {
		c.sb, c.cb, c.haveBuf = ps, pc, true
		return
	}
	step := time.Duration(c.bufferRate() * float64(dt))
	c.sb, c.cb = toward(c.sb, ps, step), toward(c.cb, pc, step)
}

// bufferRate is how fast the buffers in use may move, as a fraction of the
// elapsed time: half of MaxScaleDeviation, the other half left to the
// correction.
func (c *Steered) bufferRate() float64 { return c.cfg.MaxScaleDeviation / 2 }

func toward(cur, target, step time.Duration) time.Duration {
	if target > cur {
		return min(target, cur+step)
	}
	return max(target, cur-step)
}

// InitializeClient sets both times to their targets if an estimate is
// valid; otherwise it sets predicted time to server time.
func (c *Steered) InitializeClient(predicted, server *nettime.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Clock()
	c.last, c.haveLast = now, true
	// The snapshots so far may be a previous server's (a restart).
	c.snaps = snapshotTrack{}
	if !c.est.Valid {
		*predicted = *server
		return
	}
	c.sb, c.cb = c.policyBuffers(server.TickRate())
	c.haveBuf = true
	c.status.ServerBuffer, c.status.ClientBuffer = c.sb, c.cb
	tp, ts := c.targets(now)
	*predicted = nettime.New(server.TickRate(), tp)
	*server = nettime.New(server.TickRate(), ts)
}

// AdvanceTime implements Provider. It advances by the time Clock moved
// since the previous call or InitializeClient; dt is used only on a first
// call without InitializeClient (see Steered).
func (c *Steered) AdvanceTime(predicted, server *nettime.Time, dt time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Clock()
	c.observeNeed(now)
	if c.haveLast {
		dt = now - c.last
	}
	c.last, c.haveLast = now, true
	if dt < 0 {
		dt = 0 // the clock stepped back: hold, the targets step with it
	}
	st := &c.status
	if !c.est.Valid {
		*predicted = predicted.Add(dt)
		*server = server.Add(dt)
		st.PredictedScale, st.ServerScale = 1, 1
		st.PredictedError, st.ServerError = 0, 0
		return true
	}
	rate := server.TickRate()
	sb, cb := c.sb, c.cb
	c.moveBuffers(rate, dt)
	st.ServerBuffer, st.ClientBuffer = c.sb, c.cb
	tp, ts := c.targets(now)

	base := dt
	var fp, fs time.Duration
	if !c.cfg.HardResetOnly {
		base += time.Duration(float64(dt) * c.est.DriftPPM / 1e6)
		// A buffer's move is a known move of the target: fed forward,
		// the timeline moves with it instead of lagging it by SlewTime.
		fp, fs = c.sb-sb, cb-c.cb
	}
	p := predicted.Add(base + fp)
	s := server.Add(base + fs)
	ep := tp - p.Duration()
	es := ts - s.Duration()
	if abs(ep) > c.cfg.HardResetThreshold || abs(es) > c.cfg.HardResetThreshold {
		*predicted = nettime.New(rate, tp)
		*server = nettime.New(rate, ts)
		st.PredictedScale, st.ServerScale = 1, 1
		st.PredictedError, st.ServerError = tp-predicted.Duration(), ts-server.Duration()
		st.Resets++
		return false
	}
	var cp, cs time.Duration
	if !c.cfg.HardResetOnly {
		cp, cs = c.correction(ep, fp, dt), c.correction(es, fs, dt)
		p, s = p.Add(cp), s.Add(cs)
	}
	if dt > 0 {
		st.PredictedScale = float64(base+fp+cp) / float64(dt)
		st.ServerScale = float64(base+fs+cs) / float64(dt)
	}
	st.PredictedError, st.ServerError = ep-cp, es-cs
	*predicted, *server = p, s
	return true
}

// correction returns how far to move a time whose error is e during a frame
// of dt in which the buffer's move ff was fed forward: proportional to the
// error beyond the dead band, never more than the error, so it cannot
// overshoot, and with ff at most MaxScaleDeviation*dt either way.
func (c *Steered) correction(e, ff, dt time.Duration) time.Duration {
	mag := abs(e) - c.cfg.CorrectionTolerance
	if mag <= 0 || dt == 0 {
		return 0
	}
	frac := math.Min(1, float64(dt)/float64(c.cfg.SlewTime))
	corr := time.Duration(float64(mag) * frac) // truncates toward zero
	if e < 0 {
		corr = -corr
	}
	// The feed-forward ff and the correction together stay within
	// MaxScaleDeviation (ff alone is at most half of it).
	limit := time.Duration(c.cfg.MaxScaleDeviation * float64(dt))
	return max(-limit-ff, min(limit-ff, corr))
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
