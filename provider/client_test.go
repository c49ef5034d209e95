package provider

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/netclock/netclock/nettime"
)

// vclock is a virtual client clock: tests move it by hand.
type vclock struct{ now time.Duration }

func (c *vclock) read() time.Duration { return c.now }

const rate = 60

func newTestClient(t *testing.T, cfg SteeredConfig) (*Steered, *vclock) {
	t.Helper()
	clk := &vclock{now: 5 * time.Second}
	cfg.Clock = clk.read
	c, err := NewSteered(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, clk
}

// est returns an estimate whose server clock is the client clock plus offset.
func est(at, offset time.Duration, driftPPM float64) Estimate {
	return Estimate{Valid: true, At: at, Offset: offset, DriftPPM: driftPPM,
		Uplink: 20 * time.Millisecond, Downlink: 30 * time.Millisecond}
}

// run advances the client frame by frame and reports the errors of predicted
// and server time against their targets after each frame.
type frameResult struct {
	ok         bool
	errP, errS time.Duration
	scaleP     float64
	scaleS     float64
}

func step(t *testing.T, c *Steered, clk *vclock, p, s *nettime.Time, dt time.Duration) frameResult {
	t.Helper()
	clk.now += dt
	ok := c.AdvanceTime(p, s, dt)
	tp, ts, valid := c.Targets(rate)
	if !valid {
		t.Fatal("no targets with a valid estimate")
	}
	st := c.Status()
	r := frameResult{ok: ok, errP: tp - p.Duration(), errS: ts - s.Duration(), scaleP: st.PredictedScale, scaleS: st.ServerScale}
	if st.PredictedError != r.errP || st.ServerError != r.errS {
		t.Fatalf("Status errors %v/%v, measured %v/%v", st.PredictedError, st.ServerError, r.errP, r.errS)
	}
	return r
}

func TestClientConvergesWithoutOvershoot(t *testing.T) {
	tests := []struct {
		name     string
		initial  time.Duration // how far both times start from their targets
		driftPPM float64
		dt       time.Duration
	}{
		{"ahead 5ms", 5 * time.Millisecond, 0, time.Second / 60},
		{"behind 5ms", -5 * time.Millisecond, 0, time.Second / 60},
		{"ahead 150ms", 150 * time.Millisecond, 0, time.Second / 60},
		{"behind 190ms", -190 * time.Millisecond, 0, time.Second / 144},
		{"behind 80ms, drift +500ppm", -80 * time.Millisecond, 500, time.Second / 60},
		{"ahead 80ms, drift -500ppm", 80 * time.Millisecond, -500, 33 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, clk := newTestClient(t, SteeredConfig{})
			c.SetEstimate(est(clk.now, 3*time.Second, tc.driftPPM))
			var p, s nettime.Time = nettime.New(rate, 0), nettime.New(rate, 0)
			c.InitializeClient(&p, &s)
			p, s = p.Add(-tc.initial), s.Add(-tc.initial)

			prevP, prevS := tc.initial, tc.initial
			cfg := c.Config()
			for i := range int(20 * time.Second / tc.dt) {
				r := step(t, c, clk, &p, &s, tc.dt)
				if !r.ok {
					t.Fatalf("frame %d: hard reset from an error below the threshold", i)
				}
				for _, e := range []struct {
					name      string
					err, prev time.Duration
					scale     float64
				}{{"predicted", r.errP, prevP, r.scaleP}, {"server", r.errS, prevS, r.scaleS}} {
					// No overshoot: the error keeps its sign (up to 1ns of
					// rounding) and never grows.
					if e.err*e.prev < 0 && abs(e.err) > time.Nanosecond {
						t.Fatalf("frame %d: %s error crossed zero: %v -> %v", i, e.name, e.prev, e.err)
					}
					if abs(e.err) > abs(e.prev)+time.Nanosecond {
						t.Fatalf("frame %d: %s error grew: %v -> %v", i, e.name, e.prev, e.err)
					}
					// Allow the 2ns a frame can round by.
					if dev := math.Abs(e.scale - (1 + tc.driftPPM/1e6)); dev > cfg.MaxScaleDeviation+2/float64(tc.dt) {
						t.Fatalf("frame %d: %s scale %v beyond the bound", i, e.name, e.scale)
					}
				}
				prevP, prevS = r.errP, r.errS
			}
			for _, e := range []time.Duration{prevP, prevS} {
				if abs(e) > cfg.CorrectionTolerance+time.Microsecond {
					t.Errorf("after 20s the error is %v, want within the %v dead band", e, cfg.CorrectionTolerance)
				}
			}
			if got := c.Status().Resets; got != 0 {
				t.Errorf("Resets = %d, want 0", got)
			}
		})
	}
}

