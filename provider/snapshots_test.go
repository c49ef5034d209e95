package provider

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/netclock/netclock/nettime"
)

// The window rule (needWindow.windowDelay); TestNeedWindowFollowsLevel
// tests when delay takes the level rule instead.
func TestNeedWindowDelay(t *testing.T) {
	// At 60 snapshots a second, the share allowed is halved where the
	// tail's scale (mean excess) is under 12.5ms (lightTail intervals),
	// divided by 12.5ms / scale where it is between 6.25 and 12.5ms, and
	// kept where it is longer.
	const interval = time.Second / 60
	light := lightTail * float64(interval)
	tests := []struct {
		name   string
		needs  func(i int) time.Duration // the i-th of 1000 frames
		starve float64
		want   time.Duration // before interpMargin
	}{
		{"steady", constant(30 * ms), 0.01, 30 * ms},
		// Every 100th frame needs 100ms: 1% of them. The tail beyond the
		// 1 − 5 × starve quantile (20ms) is taken as exponential with its
		// mean excess: 10 of 100 frames 80ms above it for 2% (8ms: the
		// share is divided by 12.5/8), 10 of 25 for 0.5% (32ms: a long
		// tail, the share as is), times ln 5.
		{"a 1% tail, 2% allowed", every(100, 100*ms, 20*ms), 0.02, 20*ms + lnTimes(5*light/float64(8*ms), 8*ms)},
		{"a 1% tail, 0.5% allowed", every(100, 100*ms, 20*ms), 0.005, 20*ms + lnTimes(5, 32*ms)},
		// The threshold never goes below the median: with 12% allowed, the
		// tail is taken from the median on (10 of 500 frames 80ms above
		// it: 1.6ms, short: half the share), times ln(2 × 0.5/0.12).
		{"a 1% tail, 12% allowed", every(100, 100*ms, 20*ms), 0.12, 20*ms + lnTimes(2*0.5/0.12, 1600*time.Microsecond)},
		// The last 10 frames need 60ms: 1% of the window, in its tail
		// (10 of the 50 beyond the 95th percentile, 40ms above it).
		{"a fresh step up is in the tail", from(990, 60*ms, 20*ms), 0.01, 20*ms + lnTimes(5*light/float64(8*ms), 8*ms)},
		// The last 200: the newest quarter's median is 40ms above the
		// window's, and the tail already holds the step: it counts twice
		// until the window's median moves.
		{"a step up counts from the newest quarter's median", from(800, 60*ms, 20*ms), 0.01, 100 * ms},
		// 0.1ms more each frame: the tail (the 95th percentile, frame
		// 949: 94.9ms, and the 50 frames beyond it, 2.55ms above on
		// average: short, half the share), the newest quarter's median
		// above the window's (frames 874 and 499: 37.5ms) and the rise of
		// the medians of the last three runs of 128 (frames 679, 807,
		// 935: 12.8ms each).
		{"a ramp", func(i int) time.Duration { return time.Duration(i) * ms / 10 }, 0.01,
			94900*time.Microsecond + lnTimes(10, 2550*time.Microsecond) + 37500*time.Microsecond + 12800*time.Microsecond},
		// One rise of the median is a step, not a ramp; the newest
		// quarter's median has not moved.
		{"a step is not a ramp", from(900, 60*ms, 20*ms), 0.01, 60 * ms},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newNeedWindow(1000)
			for i := range 1000 {
				w.add(tc.needs(i), 0)
			}
			if diff := cmp.Diff(tc.want+interpMargin, windowRule(&w, tc.starve, interval), nanos); diff != "" {
				t.Errorf("delay (-want +got):\n%s", diff)
			}
		})
	}
}

