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

// Defaults of ClientConfig, used where a field is zero.
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

	// ClientBuffer is how far server time stays behind the newest state
	// the client can have received, so that state can be interpolated
	// smoothly. Default (0): one tick. Negative: none.
	ClientBuffer time.Duration

	// ServerBuffer is how far predicted time stays ahead of the moment a
	// message sent now reaches the server, so that inputs wait in the
	// server's queue rather than arrive late. Default (0): two ticks.
	// Negative: none.
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
type Steered struct {
	cfg SteeredConfig

	mu       sync.Mutex
	est      Estimate
	status   SteeredStatus
	last     time.Duration // Clock at the previous AdvanceTime or InitializeClient
	haveLast bool
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
	predicted, server = c.targets(rate, c.cfg.Clock())
	return predicted, server, true
}

func (c *Steered) targets(rate uint32, now time.Duration) (predicted, server time.Duration) {
	tick := nettime.FromTick(rate, 0, 0).FixedDelta()
	shared := c.est.ServerTime(now)
	return shared + c.est.Uplink + buffer(c.cfg.ServerBuffer, 2*tick),
		shared - c.est.Downlink - buffer(c.cfg.ClientBuffer, tick)
}

func buffer(configured, def time.Duration) time.Duration {
	switch {
	case configured == 0:
		return def
	case configured < 0:
		return 0
	}
	return configured
}

// InitializeClient sets both times to their targets if an estimate is
// valid; otherwise it sets predicted time to server time.
func (c *Steered) InitializeClient(predicted, server *nettime.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Clock()
	c.last, c.haveLast = now, true
	if !c.est.Valid {
		*predicted = *server
		return
	}
	tp, ts := c.targets(server.TickRate(), now)
	*predicted = nettime.New(server.TickRate(), tp)
	*server = nettime.New(server.TickRate(), ts)
}

// AdvanceTime implements Provider. It advances by the time Clock moved
// since the previous call or InitializeClient; dt is used only on a first
// call without InitializeClient (see Client).
func (c *Steered) AdvanceTime(predicted, server *nettime.Time, dt time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Clock()
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
	tp, ts := c.targets(rate, now)

	base := dt
	if !c.cfg.HardResetOnly {
		base += time.Duration(float64(dt) * c.est.DriftPPM / 1e6)
	}
	p := predicted.Add(base)
	s := server.Add(base)
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
		cp, cs = c.correction(ep, dt), c.correction(es, dt)
		p, s = p.Add(cp), s.Add(cs)
	}
	if dt > 0 {
		st.PredictedScale = float64(base+cp) / float64(dt)
		st.ServerScale = float64(base+cs) / float64(dt)
	}
	st.PredictedError, st.ServerError = ep-cp, es-cs
	*predicted, *server = p, s
	return true
}

// correction returns how far to move a time whose error is e during a frame
// of dt: proportional to the error beyond the dead band, at most
// MaxScaleDeviation*dt, and never more than the error, so it cannot overshoot.
func (c *Steered) correction(e, dt time.Duration) time.Duration {
	mag := abs(e) - c.cfg.CorrectionTolerance
	if mag <= 0 || dt == 0 {
		return 0
	}
	frac := math.Min(1, float64(dt)/float64(c.cfg.SlewTime))
	corr := time.Duration(float64(mag) * frac) // truncates toward zero
	if limit := time.Duration(c.cfg.MaxScaleDeviation * float64(dt)); corr > limit {
		corr = limit
	}
	if e < 0 {
		return -corr
	}
	return corr
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
