package provider

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/netclock/netclock/nettime"
)

const ms = time.Millisecond

func TestArrivalWindow(t *testing.T) {
	tests := []struct {
		name    string
		margins []time.Duration
		want    Feedback
	}{
		{"empty", nil, Feedback{}},
		{"one late", []time.Duration{-2 * ms}, Feedback{Total: 1, Count: 1, Late: 1, P1: -2 * ms, P5: -2 * ms, P50: -2 * ms}},
		{"zero is on time", []time.Duration{0, 5 * ms}, Feedback{Total: 2, Count: 2, P1: 0, P5: 0, P50: 0}},
		{"1..100 ms", seq(1, 100), Feedback{Total: 100, Count: 100, P1: 1 * ms, P5: 5 * ms, P50: 50 * ms}},
		// 200 arrivals: the window keeps the last 128 (73..200 ms).
		{"window", seq(1, 200), Feedback{Total: 200, Count: FeedbackWindow, P1: 74 * ms, P5: 79 * ms, P50: 136 * ms}},
		{"late ones", append(seq(-3, 96), 0), Feedback{Total: 101, Count: 101, Late: 3, P1: -2 * ms, P5: 1 * ms, P50: 46 * ms}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var w ArrivalWindow
			for _, m := range tc.margins {
				w.Add(m)
			}
			if diff := cmp.Diff(tc.want, w.Feedback()); diff != "" {
				t.Errorf("Feedback (-want +got):\n%s", diff)
			}
		})
	}
}

// seq returns from..to milliseconds.
func seq(from, to int) []time.Duration {
	var s []time.Duration
	for i := from; i <= to; i++ {
		s = append(s, time.Duration(i)*ms)
	}
	return s
}

// sampleWith returns a ping sample sent at client time t1 over a link with
// the given one-way delays, the server clock being the client clock plus
// offset, and the server holding the ping 1ms.
func sampleWith(t1, offset, up, down time.Duration) Sample {
	t2 := t1 + offset + up
	return Sample{ClientSend: t1, ServerReceive: t2, ServerSend: t2 + ms, ClientReceive: t1 + up + ms + down}
}

func TestAdaptiveSizesFromDelays(t *testing.T) {
	const tick = time.Second / 60
	e := Estimate{Valid: true, Offset: 7 * time.Second, Uplink: 20 * ms, Downlink: 30 * ms}
	tests := []struct {
		name         string
		cfg          AdaptiveConfig
		n            int
		up, down     func(i int) time.Duration
		wantState    AdaptiveState
		wantS, wantC time.Duration
	}{
		{"warmup gives the fixed defaults", AdaptiveConfig{}, 15, constant(20 * ms), constant(30 * ms),
			AdaptiveWarmup, 2 * tick, tick},
		{"steady link: a tick for the game loop, the snapshot interval", AdaptiveConfig{}, 100, constant(20 * ms), constant(30 * ms),
			AdaptiveOpenLoop, tick, tick},
		// Delays 20..119ms: the downlink's 99th percentile is 118ms; the
		// uplink's is the exponential tail beyond its 95th percentile
		// (114ms, the 5 beyond it 3ms above on average): 114ms + 3ms × ln 5.
		{"jitter: the 99th percentile", AdaptiveConfig{}, 100, ramp(20 * ms), ramp(30 * ms),
			AdaptiveOpenLoop, 94*ms + lnTimes(5, 3*ms) + tick, 98*ms + tick},
		// At 90%, the uplink's tail is taken from its median (69ms, the 50
		// beyond it 25.5ms above on average).
		{"90% target, 50ms snapshots", AdaptiveConfig{Target: 0.9, SnapshotInterval: 50 * ms}, 100, ramp(20 * ms), ramp(30 * ms),
			AdaptiveOpenLoop, 49*ms + lnTimes(5, 25500*time.Microsecond) + tick, 89*ms + 50*ms},
		// A window of 16: only the last 16 samples (84..99 ms above the floor) count.
		{"window forgets", AdaptiveConfig{Window: 16}, 100, ramp(20 * ms), ramp(30 * ms),
			AdaptiveOpenLoop, 99*ms + tick, 99*ms + tick},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAdaptive(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.n {
				a.ObserveSample(sampleWith(time.Duration(i)*100*ms, e.Offset, tc.up(i), tc.down(i)), e)
			}
			s, c := a.Buffers(tick)
			if diff := cmp.Diff([]any{tc.wantState, tc.wantS, tc.wantC}, []any{a.State(), s, c}, nanos); diff != "" {
				t.Errorf("state, server, client buffer (-want +got):\n%s", diff)
			}
		})
	}
}

