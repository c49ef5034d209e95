package clocksync

import (
	"math"
	"time"
)

// floorScales returns, from one scan of the window's values of vals, the
// mean spacing of the 8 lowest above the lowest (an estimate of how far the
// floor can still be above the true one: for a density that is finite at
// the floor the spacings are exponential with this mean; −1 with fewer
// than two values) and the soft floor's excess (softExcess).
func (e *Estimator) floorScales(vals []int64) (spacing, soft int64) {
	var buf [16]int64
	m := e.lowest(vals, buf[:])
	if m < 2 {
		return -1, 0
	}
	k := min(m, 8)
	spacing = (buf[k-1] - buf[0]) / int64(k-1)
	// Read off 4·16 values, or at pings too slow for a window to hold
	// that many, off 2·16 once the window spans nearly all of Window: at
	// 1 Hz it never held 64, and the bound never saw a soft floor
	// (random:1..400 at 1 Hz: 24 runs under 99% of 885, 18 now). In the
	// first window, where 4·16 values take more than a quarter of Window
	// to come, off 2·16 too: at 2 Hz the bound saw a 5G uplink's soft
	// floor only 32 s in, the spacing alone understating it until then
	// (random:4749 seed 5: 0.83 ms of error under 0.5 to 0.6 ms from 9 s to
	// 37 s).
	full := e.span() >= int64(e.cfg.Window)-int64(e.cfg.Window)/8 || e.slowStart(4*len(buf))
	if m == len(buf) && (e.n >= 4*len(buf) || full && e.n >= 2*len(buf)) {
		soft = softExcess(buf)
	}
	return spacing, soft
}

// slowStart reports whether this is the first window after a start and,
// at the pings' rate so far, k samples take more than a quarter of Window.
func (e *Estimator) slowStart(k int) bool {
	if e.n < 2 || e.t[e.at(e.n-1)]-e.freshAt >= int64(e.cfg.Window) {
		return false
	}
	return int64(k)*(e.span()/int64(e.n-1)) > int64(e.cfg.Window)/4
}

// statBound is the statistical part of the error bound: the offset error
// (εu − εw)/2 stays under 2.65·(mu + mw) with 99% when the floor excesses
// are exponential with means mu, mw (P(ε > x) = e^(−x/m), ln 200 = 5.3),
// plus three standard errors of the drift over half the window.
func (e *Estimator) statBound() int64 {
	if e.n < 8 {
		return -1
	}
	mu, softU := e.floorScales(e.ud)
	mw, softW := e.floorScales(e.wd)
	e.spU, e.spW = max(0, mu), max(0, mw)
	// In the first window after a start the early estimates, from few
	// samples, must not outlast the samples they came from; after a
	// restart the path and its jitter are the same, and what the full
	// window before it held still holds.
	now := e.t[e.at(e.n-1)]
	held := max(1, min(int64(e.cfg.Window), now-e.freshAt))
	softU = e.heldSoftU.hold(softU, mu, now, held)
	softW = e.heldSoftW.hold(softW, mw, now, held)
	b := 2.65 * float64(max(mu, softU)+max(mw, softW))
	span := float64(e.span())
	b += 3 * e.boundSE() * span / 2
	b += wanderK * e.wander()
	return int64(b) + int64(20*time.Microsecond) // timestamp resolution
}

// heldSoft is a soft floor's excess held over a window. Its estimate from
// the 16 lowest values swings by a factor of ten as single low values come
// and go (random:1767, a 5G uplink: 70 to 790µs, and the bound with it
// from 1.7ms to 0.7ms under an error of 0.78ms), while the floor's shape
// is the path's and changes far more slowly: each direction keeps the
// largest of its recent estimates that were clearly soft (over twice the
// spacing, which covers a finite density's floor by itself), let go
// exponentially over the window (in the first window after a start, over
// the time since it).
type heldSoft struct {
	v, at int64 // the held excess, and when it was last updated
}

// hold takes a new estimate v (with the floor's spacing) at client time
// now and returns the excess the bound takes: v, or the held one if larger.
func (h *heldSoft) hold(v, spacing, now, window int64) int64 {
	if h.v > 0 && now > h.at {
		h.v -= int64(float64(h.v) * min(1, float64(now-h.at)/float64(window)))
	}
	h.at = now
	if v > 2*spacing {
		h.v = max(h.v, v)
	}
	return max(v, h.v)
}

// wander returns the standard deviation of the offsets the drift history's
// bins imply, (min u − min w)/2 with the drift removed, over the window: on a
// stable path only the floor noise, on one whose asymmetry wanders (satellite
// handovers, queues that build one way) more, which the spacing of the
// lowest samples cannot see.
func (e *Estimator) wander() float64 {
	var s, ss, n float64
	for k := 0; k < e.binN; k++ {
		bn := e.bins[(e.binHead+k)%numBins]
		if e.n > 0 && bn.start < e.t[e.head] {
			continue // older than the window
		}
		u := float64(bn.minU) - e.r*float64(bn.tu-e.t0)
		w := float64(bn.minW) + e.r*float64(bn.tw-e.t0)
		th := (u - w) / 2
		s += th
		ss += th * th
		n++
	}
	if n < 4 {
		return 0
	}
	m := s / n
	return math.Sqrt(max(0, ss/n-m*m))
}

// wanderK scales wander in the bound.
const wanderK = 2.0

// priorDriftSE is the drift uncertainty assumed before it can be fitted:
// consumer clocks drift up to about 500 ppm.
const priorDriftSE = 250e-6

// riseHold is how long a floor must stay risen before it counts as a path
// change.
const riseHold = 5 * time.Second

// driftPrior is the spread of clock drifts the fitted drift is shrunk by
// (a normal prior centred on 0): consumer clocks drift by a median of about
// 78 ppm and some beyond 500 ppm.
const driftPrior = 200e-6