// Aiming lower where the tail is short costs at most lightTail/e of a
// snapshot interval (at a scale of lightTail/e intervals), and nothing
// where the tail is long.
func TestNeedWindowLowerAimCost(t *testing.T) {
	const interval = time.Second / 60
	light := lightTail * float64(interval)
	bound := time.Duration(light / math.E)
	var most time.Duration
	for h := ms; h <= 400*ms; h += ms / 2 {
		w := newNeedWindow(1000)
		for i := range 1000 {
			w.add(every(100, 20*ms+h, 20*ms)(i), 0) // scale: h/5 beyond the 95th percentile
		}
		cost := tailOf(&w, 1000, 0.009, interval) - tailOf(&w, 1000, 0.009, 0)
		if cost < 0 || cost > bound+4 {
			t.Errorf("tail of height %v: aiming lower cost %v, want within [0, %v]", h, cost, bound)
		}
		if float64(h/5) >= light && cost != 0 {
			t.Errorf("tail of scale %v, long: cost %v, want 0", h/5, cost)
		}
		most = max(most, cost)
	}
	if most < bound*9/10 {
		t.Errorf("the largest cost %v is not near the bound %v: the sweep missed the costly scales", most, bound)
	}
}

// lnTimes returns d × ln m.
func lnTimes(m float64, d time.Duration) time.Duration {
	return time.Duration(float64(d) * math.Log(m))
}

// The tail of needs made by bursts of lost snapshots, estimated as an
// exponential beyond five times the share allowed, wanders less from one
// window to the next than the quantile itself, which rests on a handful
// of bursts.
func TestNeedWindowTailWandersLess(t *testing.T) {
	const (
		tick    = time.Second / 60
		size    = 4096
		windows = 40
		starve  = 0.009
	)
	r := rand.New(rand.NewPCG(1, 2))
	var tails, quantiles []float64
	w := newNeedWindow(size)
	lost := 0 // snapshots lost in a row so far
	for i := range size * windows {
		// Frames at 60 per second, jitter of 20ms, a burst of losses
		// (4 snapshots on average) starting at 0.5% of them.
		if lost > 0 && r.Float64() < 0.25 {
			lost = 0
		} else if lost > 0 || r.Float64() < 0.005 {
			lost++
		}
		w.add(80*ms+time.Duration(r.Float64()*float64(20*ms))+time.Duration(lost)*tick, 0)
		if (i+1)%size == 0 {
			tails = append(tails, float64(tailOf(&w, size, starve, 0))) // the estimate alone: no lowering
			quantiles = append(quantiles, float64(w.quantile(0, size, 1-starve)))
		}
	}
	st, sq := stddev(tails), stddev(quantiles)
	t.Logf("sd over %d windows: tail %.2fms, quantile %.2fms", windows, st/1e6, sq/1e6)
	if st > 0.8*sq {
		t.Errorf("the tail estimate wanders by %.2fms, the quantile by %.2fms: want under 80%%", st/1e6, sq/1e6)
	}
}

func stddev(v []float64) float64 {
	var sum, sq float64
	for _, x := range v {
		sum += x
	}
	mean := sum / float64(len(v))
	for _, x := range v {
		sq += (x - mean) * (x - mean)
	}
	return math.Sqrt(sq / float64(len(v)))
}

// every returns d for every n-th frame, else base.
func every(n int, d, base time.Duration) func(int) time.Duration {
	return func(i int) time.Duration {
		if i%n == n-1 {
			return d
		}
		return base
	}
}

// from returns d from frame k on, else base.
func from(k int, d, base time.Duration) func(int) time.Duration {
	return func(i int) time.Duration {
		if i >= k {
			return d
		}
		return base
	}
}

