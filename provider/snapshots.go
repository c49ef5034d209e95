package provider

import (
	"time"

	"github.com/netclock/netclock/internal/rank"
)

// InterpObserver is implemented by a BufferPolicy that also sizes
// ClientBuffer from what interpolation actually needed, rather than from
// ping delays alone. A Steered told of the snapshots the game receives
// (Steered.ObserveSnapshot) hands its policy, if the policy implements
// InterpObserver, one InterpFrame per frame; a policy that does not
// (FixedBuffers, policies written before it) is unaffected. It is an
// interface of its own so that BufferPolicy implementations keep
// compiling.
type InterpObserver interface {
	// ObserveInterpFrame is called once a frame (AdvanceTime), for the
	// previous frame, once a snapshot has been received, with the
	// estimate in use (ClientBuffer is counted from its Downlink).
	ObserveInterpFrame(f InterpFrame, e Estimate)
}

// InterpFrame is what one frame's interpolation needed.
type InterpFrame struct {
	// Need is the estimated server time at the frame minus the stamp of
	// the newest snapshot the game had received by then: the smallest
	// interpolation delay (server time − interpolation time) with which
	// that frame would have had a snapshot on both sides. Negative if
	// that snapshot was stamped ahead of the estimated server time.
	Need time.Duration
	// Silence is how long (client clock) before the frame the game last
	// received a snapshot: long in an outage, short while snapshots
	// arrive, however late.
	Silence time.Duration
	// MaxMove is how far the buffers in use could move during the frame
	// (a Steered moves them at most MaxScaleDeviation/2 of the frame's
	// duration), so that a policy following the needs knows how fast its
	// delay takes effect. 0: not known (a policy then assumes at once).
	MaxMove time.Duration
}

// Defaults and limits of the interpolation window (AdaptiveConfig).
const (
	// DefaultInterpWindow is the default number of frames whose
	// interpolation needs ClientBuffer is sized from: 68s at 60 frames
	// per second.
	DefaultInterpWindow = 4096
	// MaxInterpWindow bounds AdaptiveConfig.InterpWindow (528 KiB: the
	// needs, their levels, the level rule's shadow and a scratch copy).
	MaxInterpWindow = 1 << 14
	// minInterpNeeds: below this many frames' needs, ClientBuffer comes
	// from the ping delays.
	minInterpNeeds = 256
	// solveEvery: the delay is taken again every this many frames (a
	// quarter second at 60 frames per second).
	solveEvery = 16
	// interpAim: the starved share aimed at, as a share of 1 − Target:
	// the window's estimate of it wanders.
	interpAim = 0.9
	// lightTail, maxLower: where the needs' tail is short, its scale (the
	// mean excess beyond the threshold, as estimated for the exponential
	// tail) under lightTail snapshot intervals, the share aimed at is
	// divided by r = min(maxLower, lightTail × interval / scale), which
	// costs scale × ln r of delay: at most lightTail/e (0.28) of an
	// interval, at a scale of lightTail/e intervals. Starving less is
	// cheap there, and a run's starved share wanders around the aim (over
	// QUIC on a VM, ue-bad starved 0.42–1.46% of 40 s in 14 runs aiming
	// at 0.9%); where bursts of lost snapshots make the tail long
	// (mobile-4g: aiming at 0.7% instead of 0.9% cost 7.8 ms), the aim
	// stays.
	lightTail, maxLower = 0.75, 2
	// tailShare: the needs' tail is extrapolated from those beyond the
	// quantile that leaves tailShare times the starved share aimed at
	// (4.5% by default), as an exponential tail: a loss burst puts a few
	// frames in it together, so a direct 0.9% quantile rests on a handful
	// of bursts and wanders (mobile-4g: by 13 ms, one standard deviation
	// over a run), where the threshold and the mean beyond it rest on
	// five times as many.
	tailShare = 5
	// recentShare: how far the median of the newest quarter of the window
	// is above the whole window's is added, so that a step up of the
	// needs counts within seconds, not when it fills 1 − Target of the
	// whole window. (The newest quarter's own tail quantile, as noisy as
	// a quarter of the bursts, held mobile-4g's delay up by 5–7 ms.)
	recentShare = 4
	// trendRun: the needs' level is the median of runs of this many
	// frames; a level that rose over each of the last two runs is a ramp
	// (a queue filling), and the delay is raised by the smaller rise: by
	// the time the buffer has moved, the needs have moved on.
	trendRun = 128
	// levelRun, levelLag, levelAim: the level rule (needWindow.levelDelay).
	// Where the needs' level wanders (a queue that fills and drains over
	// seconds: congested), a quantile over the whole window pays for the
	// level's highs all the time, while the level now plus the tail of
	// the needs' residuals from their level pays for them only while they
	// last. The level is the median of the last levelRun frames (a
	// quarter second at 60 frames per second), taken again every frame
	// (needWindow.follow) and moving as the buffer may (InterpFrame.
	// MaxMove); the residuals are taken from the level levelLag frames
	// earlier, half a run: what the median lags. The share aimed at is
	// divided by levelAim: the level rule starves more than its residuals
	// say (they are measured against a level that has not yet seen them).
	// It is used while, played in the shadow over the window, it costs
	// less on average than the window rule's tail quantile, and never
	// again once it would have starved more than allowed there. On
	// congested (5 seeds, with the buffer moves fed forward to the
	// timelines) it took the mean interpolation delay from 116.7 to
	// 106.3 ms and the starved frames from 0.47% to 0.16%; a median over
	// 128 frames taken every 16, judged by its residuals alone, only to
	// 114.8 ms at 0.28%.
	levelRun, levelLag, levelAim = 16, 8, 3

	// interpMargin: frames whose needs cluster (a steady link, frames
	// locked to the snapshots' phase) would otherwise sit on the edge of
	// starving, the timelines tracking their targets within
	// CorrectionTolerance.
	interpMargin = 500 * time.Microsecond
	// maxSilence: the frames of a silence longer than this (or than 4
	// snapshot intervals) are an outage, not jitter: no interpolation
	// delay worth having covers it, so they do not count (they would hold
	// the delay up by the outage's length for a window).
	maxSilence = 250 * time.Millisecond
)

