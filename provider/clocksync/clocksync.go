// Package clocksync estimates the server clock from ping/pong samples: the
// offset of the server clock from the client clock, its drift, the one-way
// delays, and an honest error bound. Its Estimate feeds provider.Steered.
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
// biased by the jitter asymmetry. Where the drift bins of the last three
// windows saw a lower floor on the same path (the window's lowest samples
// left it), the estimate takes that one (floormemory.go).
//
// The drift (the server clock's rate against the client's) comes from the
// minima of 2 s bins over 512 s (over the newest 128 s when they disagree
// with the long history: a rate that changed): one weighted slope per
// direction, each bin weighted by how close it came to its direction's
// floor, combined by inverse variance (drift.go).
//
// A move of the floors is the clock's when both move by the same amount in
// opposite directions, the path's when one moves by itself. Clock moves
// move the offset: a jump (steps.go) restarts the window, a slew is
// followed by the drift, and a rate change (a slew starting or ending,
// seen as the newest drift bins bending away from the history in both
// directions alike) keeps only what followed it and takes the rate those
// samples show at once (shiftrate.go) — if a clock could make it: at most
// 1000 ppm, still ramping, and leaving the offset continuous (two queues,
// one draining while the other builds, bend the floors alike too). Path
// moves must not: the path tracker (path.go)
// holds the offset across them and the asymmetry term A absorbs the move,
// and a path that returns to a state seen before takes that state's A
// back; only in the first window after a start does a floor that falls
// through many samples count as converging (a queue at connect draining),
// as far as the floor wanders, and one that falls through a single sample
// as far as twice the jitter's mean excess (a soft floor's rare low value)
// unless the samples after it follow it down (lonefall.go). One floor
// that falls alone may still be the clock, the other
// side's rise hidden in its jitter: such a fall stays in doubt until the
// other side's samples decide (doubt.go), and one proved the clock's is
// taken back as a jump — as is one deeper than that direction's whole
// delay, with the other side risen too, which no path can make. A fall
// that goes on, once settled, faster than twice the fastest slew is a
// queue draining, whatever the other side's newest samples show
// (drain.go). Floors
// that move after an interruption (pings unanswered: a handover, a
// re-route) are the path's, unless a floor fell further than its
// direction's whole delay can. Samples far slower than the floor
// (a paused peer) are set aside, and so are those far faster whose uplink
// delta is of the old clock and downlink delta of the new one: pings in
// flight when the client's clock stepped back (straddle.go). An
// acquisition lasts at least 5 s whatever the ping rate. The estimator's
// State says which of these it stands on.
//
// A restart (a jump, a rate change, a silence) keeps A; the round trip,
// which no clock moves, then says whether the path changed meanwhile
// (reacquire.go): one that moved goes into A's error, and one that moved
// and came back is the path back in its state from before, whose A holds. Floors that move oppositely by less than
// each direction's delay may be a handover whose outage lost no ping: taken
// for a jump, they stay in the bound until the window has refilled, and in
// A's error if the round trip moved.
//
// The error bound (bound.go) comes from the spacing of the lowest samples in
// each direction (an estimate of how far the minimum can still be above the
// true floor), the drift's error over the window, the bins' wander, the
// floors' slow wander (a queue whose level the window's minimum never
// reaches; floorwander.go), how far above the floors the drift history saw
// the window's floors sit (a rare low value that left the window;
// floormemory.go) and the uncertainty of every inferred asymmetry — a path
// change held, a clock move taken back, a fall in doubt — and is never more than the hard bound
// that the newest samples give whatever the jitter and the inferences: the
// offset lies between −(their downlink floor) and their uplink floor.
package clocksync

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"

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