func TestAdaptiveSizesInterpFromNeeds(t *testing.T) {
	const tick = time.Second / 60
	// 20 silences of 1..5 ticks in 2400 frames: 100 needs above 50ms, in
	// the 108 beyond the 1 − 5 × 0.9% quantile (50ms), 20 × 15 ticks
	// above it in all; the tail is their mean excess times ln 5.
	shortSilenceTail := lnTimes(5, 20*15*tick/108)
	e := Estimate{Valid: true, Uplink: 20 * ms, Downlink: 30 * ms}
	frame := func(need, silence time.Duration) InterpFrame { return InterpFrame{Need: need, Silence: silence} }
	type step struct {
		n      int
		frame  func(i int) InterpFrame
		source InterpSource
		client time.Duration
	}
	steady := func(int) InterpFrame { return frame(50*ms, 0) }
	tests := []struct {
		name  string
		steps []step
	}{
		{"from the delays until 256 frames", []step{
			{255, steady, InterpFromDelays, tick}, // the downlink's quantile (its floor) + a snapshot interval
			{1, steady, InterpFromNeeds, 20*ms + interpMargin},
		}},
		// 1.2s without a snapshot: the frames of the outage are left out,
		// those before it was 250ms long too.
		{"an outage does not count", []step{
			{300, steady, InterpFromNeeds, 20*ms + interpMargin},
			{72, func(i int) InterpFrame { return frame(50*ms+time.Duration(i)*tick, time.Duration(i)*tick) }, InterpFromNeeds, 20*ms + interpMargin},
			{300, steady, InterpFromNeeds, 20*ms + interpMargin},
		}},
		// 100ms without a snapshot, every 2s: lost snapshots to cover.
		{"a short silence counts", []step{
			{2400, func(i int) InterpFrame {
				if k := i % 120; k < 6 {
					return frame(50*ms+time.Duration(k)*tick, time.Duration(k)*tick)
				}
				return steady(i)
			}, InterpFromNeeds, 20*ms + shortSilenceTail + interpMargin},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := NewAdaptive(AdaptiveConfig{})
			for i := range 20 {
				a.ObserveSample(sampleWith(time.Duration(i)*100*ms, 0, 20*ms, 30*ms), e)
			}
			for j, st := range tc.steps {
				for i := range st.n {
					a.ObserveInterpFrame(st.frame(i), e)
				}
				_, client := a.Buffers(tick)
				if diff := cmp.Diff([]any{st.source, st.client}, []any{a.Interp(), client}, nanos); diff != "" {
					t.Errorf("step %d: source, client buffer (-want +got):\n%s", j, diff)
				}
			}
		})
	}
}

func TestAdaptiveInterpWindowValidation(t *testing.T) {
	for _, w := range []int{-1, minInterpNeeds - 1, MaxInterpWindow + 1} {
		if _, err := NewAdaptive(AdaptiveConfig{InterpWindow: w}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("InterpWindow %d: error = %v, want ErrInvalidConfig", w, err)
		}
	}
}

func TestAdaptiveInterpDoesNotAllocate(t *testing.T) {
	a, _ := NewAdaptive(AdaptiveConfig{})
	i := 0
	allocs := testing.AllocsPerRun(5000, func() {
		i++
		a.ObserveInterpFrame(InterpFrame{Need: time.Duration(i%13) * ms}, Estimate{Valid: true})
		a.Buffers(16 * ms)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per frame, want 0", allocs)
	}
}

// framesPolicy records the frames a Steered hands it.
type framesPolicy struct {
	FixedBuffers
	frames []InterpFrame
}

func (p *framesPolicy) ObserveInterpFrame(f InterpFrame, _ Estimate) { p.frames = append(p.frames, f) }

// The need handed for a frame counts the snapshots received before it
// advanced, and at its clock reading (read at the start of the frame),
// not those received after.
func TestSteeredHandsInterpFrames(t *testing.T) {
	pol := &framesPolicy{}
	c, clk := newTestClient(t, SteeredConfig{Buffers: pol})
	c.SetEstimate(Estimate{Valid: true, Offset: time.Second}) // server = client + 1s
	p, s := nettime.New(rate, 0), nettime.New(rate, 0)
	c.InitializeClient(&p, &s) // at 5s
	at := func(d time.Duration) nettime.Time { return nettime.New(rate, d) }
	advance := func(to time.Duration) {
		clk.now = to
		c.AdvanceTime(&p, &s, 0)
	}

	advance(5010 * ms)                // frame 1: no snapshot yet
	c.ObserveSnapshot(at(5960 * ms))  // read in frame 1
	c.ObserveSnapshot(at(5950 * ms))  // an older one, reordered
	c.ObserveSnapshot(nettime.Time{}) // ignored
	advance(5020 * ms)                // frame 2: hands frame 1's
	advance(5030 * ms)                // frame 3: hands frame 2's
	clk.now = 5035 * ms               // between frames
	c.ObserveSnapshot(at(5990 * ms))  // for frame 4 on
	advance(5040 * ms)                // frame 4: hands frame 3's
	advance(5050 * ms)                // hands frame 4's
	// Frames of 10ms: the buffers may move 2.5% of each (MaxMove).
	const move = 250 * time.Microsecond
	want := []InterpFrame{
		{Need: 6010*ms - 5960*ms, Silence: 0, MaxMove: move},
		{Need: 6020*ms - 5960*ms, Silence: 10 * ms, MaxMove: move},
		{Need: 6030*ms - 5960*ms, Silence: 20 * ms, MaxMove: move},
		{Need: 6040*ms - 5990*ms, Silence: 5 * ms, MaxMove: move},
	}
	if diff := cmp.Diff(want, pol.frames); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}

	// A reinitialization (a restarted server) forgets the snapshots.
	c.InitializeClient(&p, &s)
	pol.frames = nil
	advance(5060 * ms)
	advance(5070 * ms)
	if len(pol.frames) != 0 {
		t.Errorf("frames %v after InitializeClient without a snapshot, want none", pol.frames)
	}
}