// needWindow is a ring of the last frames' interpolation needs, with a
// scratch copy to take quantiles without allocating, and alongside it
// each need's level: the median of the levelRun needs before it, as far
// as a delay following it could have moved (the buffer's rate limit).
type needWindow struct {
	delayWindow
	lev   []time.Duration // lev[i]: the level before ring[i]
	ln    int             // the newest ln needs have a level
	since int             // needs added since the last delay
	level bool            // the delay follows the level (see delay)
	now   time.Duration   // the level now: the median of the newest levelRun needs
	resid time.Duration   // the level rule's residual tail, at the last delay
	// The level rule played in the shadow, whichever rule is in use: the
	// delay it would have had in force at each frame (sh), moving as the
	// buffer may, and whether that frame's need was beyond it (over), for
	// the newest sn frames.
	sh     []time.Duration
	over   []bool
	sn     int
	shadow time.Duration // the level rule's delay now, once haveSh
	haveSh bool
	barred bool
}

func newNeedWindow(size int) needWindow {
	return needWindow{delayWindow: newDelayWindow(size), lev: make([]time.Duration, size),
		sh: make([]time.Duration, size), over: make([]bool, size)}
}

func (w *needWindow) reset() {
	w.delayWindow.reset()
	w.since, w.ln, w.level = 0, 0, false
	w.sn, w.haveSh, w.barred = 0, false, false
}

// add adds a need, and the level before it as a delay following it could
// have moved there, by at most maxMove from the level before (no limit if
// maxMove is 0).
func (w *needWindow) add(d, maxMove time.Duration) {
	if w.n >= levelRun {
		l := w.now // the median of the levelRun needs before d
		if size := len(w.ring); w.ln > 0 && maxMove > 0 {
			l = toward(w.lev[(w.next-1+size)%size], l, maxMove)
		}
		w.lev[w.next] = l
		w.ln = min(w.ln+1, len(w.ring))
	}
	if w.haveSh {
		w.sh[w.next], w.over[w.next] = w.shadow, d > w.shadow
		w.sn = min(w.sn+1, len(w.ring))
	}
	w.delayWindow.add(d)
	w.since++
	w.now = w.quantile(0, min(w.n, levelRun), 0.5)
	if w.haveSh {
		target := w.now + w.resid + interpMargin
		if maxMove > 0 {
			target = toward(w.shadow, target, maxMove)
		}
		w.shadow = target
	}
}

// drop removes the newest k needs (at most all of them).
func (w *needWindow) drop(k int) {
	k = min(k, w.n)
	w.n -= k
	w.ln = max(0, w.ln-k)
	w.sn = max(0, w.sn-k)
	w.next = (w.next - k + len(w.ring)) % len(w.ring)
	w.since = max(0, w.since-k)
	if w.n > 0 {
		w.now = w.quantile(0, min(w.n, levelRun), 0.5)
	}
}

// delay returns the interpolation delay for a starved fraction starve
// (lowered where the tail is short against the snapshot interval, see
// lightTail), plus interpMargin: the level rule's (levelDelay) while it
// is cheaper, else the window rule's (windowDelay). The window must not
// be empty.
func (w *needWindow) delay(starve float64, interval time.Duration) time.Duration {
	w.since = 0
	w.fill(w.ring, w.n)
	t := w.tail(w.n, starve, interval)
	if d, ok := w.levelDelay(t, starve, interval); ok {
		return d + interpMargin
	}
	return w.windowDelay(t) + interpMargin
}