func constant(d time.Duration) func(int) time.Duration { return func(int) time.Duration { return d } }

// ramp is floor + i ms for the i-th sample, shuffled by a stride so the
// window does not see them in order.
func ramp(floor time.Duration) func(int) time.Duration {
	return func(i int) time.Duration { return floor + time.Duration(i%100)*ms }
}

func TestAdaptiveFeedback(t *testing.T) {
	const tick = time.Second / 60
	e := Estimate{Valid: true, Uplink: 20 * ms, Downlink: 20 * ms}
	fb := func(total uint32, late int, p1 time.Duration) Feedback {
		return Feedback{Total: total, Count: FeedbackWindow, Late: late, P1: p1, P5: p1 + ms, P50: p1 + 10*ms}
	}
	ticks := func(x float64) time.Duration { return time.Duration(x * float64(tick)) }
	// The aim is 0.875% late: a window of 128 with 10 late is 7.9 times
	// above it, and moves the lead by 0.03 × 7.9 ticks. Before the first
	// window without a late input, the window's aim is the aim.
	tenLate := ticks(0.03 * (10.0/128 - 0.00875) / 0.00875)
	twoLate := ticks(0.03 * (2.0/128 - 0.00875) / 0.00875)
	// narrow is what the windows without a late input among lates narrow
	// the lead by: 0.03 tick times the window's aim over the aim.
	narrow := func(lates ...int) time.Duration {
		var d time.Duration
		for i, f := range windowAims(lates...) {
			if lates[i] == 0 {
				d += ticks(-0.03 * f)
			}
		}
		return d
	}
	// Slack beyond 3/4 tick in each of the last 4 windows: a tenth of it
	// is given back.
	slack := tick + 10*ms
	fast := (slack - tick*3/4) / 10
	tests := []struct {
		name      string
		feedback  []Feedback
		wantCorr  time.Duration
		wantState AdaptiveState
	}{
		// The open loop starts the correction at a tick.
		{"none", nil, tick, AdaptiveOpenLoop},
		{"too few arrivals", []Feedback{{Total: 10, Count: 10, Late: 10, P1: -50 * ms}}, tick, AdaptiveOpenLoop},
		{"none late narrows", []Feedback{fb(128, 0, 5*ms)}, tick + narrow(0), AdaptiveClosedLoop},
		{"by at most half the 1st percentile", []Feedback{fb(128, 0, ms/2)}, tick - ms/4, AdaptiveClosedLoop},
		{"one late is under the aim: it holds", []Feedback{fb(128, 1, -ms)}, tick, AdaptiveClosedLoop},
		{"two late widen a little", []Feedback{fb(128, 2, -ms)}, tick + twoLate, AdaptiveClosedLoop},
		{"late widens", []Feedback{fb(128, 10, -20*ms)}, tick + tenLate, AdaptiveClosedLoop},
		{"no further than the 1st percentile", []Feedback{fb(128, 10, -ms)}, tick + ms + tick/8, AdaptiveClosedLoop},
		{"at most two ticks a window", []Feedback{fb(128, 128, -time.Second)}, tick + ticks(2), AdaptiveClosedLoop},
		{"slack beyond 3/4 tick narrows faster", []Feedback{fb(128, 0, slack)}, tick + narrow(0) - fast, AdaptiveClosedLoop},
		// A window with little slack in the last 4 holds the faster
		// narrowing back: a quiet spell of a wandering delay is no slack.
		{"slack must last", []Feedback{fb(128, 0, 5*ms), fb(256, 0, slack), fb(384, 0, slack), fb(512, 0, slack)},
			tick + narrow(0, 0, 0, 0), AdaptiveClosedLoop},
		{"lasting slack", []Feedback{fb(128, 0, 5*ms), fb(256, 0, slack), fb(384, 0, slack), fb(512, 0, slack), fb(640, 0, slack)},
			tick + narrow(0, 0, 0, 0, 0) - fast, AdaptiveClosedLoop},
		{"a late window is no slack", []Feedback{fb(128, 2, -ms), fb(256, 0, slack), fb(384, 0, slack), fb(512, 0, slack)},
			tick + twoLate + narrow(2, 0, 0, 0), AdaptiveClosedLoop},
		{"a window seen in part is ignored", []Feedback{fb(128, 10, -20*ms), fb(200, 10, -20*ms)}, tick + tenLate, AdaptiveClosedLoop},
		{"a new window counts", []Feedback{fb(128, 10, -20*ms), fb(256, 10, -20*ms)}, tick + 2*tenLate, AdaptiveClosedLoop},
		{"Total wraps", []Feedback{fb(1<<32-10, 10, -20*ms), fb(118, 10, -20*ms)}, tick + 2*tenLate, AdaptiveClosedLoop},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := NewAdaptive(AdaptiveConfig{})
			for i := range 20 {
				a.ObserveSample(sampleWith(time.Duration(i)*100*ms, 0, 20*ms, 20*ms), e)
			}
			a.Buffers(tick)
			for _, f := range tc.feedback {
				a.ObserveFeedback(f)
			}
			s, _ := a.Buffers(tick)
			if diff := cmp.Diff([]any{tc.wantState, tc.wantCorr, max(0, tc.wantCorr)}, []any{a.State(), a.Correction(), s}, nanos); diff != "" {
				t.Errorf("state, correction, server buffer (-want +got):\n%s", diff)
			}
		})
	}
	// The correction is bounded whatever the server says.
	a, _ := NewAdaptive(AdaptiveConfig{})
	for i := range 20 {
		a.ObserveSample(sampleWith(time.Duration(i)*100*ms, 0, 20*ms, 20*ms), e)
	}
	for i := range 1000 {
		a.ObserveFeedback(fb(uint32(128*(i+1)), 128, -time.Hour))
	}
	if got := a.Correction(); got != maxCorrection {
		t.Errorf("correction after 1000 late windows %v, want %v", got, maxCorrection)
	}
}