// selectRank agrees with sorting and taking the rank, whatever the order
// and the duplicates.
func TestSelectRank(t *testing.T) {
	for n := 1; n <= 70; n++ {
		for _, q := range []float64{0, 0.01, 0.5, 0.9, 0.992, 1} {
			v := make([]time.Duration, n)
			for i := range v {
				v[i] = time.Duration((i*7919)%(n/2+1)) * ms // duplicates, shuffled
			}
			sorted := slices.Clone(v)
			slices.Sort(sorted)
			if got, want := selectRank(v, q), sortedRank(sorted, q); got != want {
				t.Fatalf("n %d q %v: selectRank = %v, want %v", n, q, got, want)
			}
		}
	}
}

// A stamp an hour past the server's clock (a corrupt or hostile one) is
// not the newest snapshot: the needs that follow come from real ones.
func TestSteeredIgnoresStampsFromTheFuture(t *testing.T) {
	pol := &framesPolicy{}
	c, clk := newTestClient(t, SteeredConfig{Buffers: pol})
	c.SetEstimate(Estimate{Valid: true, Offset: time.Second}) // server = client + 1s
	p, s := nettime.New(rate, 0), nettime.New(rate, 0)
	c.InitializeClient(&p, &s) // at 5s
	at := func(d time.Duration) nettime.Time { return nettime.New(rate, d) }
	advance := func(to time.Duration) {
		clk.now = to
		c.AdvanceTime(&p, &s, 0)
	}
	advance(5010 * ms)
	c.ObserveSnapshot(at(5960 * ms))
	c.ObserveSnapshot(at(6010*ms + time.Hour))
	advance(5020 * ms)
	want := []InterpFrame{{Need: 6010*ms - 5960*ms, MaxMove: 250 * time.Microsecond}}
	if diff := cmp.Diff(want, pol.frames); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
}

// tailOf is needWindow.tail of the newest n needs.
func tailOf(w *needWindow, n int, starve float64, interval time.Duration) time.Duration {
	w.fill(w.ring, n)
	return w.tail(n, starve, interval)
}

// windowRule is the window rule's delay (the rule delay takes unless the
// level rule is evidently cheaper) over the whole window.
func windowRule(w *needWindow, starve float64, interval time.Duration) time.Duration {
	w.since = 0
	w.fill(w.ring, w.n)
	return w.windowDelay(w.tail(w.n, starve, interval)) + interpMargin
}