// Estimator turns samples into an Estimate. It is not safe for concurrent
// use; the transport calls it from one goroutine and hands the Estimate on.
type Estimator struct {
	cfg Config

	// The ring of samples, oldest at head. Times are client-clock ns. u
	// and w are the one-way deltas (rebased after path changes); ud and wd
	// are them detrended to the anchor: ud = u − r(t−t0), wd = w + r(t−t0).
	t, u, w, ud, wd []int64
	head, n         int

	t0  int64   // anchor of the detrended values
	r   float64 // drift: server seconds per client second − 1
	rSE float64 // standard error of r
	// The recent history's standard error, when r is the long history's
	// (drift.go); the bound takes the larger.
	rSEBound float64
	// slopesApart is a third of how far the two directions' slopes
	// disagreed in the newest fit, when one was taken for the rate
	// (drift.go): the other may have been the clock's.
	slopesApart float64
	// rApart is slopesApart of the fit r came from: the bound's alone,
	// beyond boundSE, since the rules' tolerances widened with it made 296
	// of 12115 runs worse by more than 5% (random:2017 40 → 388ms).
	rApart float64
	// rBins is how many drift bins the fit that set r had (keepsRate).
	rBins  int
	fitted bool  // r comes from a fit, not the prior (rSE can be 0 on a perfect path)
	asym   int64 // A: assumed base↑ − base↓, ns
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
	mildU, mildW   int // and by more than half of it (a slew's first look)
	// The drift history was moved onto the risen floor in this run.
	shiftedU, shiftedW bool
	// How long the run had lasted when a look at it was last due (0:
	// never).
	lookU, lookW int64
	riseAtU      int64
	riseAtW      int64
	sinceFit     int

	est   provider.Estimate
	stats Stats
	last  Event

	// The path tracker (path.go).
	ref       pathRef
	anchor    pathRef // the reference as the path was last confirmed, before renewals (leaked)
	refSet    bool
	acquiring int   // samples left to converge freely on
	acqFrom   int64 // client send time the current acquisition began
	acqLen    int   // the samples it began with
	acqGot    int   // and the samples it has had
	acqNew    bool  // one began, and its first sample is still to come
	slewing   bool  // the acquisition follows a clock shift
	asymErr   int64 // bound on asym's error from inferred path changes
	known     [numKnown]pathRef
	knownN    int
	pathLog   [numPathLog]pathEvent
	pathLogN  int
	episode   pathRef // the stable state before the current run of path changes

	// The rate a shift took, re-measured on what followed it until the
	// drift is fitted again (shiftrate.go): its standard error (0: none
	// yet) and the samples it was measured on (0: not to be re-measured).
	shiftSE float64
	shiftN  int

	// How far the recent samples lift a floor the window still holds low,
	// while the clock moves, and how far that may be off (lift.go).
	liftU, liftW int64
	liftErr      int64
	doubt        doubt   // a one-sided fall that may be the clock (doubt.go)
	shortRTT     int64   // the shortest round trip of a sample (limit.go)
	limitSince   int64   // client time A went beyond the round trip's limit, or −1 (limit.go)
	jumpBins     int     // bins since a jump that kept the drift history, or −1 (jumphistory.go)
	jumpSE       float64 // the standard error of the drift fitted since that jump, capped, for the bound (jumphistory.go)
	drain        drain   // falls taken for the clock, watched for a queue's pace (drain.go)
	lastPathAt   int64
	spU, spW     int64 // spacing of the lowest samples at the last bound
	// The soft floors' excess, held (bound.go).
	heldSoftU, heldSoftW heldSoft
	// A lone sample's fall followed in the first window (lonefall.go).
	lone loneFall

	// The stall gate: samples far above the round-trip floor.
	rttFloor int64
	// The round-trip floor before a restart of the window (a jump, a rate
	// change, a silence), to tell at the end of the reacquisition whether
	// the path changed meanwhile (reacquire.go).
	reacq      reacquisition
	gatedRun   int
	ungated    bool // a sample of this run of long round trips contradicted the estimate
	gatedSince int64
	// The straddle gate: samples held while their round trips are far
	// below the floor, since shortSince (client send time).
	held       [heldMax]heldSample
	heldN      int
	shortSince int64
	shortBy    int64 // the least they were short by
	afterJump  afterJump
	floorU     int64 // the floors (detrended) at the last update
	floorW     int64

	segU, segW   int     // the current path segment of each direction
	freshAt      int64   // client time of the first sample after a (re)start
	firstAcq     bool    // acquiring since a (re)start, not since a clock move
	lastSent     int64   // client send time of the newest ping answered, stalled or not
	silentAt     int64   // client time of the first sample after the newest silence
	silent       bool    // there was one
	wanU, wanW   int64   // floorWander at the last bin: fast
	slowU, slowW int64   // and slow
	youngErr     int64   // half the falls followed as a young window's convergence
	exU, exW     int64   // each floor's mean excess (the jitter's scale) at the last update
	fellU, fellW bool    // a rise the other direction fell by as it came, while it lasts (hidden.go)
	kinks        int     // bins in a row whose slope bent away (steps.go)
	kinksLong    int     // and over kinkLongBins, where kinkBins did not
	kinksOne     int     // and bins in a row from one bent in one direction alone (returning)
	before       float64 // the drift fitted before the newest clock shift, if beforeOK (kink.go)
	beforeSE     float64 // and its standard error
	beforeOK     bool
	returns      int     // bins in a row that showed a return to before (slewend.go)
	returnArmed  bool    // the newest restart was a clock shift's (or a jump's whose bins since showed a new rate), so before is the rate the clock left
	bendErr      int64   // what an unconfirmed bend can have added to the offset
	bendRate     float64 // how far its rate is from the drift's
	modelOffset  int64   // the offset the model gave at est.At, before the newest samples' clamp (ns)
	bendSince    int64   // client time the unconfirmed bend began by, if bending
	bending      bool
	jumpRate     float64 // a bend's rate at a jump, which the drift may be off by until it is fitted again (steps.go)
	jumpAt       int64   // client time of the jump's first sample kept
	dirSlopes    dirSlopes
	driftHold    int // bins to wait before the drift is refitted
	// The newest one-way step each direction took (shiftBins): client
	// time and sign; a step that follows one of its sign within
	// stairGap is a ramp's next part (stair.go).
	stairAt   [2]int64
	stairSign [2]int64

	// The rate the clock ran at before the newest restart (a clock shift,
	// or a jump that dropped the drift history), if stopArmed: a slew
	// shorter than what follows a restart returns to it (slewstop.go).
	stopTo, stopToSE float64
	stopArmed        bool
	stops            int     // bins in a row that showed it
	stop             stopFit // detectStop's scratch

	// A jump that dropped the drift history while the drift was a slew's
	// may have been that slew's end (endjump.go): endJump until the drift
	// is fitted again.
	endJump bool
	// The first path change since the newest jump, if jumpPaths: its log
	// index, client time and the path state before it (jumppaths.go).
	jumpPaths      bool
	jumpPathFrom   int
	jumpPathAt     int64
	jumpPathBefore pathRef

	// The drift history's lowest floors (floormemory.go), U then W, and
	// since when A has held its value memAsym; recomputed when !memOK.
	memNear, memFar   [2]int64
	memSince, memAsym int64
	memOK             bool

	// The drift tracker: the minimum u and w of each BinDuration of client
	// time, for the last len(bins) bins, oldest at binHead.
	bins     []bin
	binHead  int
	binN     int
	binsDone int // bins completed since the last restart
	cur      bin

	// scratch for the regression, preallocated.
	xs, ys, ws []float64
	tmp        []float64
	segs       []int
	segs2      []int // splitLevels' scratch
}