func TestClientSlewIsSmooth(t *testing.T) {
	// The scale must change gradually: no frame-to-frame jumps of the
	// bang-bang kind (NGO switches between exactly 0.99 and 1.01).
	c, clk := newTestClient(t, SteeredConfig{})
	c.SetEstimate(est(clk.now, time.Second, 0))
	p, s := nettime.New(rate, 0), nettime.New(rate, 0)
	c.InitializeClient(&p, &s)
	p, s = p.Add(30*time.Millisecond), s.Add(30*time.Millisecond)
	prev := 0.0
	reversals := 0
	lastDir := 0
	for i := range 60 * 10 {
		r := step(t, c, clk, &p, &s, time.Second/60)
		dev := r.scaleP - 1
		if i > 0 && math.Abs(dev-prev) > 0.002 {
			t.Fatalf("frame %d: scale jumped from %v to %v", i, 1+prev, r.scaleP)
		}
		if dir := sgn(dev); dir != 0 && lastDir != 0 && dir != lastDir {
			reversals++
		}
		if dir := sgn(dev); dir != 0 {
			lastDir = dir
		}
		prev = dev
	}
	if reversals != 0 {
		t.Errorf("correction changed direction %d times, want 0", reversals)
	}
}

func sgn(f float64) int {
	switch {
	case f > 0:
		return 1
	case f < 0:
		return -1
	}
	return 0
}

func TestClientHardResetMovesBothOnce(t *testing.T) {
	c, clk := newTestClient(t, SteeredConfig{})
	c.SetEstimate(est(clk.now, 2*time.Second, 0))
	p, s := nettime.New(rate, 0), nettime.New(rate, 0)
	c.InitializeClient(&p, &s)
	for range 60 {
		if r := step(t, c, clk, &p, &s, time.Second/60); !r.ok {
			t.Fatal("reset in steady state")
		}
	}
	// The server clock jumps by 1s (a restart, a suspended VM): far above
	// the 200ms threshold.
	c.SetEstimate(est(clk.now, 3*time.Second, 0))
	var results []bool
	for range 120 {
		r := step(t, c, clk, &p, &s, time.Second/60)
		results = append(results, r.ok)
		if !r.ok && (r.errP != 0 || r.errS != 0) {
			t.Errorf("after the reset the errors are %v and %v, want both times on target", r.errP, r.errS)
		}
	}
	want := make([]bool, 120)
	for i := range want {
		want[i] = i != 0
	}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("AdvanceTime results (-want +got):\n%s", diff)
	}
	if got := c.Status().Resets; got != 1 {
		t.Errorf("Resets = %d, want 1", got)
	}
}

func TestClientResetWhenOnlyOneTimelineIsOff(t *testing.T) {
	// The downlink estimate grows by 300ms: only server time's target moves,
	// yet both timelines must be stepped together.
	c, clk := newTestClient(t, SteeredConfig{})
	e := est(clk.now, time.Second, 0)
	c.SetEstimate(e)
	p, s := nettime.New(rate, 0), nettime.New(rate, 0)
	c.InitializeClient(&p, &s)
	step(t, c, clk, &p, &s, time.Second/60)
	p0 := p
	e.Downlink += 300 * time.Millisecond
	c.SetEstimate(e)
	r := step(t, c, clk, &p, &s, time.Second/60)
	if r.ok {
		t.Fatal("no hard reset for a 300ms server-time error")
	}
	if r.errP != 0 || r.errS != 0 {
		t.Errorf("errors after reset = %v, %v; want 0, 0", r.errP, r.errS)
	}
	if got := p.Sub(p0); got != time.Second/60 {
		t.Errorf("predicted moved %v across the reset, want exactly the frame", got)
	}
}

