package clocksync

import (
	"math"
	"slices"
)

// A slew shorter than the acquisition that follows its start ends before
// detectReturn may look: that test waits for the acquisition and for 28 s
// of bins at the slew's rate, and detectKink for 32 s of them. A daemon's
// kernel slew of a few milliseconds at 500 ppm lasts seconds
// (corporate-vpn: −500 ppm for 20 s, seen 7 s in), and the drift fitted
// through its end, one line over the bins since the shift, came back to
// the clock's rate over two minutes (3 ms of error). So does a slew whose
// start was read as a step: the drift history goes with the jump, and the
// bins since are all the fit has. detectStop fits the bins since such a
// restart with the rate changing once, at any moment, to the one the
// clock ran at before it (stopTo), against one rate throughout: the end
// of a slew bends both directions at one moment to a rate known
// beforehand, which a queue on one side does not do.

// stopBefore and stopAfter are how many bins each direction must have
// before and after the moment the rate is tried changing at.
const (
	stopBefore = 2
	stopAfter  = 3
)

// stopGrid is the most moments tried for the change.
const stopGrid = 500

// stopFit is the hinged fit of the bins since a restart: each direction's
// minima y = c + s·min(x, tc) + to·max(0, x − tc), or y = c + s·x (tc at
// infinity), with an intercept c per direction and path segment, weighted
// by each direction's scatter.
type stopFit struct {
	xs, ys [2][]float64 // time (s since t0) and minimum (s), per direction
	ends   [2][]int     // where each path segment's points end, per direction
	wt     [2]float64   // 1/scatter², per direction
	res    [2][]float64 // the last fit's residuals, per direction
	dev    []float64    // scatter's scratch
}

// fill reads the bins since the restart; false where a direction has too
// few of them.
func (f *stopFit) fill(e *Estimator) bool {
	for dir := range 2 {
		f.xs[dir], f.ys[dir], f.ends[dir] = f.xs[dir][:0], f.ys[dir][:0], f.ends[dir][:0]
		seg := 0
		for k := range e.binN {
			y, t, sg, skip := e.binFloor(dir, k)
			if skip {
				continue
			}
			if n := len(f.xs[dir]); n > 0 && sg != seg {
				f.ends[dir] = append(f.ends[dir], n)
			}
			seg = sg
			f.xs[dir] = append(f.xs[dir], float64(t-e.t0)/1e9)
			f.ys[dir] = append(f.ys[dir], y)
		}
		f.ends[dir] = append(f.ends[dir], len(f.xs[dir]))
		if len(f.xs[dir]) < stopBefore+stopAfter+1 {
			return false
		}
		sc := f.scatter(dir)
		f.wt[dir] = 1 / (sc * sc)
	}
	return true
}

// scatter measures direction dir's scatter about whatever rates it holds:
// each minimum's distance from the line through its neighbours on its
// path segment, a difference a slope and a single change of it leave
// alone (but at the change), normalised and taken by the median, never
// under returnNoiseMin.
func (f *stopFit) scatter(dir int) float64 {
	xs, ys := f.xs[dir], f.ys[dir]
	f.dev = f.dev[:0]
	from := 0
	for _, end := range f.ends[dir] {
		for k := from + 1; k+1 < end; k++ {
			span := xs[k+1] - xs[k-1]
			if span <= 0 {
				continue
			}
			b := (xs[k] - xs[k-1]) / span
			a := 1 - b
			f.dev = append(f.dev, math.Abs(ys[k]-a*ys[k-1]-b*ys[k+1])/math.Sqrt(1+a*a+b*b))
		}
		from = end
	}
	if len(f.dev) == 0 {
		return returnNoiseMin
	}
	return max(spreadOf(f.dev)*math.Sqrt(1+1.25*1.25/float64(len(f.dev))), returnNoiseMin)
}

// spreadOf is the standard deviation a normal scatter with these absolute
// deviations would have: 1.4826 times their median. It sorts dev.
func spreadOf(dev []float64) float64 {
	slices.Sort(dev)
	n := len(dev)
	return 1.4826 * ((dev[(n-1)/2] + dev[n/2]) / 2)
}

// chi fits the model with the change at tc to rate to (none for tc at
// +Inf) and returns each direction's chi-square, the common slope before
// tc and its standard error.
func (f *stopFit) chi(tc, to float64) (chi [2]float64, s, se float64) {
	m := func(x float64) float64 { return min(x, tc) }
	y := func(dir, k int) float64 { return f.ys[dir][k] - to*max(0, f.xs[dir][k]-tc) }
	var sxy, sxx float64
	for dir := range 2 {
		from := 0
		for _, end := range f.ends[dir] {
			mm, my := f.means(dir, from, end, m, y)
			for k := from; k < end; k++ {
				dm := m(f.xs[dir][k]) - mm
				sxy += f.wt[dir] * dm * (y(dir, k) - my)
				sxx += f.wt[dir] * dm * dm
			}
			from = end
		}
	}
	if sxx <= 0 {
		return [2]float64{math.Inf(1), math.Inf(1)}, 0, math.Inf(1)
	}
	s, se = sxy/sxx, 1/math.Sqrt(sxx)
	for dir := range 2 {
		f.res[dir] = f.res[dir][:0]
		from := 0
		for _, end := range f.ends[dir] {
			mm, my := f.means(dir, from, end, m, y)
			for k := from; k < end; k++ {
				r := y(dir, k) - my - s*(m(f.xs[dir][k])-mm)
				f.res[dir] = append(f.res[dir], r)
				chi[dir] += f.wt[dir] * r * r
			}
			from = end
		}
	}
	return chi, s, se
}