// bin holds the lowest one-way deltas seen in one stretch of client time,
// and when they were seen.
type bin struct {
	start      int64
	tu, tw     int64
	minU, minW int64
	// The second lowest (MaxInt64 until there is one): far above the
	// lowest, that one was a rare low value, not a path state.
	min2U, min2W int64
	n            int
	// The path segment of each direction: a one-way step starts a new
	// one, and the drift fit gives each its own intercept.
	segU, segW int
	// The bin straddles a step in that direction: left out of the fit.
	skipU, skipW bool
}

const (
	binDuration = int64(2 * time.Second)
	numBins     = 256 // 512s of drift history
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
		segs: make([]int, 0, 2*numBins+1), segs2: make([]int, 0, 2*numBins+1),
		bound: -1, shortRTT: math.MaxInt64, limitSince: -1, jumpBins: -1,
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
		xs: e.xs, ys: e.ys, ws: e.ws, tmp: e.tmp, segs: e.segs, segs2: e.segs2, stats: e.stats, bound: -1, olderDirty: true}
}

func (e *Estimator) at(i int) int { return (e.head + i) & (len(e.t) - 1) }

// Observe adds a sample. It returns an error wrapping ErrBadSample, and
// changes nothing, if the sample is impossible (received before sent, a
// negative round trip) or absurd (a round trip over MaxRTT). An exact repeat
// of the previous sample is ignored. A sample whose round trip is far above
// the floor is set aside (a stall); one far below it is held until the next
// samples tell whether it was in flight when the client's clock stepped
// back (then it is dropped) or the path got shorter (then it counts).
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
	// An interruption (recentGap) is pings that went unanswered: a swell
	// answers them late, and the stall gate's own gaps are none.
	if sent := int64(s.ClientSend); e.n > 0 && sent-e.lastSent > e.gapLimit() {
		e.silentAt, e.silent = tc, true
	}
	e.lastSent = max(e.lastSent, int64(s.ClientSend))
	if e.n > 0 && tc-e.t[e.at(e.n-1)] >= int64(e.cfg.Window) {
		// Silent for a whole window: whatever happened to the clocks
		// meanwhile (a step hidden by the outage) cannot be told from the
		// samples, so start afresh. The drift and the asymmetry stay.
		e.startAfresh()
		e.stats.Restarts++
		e.last = EventRestart
	} else if e.gate(tc, u, w) {
		e.stats.Stalled++
		e.last = EventStall
		return nil
	} else {
		e.last = EventNone
	}
	switch e.straddle(int64(s.ClientSend), u+w, u-e.trend(tc), w+e.trend(tc)) {
	case straddleDrop:
		e.stats.Straddled++
		e.last = EventStall
		return nil
	case straddleHold:
		e.held[e.heldN] = heldSample{tc, u, w}
		e.heldN++
		e.last = EventStall
		return nil
	case straddlePath:
		// A shorter path: the samples held count, in order, and the first
		// event they show is kept.
		first := e.last
		for _, h := range e.held[:e.heldN] {
			e.last = EventNone
			e.add(h.tc, h.u, h.w)
			if first == EventNone {
				first = e.last
			}
		}
		e.heldN = 0
		e.last = EventNone
		e.add(tc, u, w)
		if e.last == EventNone {
			e.last = first
		}
		return nil
	}
	e.add(tc, u, w)
	return nil
}