// allowed is the interval of detrended offsets the newest samples allow:
// each sample puts the offset between −(its downlink delta) and its uplink
// delta, whatever the path does, and the drift's error widens that by what
// it moves them over their span.
type allowed struct{ lo, hi int64 }

// hard is how far the offset theta may be from the truth: to the far end.
func (a allowed) hard(theta int64) int64 { return max(theta-a.lo, a.hi-theta) }

// excludes reports whether the newest samples prove theta wrong.
func (a allowed) excludes(theta int64) bool { return theta < a.lo || theta > a.hi }

// nearest is the offset the newest samples allow closest to theta: as the
// truth lies in the interval, it is never further from the truth than
// theta.
func (a allowed) nearest(theta int64) int64 { return min(max(theta, a.lo), a.hi) }

// newestAllow returns the interval the newest samples (recentWindow, at
// least recentMin) allow, or false when they bound nothing.
func (e *Estimator) newestAllow(now int64) (allowed, bool) {
	mu, mw := int64(math.MaxInt64), int64(math.MaxInt64)
	k := 0
	for ; k < min(e.n, recentMax); k++ {
		i := e.at(e.n - 1 - k)
		if k >= recentMin && now-e.t[i] > recentWindow {
			break
		}
		mu, mw = min(mu, e.ud[i]), min(mw, e.wd[i])
	}
	if k == 0 {
		return allowed{}, false
	}
	// Floors whose sum is below zero cannot both be the path's: the clock
	// stepped among these samples (a jump not yet confirmed), and they
	// bound nothing.
	if mu+mw < 0 {
		return allowed{}, false
	}
	span := now - e.t[e.at(e.n-k)]
	tilt := int64(3*e.boundSE()*float64(max(span, e.span()))) + int64(20*time.Microsecond)
	return allowed{-mw - tilt, mu + tilt}, true
}

// driftTilt bounds how far the drift's error tilts the detrended floors
// over the window: three standard errors over half its span.
func (e *Estimator) driftTilt() int64 {
	if e.n < 2 {
		return 0
	}
	return int64(3 * e.boundSE() * float64(e.span()) / 2)
}

// tiltBeyond is what a drift error of se adds to the window's tilt beyond
// the drift's own (driftTilt): 0 unless se is the larger.
func (e *Estimator) tiltBeyond(se float64) int64 {
	if b := e.boundSE(); se > b && e.n >= 2 {
		return int64(3 * (se - b) * float64(e.span()) / 2)
	}
	return 0
}

// softExcess estimates, from the 16 lowest of the window's values in
// order, how far the lowest sits above the true floor when the density
// thins out toward it (a soft floor: triangular, normal, measured radio
// delays), where the lowest values' spacing understates it. With F(x) ∝
// (x − floor)^β near the floor the k-th lowest sits about (k/n)^(1/β) above
// it, so the ratio of the 16th's and 8th's gap to the 8th's and 1st's tells
// β (8/7 for β = 1, a finite density; 0.64 for β = 2; 0.52 for β = 3), and
// the 16th's distance from the lowest, divided by 16^(1/β) − 1, the
// lowest's excess. β is read continuously between 1 and 3: a ratio this
// noisy, from 16 values, that crosses a threshold between classes made the
// bound jump by a factor of three from one sample to the next (random:1767
// on a 5G uplink: 0.78ms of error under a bound flipping between 1.7 and
// 0.7ms). On a finite density (β ≤ 1) it returns 0: the spacing covers it.
func softExcess(low [16]int64) int64 {
	const k = len(low)
	lo, mid, hi := low[0], low[k/2-1], low[k-1]
	if mid <= lo {
		return 0
	}
	r := float64(hi-mid) / float64(mid-lo)
	g := &softGrid
	if r >= g[len(g)-1].r {
		return 0
	}
	d := g[0].d
	for j := 1; j < len(g); j++ {
		if r < g[j].r {
			if r > g[j-1].r {
				f := (r - g[j-1].r) / (g[j].r - g[j-1].r)
				d = g[j-1].d + f*(g[j].d-g[j-1].d)
			}
			break
		}
	}
	return int64(float64(hi-lo) / d)
}

// softGrid tabulates, for 1/β from 1/3 to 1, the gap ratio r that
// softExcess sees and the divisor d = 16^(1/β) − 1 that turns the 16th's
// distance from the lowest into the lowest's excess.
var softGrid = func() (g [17]struct{ r, d float64 }) {
	for j := range g {
		a := 1.0/3 + float64(j)*(2.0/3)/float64(len(g)-1)
		e8, e16 := math.Pow(8, a), math.Pow(16, a)
		g[j].r, g[j].d = (e16-e8)/(e8-1), e16-1
	}
	return g
}()

// lowest fills low, in order, with the lowest of the window's values of
// vals, but those held out below a floor, and returns how many it filled
// (fewer than len(low) only with fewer values).
func (e *Estimator) lowest(vals, low []int64) int {
	k, m := len(low), 0
	// Not the samples held out below a floor: they may be a jump's, and
	// their spacing its size.
	n := e.n - max(e.belowU, e.belowW)
	if n < 2 {
		n = e.n
	}
	// The window is one or two runs of the ring.
	first := min(n, len(vals)-e.head)
	for _, run := range [2][]int64{vals[e.head : e.head+first], vals[:n-first]} {
		for _, v := range run {
			if m < k {
				low[m] = v
				m++
			} else if v < low[k-1] {
				low[k-1] = v
			} else {
				continue
			}
			for q := m - 1; q > 0 && low[q] < low[q-1]; q-- {
				low[q], low[q-1] = low[q-1], low[q]
			}
		}
	}
	return m
}
