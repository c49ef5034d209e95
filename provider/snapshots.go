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
}

// Defaults and limits of the interpolation window (AdaptiveConfig).
const (
	// DefaultInterpWindow is the default number of frames whose
	// interpolation needs ClientBuffer is sized from: 68s at 60 frames
	// per second.
	DefaultInterpWindow = 4096
	// MaxInterpWindow bounds AdaptiveConfig.InterpWindow (128 KiB).
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
// scratch copy to take quantiles without allocating.
type needWindow struct {
	delayWindow
	since int // needs added since the last delay
}

func newNeedWindow(size int) needWindow { return needWindow{delayWindow: newDelayWindow(size)} }

func (w *needWindow) reset() {
	w.delayWindow.reset()
	w.since = 0
}

func (w *needWindow) add(d time.Duration) {
	w.delayWindow.add(d)
	w.since++
}

// drop removes the newest k needs (at most all of them).
func (w *needWindow) drop(k int) {
	k = min(k, w.n)
	w.n -= k
	w.next = (w.next - k + len(w.ring)) % len(w.ring)
	w.since = max(0, w.since-k)
}

// delay returns the interpolation delay for a starved fraction starve
// (lowered where the tail is short against the snapshot interval, see
// lightTail): the needs' tail quantile over the window (tail), plus how
// far the median of its newest quarter is above the window's (a step up),
// plus the needs' rise if they are ramping, plus interpMargin. The window
// must not be empty.
func (w *needWindow) delay(starve float64, interval time.Duration) time.Duration {
	w.since = 0
	d := w.tail(w.n, starve, interval)
	if recent := len(w.ring) / recentShare; w.n > recent {
		d += max(0, w.quantile(0, recent, 0.5)-w.quantile(0, w.n, 0.5))
	}
	if w.n >= 3*trendRun {
		a, b, c := w.quantile(0, trendRun, 0.5), w.quantile(trendRun, trendRun, 0.5), w.quantile(2*trendRun, trendRun, 0.5)
		d += max(0, min(a-b, b-c))
	}
	return d + interpMargin
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
		return w.quantile(0, n, 1-starve)
	}
	u := w.quantile(0, n, 1-m*starve)
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
	s := w.scratch[:n]
	size := len(w.ring)
	for i := range n {
		s[i] = w.ring[(w.next-1-skip-i+2*size)%size]
	}
	return selectRank(s, q)
}

// selectRank returns the q-quantile (nearest rank, as sortedRank) of the
// non-empty s, which it reorders: a quickselect, linear on average, since
// the window is taken again every few frames.
func selectRank(s []time.Duration, q float64) time.Duration {
	return rank.Nth(s, max(0, min(len(s)-1, int(q*float64(len(s))+0.999999999)-1)))
}