func TestClientHardResetOnlyNeverScales(t *testing.T) {
	c, clk := newTestClient(t, SteeredConfig{HardResetOnly: true})
	c.SetEstimate(est(clk.now, time.Second, 300)) // drift is not compensated either
	p, s := nettime.New(rate, 0), nettime.New(rate, 0)
	c.InitializeClient(&p, &s)
	p, s = p.Add(150*time.Millisecond), s.Add(150*time.Millisecond)
	dts := []time.Duration{time.Second / 60, 7 * time.Millisecond, 33 * time.Millisecond, time.Millisecond}
	for i := range 1000 {
		dt := dts[i%len(dts)]
		p0, s0 := p, s
		r := step(t, c, clk, &p, &s, dt)
		if !r.ok {
			t.Fatalf("frame %d: reset at a %v error", i, r.errP)
		}
		if p.Sub(p0) != dt || s.Sub(s0) != dt {
			t.Fatalf("frame %d: advanced %v/%v for dt %v, want exactly dt", i, p.Sub(p0), s.Sub(s0), dt)
		}
		if r.scaleP != 1 || r.scaleS != 1 {
			t.Fatalf("frame %d: scales %v/%v, want 1", i, r.scaleP, r.scaleS)
		}
	}
	// Beyond the threshold it steps, once.
	e := c.Estimate()
	e.Offset -= 100 * time.Millisecond // the error is now about -245ms
	c.SetEstimate(e)
	if r := step(t, c, clk, &p, &s, time.Second/60); r.ok || r.errP != 0 || r.errS != 0 {
		t.Errorf("got %+v, want a reset onto the targets", r)
	}
	if r := step(t, c, clk, &p, &s, time.Second/60); !r.ok {
		t.Error("reset again right after a reset")
	}
}

func TestClientWithoutEstimateRunsAtRealRate(t *testing.T) {
	c, clk := newTestClient(t, SteeredConfig{})
	p, s := nettime.New(rate, time.Second), nettime.New(rate, time.Second)
	c.InitializeClient(&p, &s)
	if p != s {
		t.Fatalf("InitializeClient without estimate: predicted %v, server %v; want equal", p, s)
	}
	clk.now += 10 * time.Millisecond
	if !c.AdvanceTime(&p, &s, 10*time.Millisecond) {
		t.Fatal("reset without an estimate")
	}
	want := nettime.New(rate, time.Second+10*time.Millisecond)
	if p != want || s != want {
		t.Errorf("got %v, %v; want both %v", p, s, want)
	}
	if _, _, ok := c.Targets(rate); ok {
		t.Error("Targets ok without an estimate")
	}
}

func TestClientBuffers(t *testing.T) {
	tick := nettime.New(rate, 0).FixedDelta()
	tests := []struct {
		name             string
		client, server   time.Duration
		wantLeadP, wantS time.Duration // predicted − shared, shared − server
	}{
		{"defaults", 0, 0, 20*time.Millisecond + 2*tick, 30*time.Millisecond + tick},
		{"none", -1, -1, 20 * time.Millisecond, 30 * time.Millisecond},
		{"explicit", 50 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond, 80 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, clk := newTestClient(t, SteeredConfig{ClientBuffer: tc.client, ServerBuffer: tc.server})
			c.SetEstimate(est(clk.now, time.Second, 0))
			shared := clk.now + time.Second
			tp, ts, _ := c.Targets(rate)
			if got := []time.Duration{tp - shared, shared - ts}; !cmp.Equal(got, []time.Duration{tc.wantLeadP, tc.wantS}) {
				t.Errorf("lead, lag = %v, want %v", got, []time.Duration{tc.wantLeadP, tc.wantS})
			}
		})
	}
}