// widen raises each direction's scatter to at least the spread of the
// last fit's residuals (by their median, for the fitted parameters): a
// queue whose level wanders over many bins moves neighbours alike, which
// the neighbours' differences do not see (random:1791 seed 2, a queue of
// τ 17 s, took a long slew's first bins for a short one's end).
func (f *stopFit) widen() {
	for dir := range 2 {
		f.dev = f.dev[:0]
		for _, r := range f.res[dir] {
			f.dev = append(f.dev, math.Abs(r))
		}
		n := len(f.dev)
		if n <= len(f.ends[dir])+1 {
			continue
		}
		sc := spreadOf(f.dev) * math.Sqrt(float64(n)/float64(n-len(f.ends[dir])-1))
		f.wt[dir] = min(f.wt[dir], 1/(sc*sc))
	}
}

// means returns the mean of m(x) and of y over direction dir's points
// [from, end).
func (f *stopFit) means(dir, from, end int, m func(float64) float64, y func(int, int) float64) (mm, my float64) {
	n := float64(end - from)
	for k := from; k < end; k++ {
		mm += m(f.xs[dir][k]) / n
		my += y(dir, k) / n
	}
	return mm, my
}

// detectStop looks, once per bin until detectReturn and detectKink can
// (the acquisition after a clock shift, or 32 s after a jump that dropped
// the drift history), for the clock's rate having gone back to stopTo
// since, and takes it for a rate change when it has on returnRun bins in
// a row, as detectReturn does. The rate the slew ran at, fitted on the
// bins before the change, becomes the one a slew that starts again may
// take up.
func (e *Estimator) detectStop() Event {
	if e.driftHold > 0 || e.belowU > 0 || e.belowW > 0 || e.binN < 2*(stopBefore+stopAfter) {
		e.stops = 0
		return EventNone
	}
	f := &e.stop
	if !f.fill(e) {
		e.stops = 0
		return EventNone
	}
	first := max(f.xs[0][stopBefore-1], f.xs[1][stopBefore-1])
	last := min(f.xs[0][len(f.xs[0])-stopAfter], f.xs[1][len(f.xs[1])-stopAfter])
	best, bestChi := math.Inf(1), math.Inf(1)
	// (Bins far apart, of pings minutes apart, would make the grid long:
	// it never has more than stopGrid moments.)
	step := max(returnStep, (last-first)/stopGrid)
	for tc := first; tc < last; tc += step {
		if c, _, _ := f.chi(tc, e.stopTo); c[0]+c[1] < bestChi {
			best, bestChi = tc, c[0]+c[1]
		}
	}
	if math.IsInf(best, 1) {
		e.stops = 0
		return EventNone
	}
	f.chi(best, e.stopTo)
	f.widen()
	none, rate, rateSE := f.chi(math.Inf(1), 0)
	hinged, slew, slewSE := f.chi(best, e.stopTo)
	bestChi = hinged[0] + hinged[1]
	points := float64(len(f.xs[0]) + len(f.xs[1]))
	// Far better than one rate throughout, in each direction by itself
	// (a queue that drains on one side bends that side alone), as well
	// as the scatter allows (its 99.9th percentile), and a change the
	// rates' errors tell apart from none.
	gain := none[0] + none[1] - bestChi
	if gain < returnSigmas*returnSigmas ||
		none[0]-hinged[0] < returnContra || none[1]-hinged[1] < returnContra ||
		bestChi > points+3.1*math.Sqrt(2*points)+6 ||
		math.Abs(slew-e.stopTo) <= kinkSlack/2 ||
		math.Abs(rate-e.stopTo) <= returnSigmas*math.Hypot(rateSE, e.stopToSE) {
		e.stops = 0
		return EventNone
	}
	e.stops++
	if e.stops < returnRun && gain < returnSure*returnSure {
		return EventNone
	}
	since := e.t0 + int64(best*1e9)
	span := 0
	for span < e.n && e.t[e.at(e.n-1-span)] >= since {
		span++
	}
	if span < 2 || !e.roundTripHeld(span) || !e.keepsShortest(span) || !e.bendExplains(e.stopTo, span, since) {
		return EventNone
	}
	e.stops = 0
	e.rateShift(span, e.stopTo, true, 0, 0)
	e.before, e.beforeSE, e.beforeOK = slew, slewSE, true
	e.stopTo, e.stopToSE = slew, slewSE
	return EventClockShift
}

// keepsShortest reports whether the newest span samples, all the window
// keeps once the rate is taken back, hold a round trip as short as the
// whole window's, within the jitter's reach: a route that flapped up since
// the restart lifted the span's floors, and the floors taken afresh from
// it alone took the flap into the offset (random:12219 seed 4: 4.9 ms).
func (e *Estimator) keepsShortest(span int) bool {
	return span < e.n && e.roundTripAsIn(0, span)
}