// nanos equates durations within a few nanoseconds: the policy truncates
// each window's move to a whole nanosecond.
var nanos = cmp.Comparer(func(a, b time.Duration) bool { return a-b <= 4 && b-a <= 4 })

// windowAims restates the long-run rule (see Adaptive) for windows of 128
// arrivals with lates late each, at the default target: the aim each
// window is held to, over the aim.
func windowAims(lates ...int) []float64 {
	const aim, keep = 0.00875, 1 - 1.0/256
	var late, count float64
	settled := false
	var out []float64
	for _, l := range lates {
		if !settled && l > 0 {
			out = append(out, 1)
			continue
		}
		if !settled {
			settled, late, count = true, aim*64*128, 64*128
		}
		late, count = keep*late+float64(l), keep*count+128
		out = append(out, max(0, min(0.01, aim-4*(late/count-aim)))/aim)
	}
	return out
}

// The late fraction over minutes is held to the aim: lateness a window let
// through holds the narrowing back until the windows after it make it up,
// and a shortfall narrows faster; the open loop's late windows do not count.
func TestAdaptiveLongRunLateness(t *testing.T) {
	const tick = time.Second / 60
	e := Estimate{Valid: true, Uplink: 20 * ms, Downlink: 20 * ms}
	quiet := func(total uint32) Feedback {
		return Feedback{Total: total, Count: FeedbackWindow, P1: 5 * ms, P5: 6 * ms, P50: 15 * ms}
	}
	step := func(total uint32) Feedback {
		return Feedback{Total: total, Count: FeedbackWindow, Late: 64, P1: -20 * ms, P5: -19 * ms, P50: 0}
	}
	// run feeds a window of 128 per entry of kinds (s: a step, half of it
	// late; q: quiet), and returns the correction after each.
	run := func(kinds string) []time.Duration {
		a, _ := NewAdaptive(AdaptiveConfig{})
		for i := range 20 {
			a.ObserveSample(sampleWith(time.Duration(i)*100*ms, 0, 20*ms, 20*ms), e)
		}
		a.Buffers(tick)
		var out []time.Duration
		for i, k := range kinds {
			total := uint32(128 * (i + 1))
			if k == 's' {
				a.ObserveFeedback(step(total))
			} else {
				a.ObserveFeedback(quiet(total))
			}
			out = append(out, a.Correction())
		}
		return out
	}
	quiets := func(n int) string { return strings.Repeat("q", n) }
	ticks := func(x float64) time.Duration { return time.Duration(x * float64(tick)) }

	t.Run("a step's lateness holds the narrowing", func(t *testing.T) {
		c := run("qs" + quiets(10))
		// Without the long-run rule each quiet window would narrow by
		// 0.03 tick; 64 late of 128 put the long-run fraction far over
		// the aim, so the window's aim is 0 and they hold.
		if diff := cmp.Diff(c[1], c[len(c)-1]); diff != "" {
			t.Errorf("correction after 10 quiet windows (-after the step +now):\n%s", diff)
		}
	})
	t.Run("made up, it narrows again, faster", func(t *testing.T) {
		c := run("qs" + quiets(600))
		if c[len(c)-1] >= c[1] {
			t.Errorf("correction after 600 quiet windows %v, not below %v after the step", c[len(c)-1], c[1])
		}
		// The long-run fraction is now far under the aim: the window's
		// aim is 1 − Target, so a quiet window narrows by 0.03/0.875 tick.
		if diff := cmp.Diff(ticks(-0.03/0.875), c[len(c)-1]-c[len(c)-2], nanos); diff != "" {
			t.Errorf("last quiet window's move (-want +got):\n%s", diff)
		}
	})
	t.Run("the open loop's late windows do not count", func(t *testing.T) {
		c := run("s" + quiets(10))
		var want time.Duration
		for _, f := range windowAims(append([]int{64}, make([]int, 10)...)...)[1:] {
			want += ticks(-0.03 * f)
		}
		if diff := cmp.Diff(want, c[len(c)-1]-c[0], nanos); diff != "" {
			t.Errorf("10 quiet windows after a late first one moved the lead (-want +got):\n%s", diff)
		}
	})
}