func TestClientConfigValidation(t *testing.T) {
	tests := []struct {
		name string
		cfg  SteeredConfig
	}{
		{"negative threshold", SteeredConfig{HardResetThreshold: -time.Second}},
		{"negative slew time", SteeredConfig{SlewTime: -time.Second}},
		{"negative deviation", SteeredConfig{MaxScaleDeviation: -0.1}},
		{"huge deviation", SteeredConfig{MaxScaleDeviation: 0.9}},
		{"NaN deviation", SteeredConfig{MaxScaleDeviation: math.NaN()}},
		{"tolerance above threshold", SteeredConfig{CorrectionTolerance: time.Second}},
		{"policy and fixed buffer", SteeredConfig{Buffers: FixedBuffers{}, ServerBuffer: time.Millisecond}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewSteered(tc.cfg)
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("NewSteered(%+v) error = %v, want ErrInvalidConfig", tc.cfg, err)
			}
		})
	}
	c, err := NewSteered(SteeredConfig{})
	if err != nil {
		t.Fatal(err)
	}
	got := c.Config()
	got.Clock = nil
	if _, ok := got.Buffers.(*Adaptive); !ok {
		t.Errorf("default Buffers %T, want *Adaptive", got.Buffers)
	}
	got.Buffers = nil
	want := SteeredConfig{HardResetThreshold: DefaultHardResetThreshold, CorrectionTolerance: DefaultCorrectionTolerance,
		SlewTime: DefaultSlewTime, MaxScaleDeviation: DefaultMaxScaleDeviation}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestServerProvider(t *testing.T) {
	var sp Constant
	p, s := nettime.New(rate, 0), nettime.New(rate, time.Second)
	sp.InitializeClient(&p, &s)
	if p != s {
		t.Fatalf("InitializeClient: %v != %v", p, s)
	}
	for i := range 100 {
		if !sp.AdvanceTime(&p, &s, 7*time.Millisecond) {
			t.Fatal("server provider reported a reset")
		}
		if want := nettime.New(rate, time.Second+time.Duration(i+1)*7*time.Millisecond); p != want || s != want {
			t.Fatalf("step %d: got %v, %v; want %v", i, p, s, want)
		}
	}
}

func TestSample(t *testing.T) {
	// Server clock = client clock + 1s; uplink 30ms, downlink 10ms, server
	// holds the ping 2ms. The sample's offset is off by (30-10)/2 = 10ms.
	s := Sample{
		ClientSend:    100 * time.Millisecond,
		ServerReceive: time.Second + 130*time.Millisecond,
		ServerSend:    time.Second + 132*time.Millisecond,
		ClientReceive: 142 * time.Millisecond,
	}
	if got, want := s.Offset(), time.Second+10*time.Millisecond; got != want {
		t.Errorf("Offset = %v, want %v", got, want)
	}
	if got, want := s.RTT(), 40*time.Millisecond; got != want {
		t.Errorf("RTT = %v, want %v", got, want)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	bad := []Sample{
		{ClientSend: 10, ClientReceive: 5},
		{ServerReceive: 10, ServerSend: 5, ClientReceive: 10},
		{ClientSend: 0, ServerReceive: 0, ServerSend: 100, ClientReceive: 50},
	}
	for _, b := range bad {
		if err := b.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", b)
		}
	}
}

func TestEstimateServerTime(t *testing.T) {
	e := Estimate{Valid: true, At: 10 * time.Second, Offset: time.Second, DriftPPM: 100}
	if got, want := e.ServerTime(10*time.Second), 11*time.Second; got != want {
		t.Errorf("at At: %v, want %v", got, want)
	}
	// 100 ppm over 100s is 10ms.
	if got, want := e.ServerTime(110*time.Second), 111*time.Second+10*time.Millisecond; got != want {
		t.Errorf("100s later: %v, want %v", got, want)
	}
}