// frameMove is how far a Steered's buffers move in a frame at 60 frames a
// second by default (MaxScaleDeviation/2 of it).
const frameMove = time.Second / 60 * 25 / 1000

// Where the needs' level wanders, delay follows it (the level rule) and
// costs less than the window rule at no more starvation; where the level
// is steady, delay is the window rule's. (The window rule would fail the
// first case: it pays for the crests all the time.)
func TestNeedWindowFollowsLevel(t *testing.T) {
	const (
		interval = time.Second / 60
		size     = 4096
		frames   = 3 * size
		starve   = 0.009
	)
	jitter := func(seed uint64) func(int) time.Duration {
		r := rand.New(rand.NewPCG(seed, 7))
		return func(int) time.Duration { return time.Duration(r.ExpFloat64() * float64(2*ms)) }
	}
	tests := []struct {
		name  string
		level func(i int) time.Duration // the needs' level at frame i
		// follows: delay takes the level rule at the end; saves: by at
		// least this much mean delay over the frames from size on.
		follows bool
		saves   time.Duration
	}{
		// A queue filling and draining by ±40ms over 20 s: the window
		// rule pays for the crests all the time.
		{"a wandering level", func(i int) time.Duration {
			return 60*ms + time.Duration(40*float64(ms)*math.Sin(2*math.Pi*float64(i)/1200))
		}, true, 20 * ms},
		{"a steady level", constant(60 * ms), false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, old := newNeedWindow(size), newNeedWindow(size)
			j := jitter(1)
			var d, dOld, sum, sumOld time.Duration
			var starved, starvedOld, n int
			for i := range frames {
				need := tc.level(i) + j(i)
				if i >= size {
					n++
					sum, sumOld = sum+d, sumOld+dOld
					if need > d {
						starved++
					}
					if need > dOld {
						starvedOld++
					}
				}
				w.add(need, frameMove)
				old.add(need, frameMove)
				// As Adaptive: the delay every solveEvery frames, the
				// level followed every frame between.
				if i >= minInterpNeeds && i%solveEvery == 0 {
					d, dOld = w.delay(starve, interval), windowRule(&old, starve, interval)
				} else if f, ok := w.follow(); ok {
					d = f
				}
			}
			mean, meanOld := sum/time.Duration(n), sumOld/time.Duration(n)
			share, shareOld := float64(starved)/float64(n), float64(starvedOld)/float64(n)
			t.Logf("delay: mean %v, starved %.2f%%; window rule: mean %v, starved %.2f%%", mean, 100*share, meanOld, 100*shareOld)
			if w.level != tc.follows {
				t.Errorf("follows the level: %v, want %v", w.level, tc.follows)
			}
			if !tc.follows && (mean != meanOld || starved != starvedOld) {
				t.Errorf("delay differs from the window rule: mean %v, %d starved; want %v, %d", mean, starved, meanOld, starvedOld)
			}
			if tc.follows && (meanOld-mean < tc.saves || share > max(shareOld, starve)) {
				t.Errorf("the level rule saved %v at %.2f%% starved, want at least %v at no more than %.2f%%",
					meanOld-mean, 100*share, tc.saves, 100*max(shareOld, starve))
			}
		})
	}
}

// BenchmarkAdaptiveInterpFrame is the cost of one frame's need with a
// full window, the delay taken again every solveEvery frames included.
func BenchmarkAdaptiveInterpFrame(b *testing.B) {
	a, _ := NewAdaptive(AdaptiveConfig{})
	r := rand.New(rand.NewPCG(1, 2))
	for range DefaultInterpWindow {
		a.ObserveInterpFrame(InterpFrame{Need: 50*ms + time.Duration(r.ExpFloat64()*float64(5*ms))}, Estimate{Valid: true})
	}
	b.ReportAllocs()
	for b.Loop() {
		a.ObserveInterpFrame(InterpFrame{Need: 50*ms + time.Duration(r.ExpFloat64()*float64(5*ms))}, Estimate{Valid: true})
	}
}