// windowDelay returns the window rule's delay, given the needs' tail
// quantile over the window t: t plus how far the median of its newest
// quarter is above the window's (a step up), plus the needs' rise if they
// are ramping.
func (w *needWindow) windowDelay(t time.Duration) time.Duration {
	if recent := len(w.ring) / recentShare; w.n > recent {
		t += max(0, w.quantile(0, recent, 0.5)-w.quantile(0, w.n, 0.5))
	}
	if w.n >= 3*trendRun {
		a, b, c := w.quantile(0, trendRun, 0.5), w.quantile(trendRun, trendRun, 0.5), w.quantile(2*trendRun, trendRun, 0.5)
		t += max(0, min(a-b, b-c))
	}
	return t
}

// levelDelay returns the level rule's delay, and whether it is in use:
// the needs' level now (the median of the newest levelRun) plus the
// 1 − starve/levelAim quantile of the residuals (each need minus the level
// levelLag frames before it), extrapolated as tail does. It is in use
// when it is cheaper than the window rule's tail quantile t counting the
// level's mean over the window (what it costs on average). It needs
// minInterpNeeds residuals.
func (w *needWindow) levelDelay(t time.Duration, starve float64, interval time.Duration) (time.Duration, bool) {
	n := w.ln - levelLag
	if n < minInterpNeeds || w.barred {
		w.level = false
		return 0, false
	}
	size := len(w.ring)
	s := w.scratch[:n]
	for i := range n {
		j := (w.next - 1 - i + size) % size
		s[i] = w.ring[j] - w.lev[(j-levelLag+size)%size]
	}
	r := w.tail(n, starve/levelAim, interval)
	if !w.haveSh {
		w.shadow, w.haveSh = w.now+r+interpMargin, true
	}
	w.resid = r
	// Judged by how it did in the shadow over the window, once it has
	// been played long enough: what it would have cost on average, and
	// whether it would have starved no more than allowed.
	w.level = false
	if w.sn >= minInterpNeeds {
		var cost time.Duration
		over := 0
		for i := range w.sn {
			j := (w.next - 1 - i + size) % size
			cost += w.sh[j]
			if w.over[j] {
				over++
			}
		}
		// A level that steps faster than the buffer may follow (Wi-Fi
		// power save switching on) starves it in bursts, as the
		// window's delay does not: once it has, it is not followed again.
		w.barred = w.barred || float64(over) > starve*float64(w.sn)
		w.level = !w.barred && cost/time.Duration(w.sn) < t
	}
	if !w.level {
		return 0, false
	}
	return w.now + r, true
}

// follow returns the level rule's delay (plus interpMargin) with the
// level now and the residuals' tail of the last delay, and whether the
// level rule is in use: between delays, the level moves every frame.
func (w *needWindow) follow() (time.Duration, bool) {
	if !w.level {
		return 0, false
	}
	return w.now + w.resid + interpMargin, true
}

// tail returns the 1 − starve/r quantile of the newest n needs,
// extrapolated from those beyond their 1 − m·starve quantile u (m =
// tailShare, less if that would reach below the median) as an exponential
// tail: u + scale × ln(m·r), scale the mean of their excess over u, and r
// = min(maxLower, lightTail × interval / scale), at least 1 (1 for an
// interval of 0).
func (w *needWindow) tail(n int, starve float64, interval time.Duration) time.Duration {
	m := min(tailShare, 0.5/starve)
	if m <= 1 {
		return selectRank(w.scratch[:n], 1-starve)
	}
	u := selectRank(w.scratch[:n], 1-m*starve)
	// The quickselect left the needs above u's rank after it.
	k := max(0, min(n-1, int((1-m*starve)*float64(n)+0.999999999)-1))
	beyond := w.scratch[k+1 : n]
	if scale := meanExcess(u, beyond); scale > 0 {
		m *= max(1, min(maxLower, lightTail*float64(interval)/float64(scale)))
	}
	return expTail(u, beyond, m)
}

// quantile returns the q-quantile of n needs, skipping the newest skip;
// skip+n must not exceed the window's length.
func (w *needWindow) quantile(skip, n int, q float64) time.Duration {
	w.fill(w.ring[:], n+skip)
	return selectRank(w.scratch[skip:skip+n], q)
}

// fill copies the newest n of ring (the needs or their levels, in the
// ring's order) to the scratch, newest first.
func (w *needWindow) fill(ring []time.Duration, n int) {
	size := len(ring)
	for i := range n {
		w.scratch[i] = ring[(w.next-1-i+size)%size]
	}
}

// selectRank returns the q-quantile (nearest rank, as sortedRank) of the
// non-empty s, which it reorders: a quickselect, linear on average, since
// the window is taken again every few frames.
func selectRank(s []time.Duration, q float64) time.Duration {
	return rank.Nth(s, max(0, min(len(s)-1, int(q*float64(len(s))+0.999999999)-1)))
}