func TestAdaptiveConfigValidation(t *testing.T) {
	for _, cfg := range []AdaptiveConfig{{Target: 0.4}, {Target: 1}, {Window: 8}, {Window: MaxDelayWindow + 1}, {SnapshotInterval: -ms}} {
		if _, err := NewAdaptive(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("NewAdaptive(%+v) error = %v, want ErrInvalidConfig", cfg, err)
		}
	}
}

func TestAdaptiveDoesNotAllocate(t *testing.T) {
	a, _ := NewAdaptive(AdaptiveConfig{})
	e := Estimate{Valid: true, Uplink: 20 * ms, Downlink: 20 * ms}
	var w ArrivalWindow
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		i++
		a.ObserveSample(sampleWith(time.Duration(i)*100*ms, 0, 20*ms+time.Duration(i%7)*ms, 20*ms), e)
		w.Add(time.Duration(i%11) * ms)
		a.ObserveFeedback(w.Feedback())
		a.Buffers(16 * ms)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per sample, want 0", allocs)
	}
}

// stepPolicy is a BufferPolicy whose buffers a test sets.
type stepPolicy struct{ server, client time.Duration }

func (*stepPolicy) ObserveSample(Sample, Estimate) {}
func (*stepPolicy) ObserveFeedback(Feedback)       {}
func (p *stepPolicy) Buffers(time.Duration) (time.Duration, time.Duration) {
	return p.server, p.client
}

// A buffer change of any size is slewed, never a reset, and is reached.
func TestBufferChangeNeverResets(t *testing.T) {
	tests := []struct {
		name                   string
		server, client         time.Duration // the policy's buffers after the change
		dt                     time.Duration
		maxDeviation, slewTime float64
	}{
		{"lead +500ms", 500 * ms, 0, time.Second / 60, 0, 0},
		{"delay +1s", 0, time.Second, time.Second / 60, 0, 0},
		{"both, 144 Hz frames", 300 * ms, 300 * ms, time.Second / 144, 0, 0},
		{"both, 10 Hz frames", 300 * ms, 300 * ms, 100 * ms, 0, 0},
		{"deviation 0.5", 400 * ms, 400 * ms, time.Second / 60, 0.5, 0},
		{"slow slew", 400 * ms, 400 * ms, time.Second / 60, 0, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pol := &stepPolicy{}
			c, clk := newTestClient(t, SteeredConfig{Buffers: pol, MaxScaleDeviation: tc.maxDeviation,
				SlewTime: time.Duration(tc.slewTime * float64(time.Second))})
			c.SetEstimate(est(clk.now, 3*time.Second, 0))
			p, s := nettime.New(rate, 0), nettime.New(rate, 0)
			c.InitializeClient(&p, &s)
			pol.server, pol.client = tc.server, tc.client
			// Grow back too: the change is reverted half way.
			for clk.now < 240*time.Second {
				if clk.now > 120*time.Second {
					pol.server, pol.client = 0, 0
				}
				if r := step(t, c, clk, &p, &s, tc.dt); !r.ok {
					t.Fatalf("reset at %v: errors %v, %v", clk.now, r.errP, r.errS)
				}
				if clk.now > 115*time.Second && clk.now < 120*time.Second {
					if st := c.Status(); st.ServerBuffer != tc.server || st.ClientBuffer != tc.client {
						t.Fatalf("buffers %v, %v at %v: not reached", st.ServerBuffer, st.ClientBuffer, clk.now)
					}
				}
			}
			st := c.Status()
			if st.Resets != 0 || st.ServerBuffer != 0 || st.ClientBuffer != 0 {
				t.Errorf("after 240s: %+v, want no resets and the buffers back to 0", st)
			}
			if abs(st.PredictedError) > ms || abs(st.ServerError) > ms {
				t.Errorf("errors %v, %v after 240s, want converged", st.PredictedError, st.ServerError)
			}
		})
	}
}