// Between delays, the level rule's delay moves with the level every
// frame: a step up of the needs counts once it is most of the newest
// levelRun frames, not at the next solve.
func TestNeedWindowFollowsTheLevelEveryFrame(t *testing.T) {
	const interval = time.Second / 60
	w := newNeedWindow(4096)
	level := func(i int) time.Duration {
		return 60*ms + time.Duration(40*float64(ms)*math.Sin(2*math.Pi*float64(i)/1200))
	}
	r := rand.New(rand.NewPCG(3, 7))
	const frames = 8192
	var d time.Duration
	for i := range frames {
		w.add(level(i)+time.Duration(r.ExpFloat64()*float64(2*ms)), frameMove)
		if i >= minInterpNeeds && (i+1)%solveEvery == 0 {
			d = w.delay(0.009, interval)
		}
	}
	if !w.level {
		t.Fatal("the level rule is not in use after a wandering level")
	}
	if f, _ := w.follow(); f != d {
		t.Fatalf("follow right after delay: %v, want %v", f, d)
	}
	now := level(frames)
	for i := range levelRun/2 + 1 {
		w.add(now+50*ms, frameMove)
		f, ok := w.follow()
		if !ok {
			t.Fatalf("frame %d after the step: the level rule is no longer in use", i)
		}
		if i == levelRun/2 && f-d < 40*ms {
			t.Errorf("%d frames into a 50ms step up: delay %v, %v above the last solve's; want at least 40ms", i+1, f, f-d)
		}
	}
}

// A level rule that starves in the shadow more than allowed (a step up
// faster than the buffer may follow) is not followed again: the delay is
// the window rule's from then on.
func TestNeedWindowBarsALevelThatStarved(t *testing.T) {
	const (
		interval = time.Second / 60
		starve   = 0.009
	)
	w, old := newNeedWindow(4096), newNeedWindow(4096)
	r := rand.New(rand.NewPCG(5, 7))
	var followed bool
	for i := range 3 * 4096 {
		need := 60*ms + time.Duration(40*float64(ms)*math.Sin(2*math.Pi*float64(i)/1200)) + time.Duration(r.ExpFloat64()*float64(2*ms))
		if i >= 6000 && i < 6100 {
			need += 200 * ms // 100 frames, 2.4% of the window
		}
		w.add(need, frameMove)
		old.add(need, frameMove)
		if i < minInterpNeeds || (i+1)%solveEvery != 0 {
			continue
		}
		d, dOld := w.delay(starve, interval), windowRule(&old, starve, interval)
		switch {
		case i < 6000:
			followed = followed || w.level
		case i >= 6100 && (!w.barred || w.level || d != dOld):
			t.Fatalf("frame %d, after the step: barred %v, follows %v, delay %v; want barred, the window rule's %v", i, w.barred, w.level, d, dOld)
		}
	}
	if !followed {
		t.Error("the level rule was not followed before the step")
	}
}

// Adaptive.Interp says when the level rule is in use.
func TestAdaptiveReportsTheLevelRule(t *testing.T) {
	e := Estimate{Valid: true, Uplink: 20 * ms, Downlink: 30 * ms}
	tests := []struct {
		name  string
		level func(i int) time.Duration
		want  InterpSource
	}{
		{"a wandering level", func(i int) time.Duration {
			return 60*ms + time.Duration(40*float64(ms)*math.Sin(2*math.Pi*float64(i)/1200))
		}, InterpFromLevel},
		{"a steady level", constant(60 * ms), InterpFromNeeds},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := NewAdaptive(AdaptiveConfig{})
			r := rand.New(rand.NewPCG(1, 7))
			for i := range 3 * DefaultInterpWindow {
				need := tc.level(i) + time.Duration(r.ExpFloat64()*float64(2*ms))
				a.ObserveInterpFrame(InterpFrame{Need: need, MaxMove: frameMove}, e)
			}
			if got := a.Interp(); got != tc.want {
				t.Errorf("Interp() = %v, want %v", got, tc.want)
			}
		})
	}
}