// add puts a sample in the window and updates the estimate.
func (e *Estimator) add(tc, u, w int64) {
	if e.n == 0 {
		e.t0 = tc
		e.freshAt = tc
		e.firstAcq = true
		e.olderDirty = true
		if !e.refSet {
			e.acquire(acquireSamples)
		}
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
	// An acquisition lasts its samples but no less than acquireMin: its
	// rules were set at 10 Hz, and at a faster rate the floors settle no
	// faster in time, nor have the first drift bins (the floors' wander)
	// closed (at 50 Hz mobile-4g's floors, still settling 1.3s in, were
	// taken for a path change: 1ms of error all run).
	sent := tc - (u+w)/2
	if e.acqNew {
		e.acqFrom, e.acqLen, e.acqGot, e.acqNew = sent, e.acquiring, 0, false // one began since the last sample (a restart)
	}
	e.acqGot++
	if e.acquiring > 1 || e.acquiring == 1 && sent-e.acqFrom >= acquireMin {
		e.acquiring--
	}
	// Nor, when pings come at under half that rate, longer than its
	// samples take at it: at 1 Hz a start's 64 took a minute and a slew's
	// 256 over four, blind all along to path changes and to the slew's
	// end (random:320: the first acquisition ran into an uplink bloat and
	// took its floor, 93ms of error; random:188: 19ms after a slew's
	// end). (Pings lost at 10 Hz do not cut it short: its rules want the
	// samples.)
	if e.acquiring > 0 && 2*e.acqGot < e.acqLen && sent-e.acqFrom >= max(acquireMin, int64(e.acqLen)*int64(ratedPeriod)) {
		e.acquiring = 0
	}
	e.slewing = e.slewing && e.acquiring > 0
	e.refineShift(tc)

	if ev := e.detectSteps(); ev != EventNone {
		e.last = ev
	} else if ev := e.weighDoubt(); ev != EventNone {
		e.last = ev
	}
	binDone := e.addToBin(tc, u, w)
	// The floors' wander moves over many bins: every wanderEvery bins is
	// enough once the first window is over (it is Observe's costliest part).
	if binDone && (tc-e.freshAt < int64(e.cfg.Window) || e.binsDone%wanderEvery == 0) {
		e.wanU, e.wanW, e.slowU, e.slowW = e.floorWander()
	}
	e.sinceFit++
	if e.sinceFit >= fitEvery(e.n) || binDone || e.last != EventNone {
		e.fit(tc, binDone || e.last != EventNone)
		e.sinceFit = 0
	}
	if binDone && e.last == EventNone {
		if ev := e.detectKink(); ev != EventNone {
			e.last = ev
			e.fit(tc, true)
		} else if ev := e.detectReturn(); ev != EventNone {
			e.last = ev
			e.fit(tc, true)
		}
	}
	e.update(tc)
	if e.acqNew {
		e.acqFrom, e.acqLen, e.acqGot, e.acqNew = sent, e.acquiring, 1, false // one began with this sample (a jump, a shift)
	}
}

// startAfresh forgets the samples and the drift history but keeps the
// drift, the path states and the asymmetry.
func (e *Estimator) startAfresh() {
	e.head, e.n = 0, 0
	e.olderN, e.olderDirty = 0, true
	e.belowU, e.belowW, e.aboveU, e.aboveW, e.mildU, e.mildW = 0, 0, 0, 0, 0, 0
	e.bound = -1
	e.binN, e.binsDone, e.cur = 0, 0, bin{}
	e.forgetJump()
	e.memOK = false
	e.gatedRun, e.heldN, e.ungated = 0, 0, false
	e.acquire(acquireSamples)
	e.markRestart()
	e.returnArmed, e.stopArmed, e.endJump, e.jumpPaths = false, false, false, false
	e.drain = drain{}
	e.limitSince = -1
	e.forgetPaths()
	e.dropDoubt()
	e.youngErr, e.wanU, e.wanW, e.slowU, e.slowW = 0, 0, 0, 0, 0
}

// acquire begins an acquisition of n samples: its clock (acquireMin, and
// the time its samples take at ratedPeriod) starts at the sample that
// begins it, or at the next one if none is being added, even while
// another is under way.
func (e *Estimator) acquire(n int) {
	e.acquiring, e.acqNew = n, true
}

// update recomputes the Estimate after a sample at client time now.
// Samples in an unconfirmed run below a floor are held out: until
// classified they may be a clock jump, which must not drag one floor alone.
func (e *Estimator) update(now int64) {
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
	e.exU, e.exW = meanU, meanW
	tolU, tolW := e.floorTolerance()
	changed := false
	if ev := e.trackPath(used, tolU, tolW, now); ev != EventNone {
		changed = ev == EventPathChange
		if e.last == EventNone {
			e.last = ev
		}
	}
	// A can't be more than the round trip: clamping keeps the estimate in
	// the interval every sample allows.
	rttFloor := max(0, fu+fw)
	e.dropBeyondLimit(rttFloor, tolU, tolW, now)
	e.rttFloor, e.floorU, e.floorW = rttFloor, fu, fw
	pathMoved := e.pathMovedSinceRestart(rttFloor, tolU, tolW, changed)
	asym := max(-rttFloor, min(rttFloor, e.asym))
	// The window's floors, or lower ones the drift history saw lately on
	// the same path (floormemory.go).
	lost := e.floorMemory(fu, fw, now)
	theta := (fu - lost.nearU + e.liftU - fw + lost.nearW - e.liftW - asym) / 2
	upFloor := (rttFloor + asym) / 2
	downFloor := rttFloor - upFloor
	// The hard bound holds whatever the jitter, if the drift is right.
	tilt := e.driftTilt()
	hard := (rttFloor+abs64(asym))/2 + tilt
	// Floors that cross (a round trip below zero) come from two clocks:
	// the window holds samples from both sides of a step not yet seen, and
	// its hard bound bounds nothing (random:2359: a 1.6ms client step on a
	// 1.5ms round trip, 0.8ms of error under 0.3ms). The newest samples'
	// alone still do, below.
	crossed, windowHard := fu+fw < 0, hard
	if crossed {
		hard = math.MaxInt64 / 4
	}
	bound := hard
	if e.bound >= 0 {
		bound = min(hard, e.bound+e.asymErr/2)
	}
	// Never claim less than what the drift's and A's errors allow, nor
	// more than the hard bound, which holds whatever A is: every sample
	// puts the offset between −(its downlink) and its uplink. On the
	// newest samples alone, so that old samples of a clock that has
	// stepped since do not narrow it.
	bound = max(bound, tilt+e.asymErr/2+int64(20*time.Microsecond))
	// A fall in doubt (doubt.go) may be the clock; once the newest samples
	// all follow it, they bound that reading too.
	var doubtErr int64
	if e.doubt.on {
		doubtErr = e.doubt.size
		if now-e.doubt.last > recentWindow {
			bound, doubtErr = bound+doubtErr, 0
		}
	}
	// A bend not yet confirmed (steps.go) may have moved the offset since
	// it began; over the newest samples, only what it adds in their span.
	bound += e.bendErr
	// Behind a queue that builds and drains the window's floors need not be
	// its lowest: they sit above them by what the queue kept all window,
	// which the floors' slow wander hints at; in the first window, as far
	// again as the queue swings in a few bins.
	bound += slowWander * (e.slowU + e.slowW)
	// A floor the window lost sits above the true one by at least what
	// the history saw below it, and that value, one of a tail too thin
	// for the window to measure, may itself sit as far again above the
	// true floor: the offset's error moves by half of each.
	bound += abs64(lost.farU - lost.farW)
	if now-e.freshAt < int64(e.cfg.Window) {
		bound += youngWander * (e.wanU + e.wanW)
	}
	// A restart's round trip that moved, or may yet prove to have moved
	// (reacquire.go): as A's error, which the hard bound caps too.
	bound += pathMoved / 2
	// One-sided moves each within the tolerance, which the reference's
	// renewals let into the offset one at a time, added up since the path
	// was last confirmed (path.go).
	if e.refSet && e.acquiring == 0 {
		bound += e.leaked(fu, fw, tolU, tolW)
	}
	// (The newest samples' floors are no lower than the window's, but for
	// samples held out below them: only then, or with theta beyond the
	// window's, can they prove it wrong.)
	rh, outside := int64(math.MaxInt64), false
	var allow allowed
	if bound > hard || crossed || theta > fu || theta < -fw || all.minU < fu || all.minW < fw {
		var ok bool
		if allow, ok = e.newestAllow(now); ok {
			rh, outside = allow.hard(theta), allow.excludes(theta)
		}
	}
	if (bound > hard || crossed) && rh < math.MaxInt64 { // (the window's floors are lower: no cap below that; none: no cap)
		bound = min(bound, rh+min(e.bendErr, int64(e.bendRate*float64(recentWindow))))
	} else if crossed && e.bound < 0 {
		bound = min(bound, windowHard) // (before any statistical bound: what there was)
	}
	// The offset the model gives, before the newest samples correct it:
	// what a bend is judged against (steps.go).
	e.modelOffset = theta + e.trend(now)
	if outside {
		// The newest samples prove the estimate wrong (a rate change or
		// a step not yet seen): the offset is anywhere they allow, and
		// the nearest of those is closer to the truth. The bound that
		// held for theta holds for it.
		bound = max(bound, rh)
		theta = allow.nearest(theta)
	}
	// A floor's rise whose other half the other direction may hide
	// (hidden.go).
	bound += e.hiddenRise(fu, fw, tolU, tolW, meanU, meanW)
	// The rate since a jump that kept the drift's history, known no
	// better than the bins since show it (jumphistory.go).
	bound += e.tiltBeyond(e.jumpSE)
	// The drift taken from one direction's tilt when the two disagreed:
	// the other's may have been the clock's (drift.go).
	bound += e.tiltBeyond(e.rApart)
	// What a clock move under way can add, which the newest samples may
	// straddle: as far again as it lifted a floor (lift.go); a fresh fall
	// in doubt; samples held out below a floor, which may be a jump.
	bound += max(e.liftU, e.liftW, e.liftErr)/2 + doubtErr
	bound += max(fu-all.minU, fw-all.minW, 0) + e.youngErr
	// A jump during a bend: the bend may have been the clock's rate
	// changing, which the drift follows only once fitted again.
	bound += int64(e.jumpRate * float64(now-e.jumpAt))
	e.est = provider.Estimate{
		Valid:          true,
		At:             time.Duration(now),
		Offset:         time.Duration(theta + e.trend(now)),
		DriftPPM:       e.r * 1e6,
		Uplink:         time.Duration(upFloor + meanU),
		Downlink:       time.Duration(downFloor + meanW),
		Jitter:         time.Duration(meanU + meanW),
		ErrorBound:     time.Duration(bound),
		ErrorGrowthPPM: 3*e.boundSE()*1e6 + e.jumpRate*1e6 + 1,
	}
}

// floorTolerance is how far a floor may move by itself without being a
// path change: a few spacings of the lowest samples (the floor's own
// uncertainty), never under tolMin. The drift's error is no part of it: it
// moves the two floors oppositely, which the path tracker takes for the
// clock.
func (e *Estimator) floorTolerance() (tolU, tolW int64) {
	base := tolMin + 2*e.driftTilt()
	tolU, tolW = max(base, tolSpacings*e.spU), max(base, tolSpacings*e.spW)
	return tolU, tolW
}

const (
	tolMin      = int64(100 * time.Microsecond)
	tolSpacings = 8
)

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