// A buffer's move is fed forward: the timelines move with their targets
// instead of lagging them by the move's rate times SlewTime (25ms at the
// default 2.5% and 1s), and the time scale stays within
// MaxScaleDeviation.
func TestBufferMovesAreFedForward(t *testing.T) {
	tests := []struct {
		name           string
		server, client time.Duration // the policy's buffers after the change
		dt             time.Duration
		maxDeviation   float64
	}{
		{"lead +200ms", 200 * ms, 0, time.Second / 60, 0},
		{"delay +200ms", 0, 200 * ms, time.Second / 60, 0},
		{"both, 144 Hz frames", 200 * ms, 200 * ms, time.Second / 144, 0},
		{"both, 10 Hz frames", 200 * ms, 200 * ms, 100 * ms, 0},
		{"deviation 0.01", 50 * ms, 50 * ms, time.Second / 60, 0.01},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pol := &stepPolicy{}
			c, clk := newTestClient(t, SteeredConfig{Buffers: pol, MaxScaleDeviation: tc.maxDeviation})
			dev := c.cfg.MaxScaleDeviation
			c.SetEstimate(est(clk.now, 3*time.Second, 0))
			p, s := nettime.New(rate, 0), nettime.New(rate, 0)
			c.InitializeClient(&p, &s)
			pol.server, pol.client = tc.server, tc.client
			var worst time.Duration
			for clk.now < 60*time.Second {
				if clk.now > 30*time.Second {
					pol.server, pol.client = 0, 0 // and back
				}
				r := step(t, c, clk, &p, &s, tc.dt)
				worst = max(worst, abs(r.errP), abs(r.errS))
				for _, sc := range []float64{r.scaleP, r.scaleS} {
					if sc < 1-dev-1e-9 || sc > 1+dev+1e-9 {
						t.Fatalf("scale %v at %v, want within 1 ± %v", sc, clk.now, dev)
					}
				}
			}
			// Frames truncate each move to whole nanoseconds.
			if limit := c.cfg.CorrectionTolerance + time.Microsecond; worst > limit {
				t.Errorf("timelines lagged their targets by up to %v during the moves, want within %v", worst, limit)
			}
		})
	}
}

// A client clock step: until the estimate follows it, a sample's delays
// read through the old offset are off by the step (one of them below
// zero) and are skipped; once the estimate steps, the delays seen before
// are dropped and the buffers come from the new samples alone.
func TestAdaptiveForgetsDelaysAcrossAClockStep(t *testing.T) {
	const tick = time.Second / 60
	for _, step := range []time.Duration{2 * time.Second, -2 * time.Second} {
		t.Run(step.String(), func(t *testing.T) {
			a, _ := NewAdaptive(AdaptiveConfig{})
			before := Estimate{Valid: true, Offset: 0, Uplink: 20 * ms, Downlink: 20 * ms}
			after := before
			after.Offset -= step
			var t1 time.Duration
			feed := func(n int, e Estimate, clientStep, up, down time.Duration) {
				for range n {
					t1 += 100 * ms
					s := sampleWith(t1, 0, up, down) // the server clock is the client's before the step
					s.ClientSend += clientStep
					s.ClientReceive += clientStep
					a.ObserveSample(s, e)
					a.Buffers(tick)
				}
			}
			feed(50, before, 0, 20*ms, 20*ms)
			s0, c0 := a.Buffers(tick)
			feed(5, before, step, 20*ms, 20*ms) // not followed yet
			feed(10, after, step, 60*ms, 60*ms) // followed: new delays, too few to use
			if s, c := a.Buffers(tick); s != s0 || c != c0 {
				t.Errorf("buffers %v, %v after the step, want them kept at %v, %v", s, c, s0, c0)
			}
			feed(10, after, step, 60*ms, 60*ms)
			if s, c := a.Buffers(tick); s != 40*ms+tick || c != 40*ms+tick {
				t.Errorf("buffers %v, %v, want %v from the new delays alone", s, c, 40*ms+tick)
			}
		})
	}
}
