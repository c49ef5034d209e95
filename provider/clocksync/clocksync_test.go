package clocksync

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/netclock/netclock/provider"
)

// path is a synthetic network and pair of clocks for the tests: the server
// clock is true time, the client clock reads offset behind it plus drift.
type path struct {
	rng          *rand.Rand
	offset       time.Duration // server − client at true time 0
	driftPPM     float64       // server runs this much faster than the client
	up, down     time.Duration // base delays
	jitUp, jitDn func(*rand.Rand) time.Duration
	hold         time.Duration // server processing time
	jumpAt       time.Duration // true time the client clock jumps (0: never)
	jumpBy       time.Duration
	slewFrom     time.Duration // the client clock runs slewPPM slower in [slewFrom, slewTo)
	slewTo       time.Duration
	slewPPM      float64
}

func uniform(w time.Duration) func(*rand.Rand) time.Duration {
	return func(r *rand.Rand) time.Duration {
		if w == 0 {
			return 0
		}
		return time.Duration(r.Int64N(int64(w)))
	}
}

func exponential(mean time.Duration) func(*rand.Rand) time.Duration {
	return func(r *rand.Rand) time.Duration { return time.Duration(r.ExpFloat64() * float64(mean)) }
}

// client returns the client clock at true time t.
func (p *path) client(t time.Duration) time.Duration {
	c := t - p.offset - time.Duration(float64(t)*p.driftPPM/1e6)
	if p.jumpAt != 0 && t >= p.jumpAt {
		c += p.jumpBy
	}
	if p.slewTo > p.slewFrom && t > p.slewFrom {
		c -= time.Duration(float64(min(t, p.slewTo)-p.slewFrom) * p.slewPPM / 1e6)
	}
	return c
}

// exchange runs one ping sent at true time t.
func (p *path) exchange(t time.Duration) provider.Sample {
	t2 := t + p.up + p.jitUp(p.rng)
	t3 := t2 + p.hold
	t4 := t3 + p.down + p.jitDn(p.rng)
	return provider.Sample{ClientSend: p.client(t), ServerReceive: t2, ServerSend: t3, ClientReceive: p.client(t4)}
}

// errAt is the estimate's error in the server time it gives at true time t.
func errAt(e provider.Estimate, p *path, t time.Duration) time.Duration {
	return e.ServerTime(p.client(t)) - t
}

func newEst(t *testing.T) *Estimator {
	t.Helper()
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// run feeds pings every interval from true time from to to and returns the
// worst |error| and the bound coverage over the samples after warm.
func run(t *testing.T, e *Estimator, p *path, from, to, interval, warm time.Duration) (worst time.Duration, covered, total int) {
	t.Helper()
	for at := from; at < to; at += interval {
		s := p.exchange(at)
		if err := e.Observe(s); err != nil {
			t.Fatalf("Observe(%+v): %v", s, err)
		}
		if at < warm {
			continue
		}
		est := e.Estimate()
		now := at + p.up + p.down + 2*p.hold // about when the pong arrived
		err := errAt(est, p, now)
		worst = max(worst, abs(err))
		total++
		if abs(err) <= est.ErrorBound {
			covered++
		}
	}
	return worst, covered, total
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func TestExactWithoutJitter(t *testing.T) {
	p := &path{rng: rand.New(rand.NewPCG(1, 1)), offset: 7 * time.Second,
		up: 20 * time.Millisecond, down: 20 * time.Millisecond, jitUp: uniform(0), jitDn: uniform(0), hold: time.Millisecond}
	e := newEst(t)
	if e.Estimate().Valid {
		t.Fatal("valid before any sample")
	}
	worst, _, _ := run(t, e, p, 0, 10*time.Second, 100*time.Millisecond, 0)
	if worst > time.Microsecond {
		t.Errorf("worst error %v with exact symmetric delays, want ~0", worst)
	}
	est := e.Estimate()
	if abs(est.Uplink-20*time.Millisecond) > time.Microsecond || abs(est.Downlink-20*time.Millisecond) > time.Microsecond {
		t.Errorf("delays %v/%v, want 20ms/20ms", est.Uplink, est.Downlink)
	}
}

func TestFixedAsymmetryCostsHalf(t *testing.T) {
	// The physical limit: a path 30ms longer one way is invisible and costs
	// exactly 15ms.
	p := &path{rng: rand.New(rand.NewPCG(2, 2)), offset: -3 * time.Second,
		up: 40 * time.Millisecond, down: 10 * time.Millisecond, jitUp: uniform(time.Millisecond), jitDn: uniform(time.Millisecond)}
	e := newEst(t)
	run(t, e, p, 0, 30*time.Second, 100*time.Millisecond, 0)
	err := errAt(e.Estimate(), p, 30*time.Second)
	if abs(err-15*time.Millisecond) > 200*time.Microsecond {
		t.Errorf("error %v, want 15ms (half the 30ms asymmetry)", err)
	}
}

// TestJitterProfiles checks accuracy and the honesty of the bound under
// symmetric, asymmetric and heavy-tailed jitter, each with drift.
func TestJitterProfiles(t *testing.T) {
	tests := []struct {
		name         string
		jitUp, jitDn func(*rand.Rand) time.Duration
		drift        float64
		maxErr       time.Duration
		driftTol     float64 // ppm
	}{
		{"broadband uniform 24ms", uniform(24 * time.Millisecond), uniform(24 * time.Millisecond), 40, 2 * time.Millisecond, 10},
		{"ue-bad uniform 100ms", uniform(100 * time.Millisecond), uniform(100 * time.Millisecond), -60, 8 * time.Millisecond, 30},
		{"asymmetric exponential 15ms/0.2ms", exponential(15 * time.Millisecond), exponential(200 * time.Microsecond), 80, 2 * time.Millisecond, 10},
		{"drift 500ppm", uniform(10 * time.Millisecond), uniform(10 * time.Millisecond), 500, 2 * time.Millisecond, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var covered, total int
			for seed := range uint64(5) {
				p := &path{rng: rand.New(rand.NewPCG(seed, 7)), offset: 11 * time.Second, driftPPM: tc.drift,
					up: 30 * time.Millisecond, down: 30 * time.Millisecond, jitUp: tc.jitUp, jitDn: tc.jitDn}
				e := newEst(t)
				worst, c, n := run(t, e, p, 0, 120*time.Second, 100*time.Millisecond, 10*time.Second)
				if worst > tc.maxErr {
					t.Errorf("seed %d: worst error %v after warm-up, want <= %v", seed, worst, tc.maxErr)
				}
				if got := e.Estimate().DriftPPM; math.Abs(got-tc.drift) > tc.driftTol {
					t.Errorf("seed %d: drift %.1f ppm, want %.0f ±%.0f", seed, got, tc.drift, tc.driftTol)
				}
				covered += c
				total += n
			}
			if frac := float64(covered) / float64(total); frac < 0.99 {
				t.Errorf("bound covered the error %.2f%% of the time, want >= 99%%", 100*frac)
			}
		})
	}
}

func TestClockJumpDetectedWithinThreePongs(t *testing.T) {
	for _, by := range []time.Duration{2 * time.Second, -2 * time.Second, 50 * time.Millisecond} {
		p := &path{rng: rand.New(rand.NewPCG(3, 3)), offset: 5 * time.Second, driftPPM: 30,
			up: 10 * time.Millisecond, down: 10 * time.Millisecond, jitUp: uniform(2 * time.Millisecond), jitDn: uniform(2 * time.Millisecond),
			jumpAt: 60 * time.Second, jumpBy: by}
		e := newEst(t)
		run(t, e, p, 0, 60*time.Second, 100*time.Millisecond, 0)
		detected := -1
		for k := range 10 {
			at := 60*time.Second + time.Duration(k)*100*time.Millisecond
			if err := e.Observe(p.exchange(at)); err != nil {
				t.Fatal(err)
			}
			if e.LastEvent() == EventClockJump && detected < 0 {
				detected = k + 1
			}
		}
		if detected < 0 || detected > 3 {
			t.Errorf("jump %v: detected at pong %d, want within 3", by, detected)
		}
		if err := errAt(e.Estimate(), p, 61*time.Second); abs(err) > time.Millisecond {
			t.Errorf("jump %v: error %v one second later, want < 1ms", by, err)
		}
	}
}

func TestOneWayStepDoesNotMoveTheOffset(t *testing.T) {
	// Where RTT/2 methods shift by half a one-way step (15ms here), the
	// estimator holds the offset and books the step as a path change.
	for _, step := range []time.Duration{30 * time.Millisecond, -25 * time.Millisecond} {
		p := &path{rng: rand.New(rand.NewPCG(4, 4)), offset: 9 * time.Second, driftPPM: -20,
			up: 40 * time.Millisecond, down: 40 * time.Millisecond, jitUp: uniform(8 * time.Millisecond), jitDn: uniform(8 * time.Millisecond)}
		e := newEst(t)
		run(t, e, p, 0, 60*time.Second, 100*time.Millisecond, 0)
		p.up += step
		worst, _, _ := run(t, e, p, 60*time.Second, 150*time.Second, 100*time.Millisecond, 60*time.Second)
		if worst > 2*time.Millisecond {
			t.Errorf("uplink step %v: worst error %v, want < 2ms", step, worst)
		}
		if e.Stats().PathChanges == 0 || e.Stats().Jumps != 0 {
			t.Errorf("uplink step %v: stats %+v, want a path change and no jump", step, e.Stats())
		}
	}
}

func TestRejectsBadSamples(t *testing.T) {
	e := newEst(t)
	good := provider.Sample{ClientSend: time.Second, ServerReceive: 5 * time.Second, ServerSend: 5 * time.Second, ClientReceive: time.Second + 40*time.Millisecond}
	if err := e.Observe(good); err != nil {
		t.Fatal(err)
	}
	before := e.Estimate()
	bad := []provider.Sample{
		{ClientSend: 2 * time.Second, ClientReceive: time.Second},                                   // received before sent
		{ClientSend: 0, ServerReceive: 10, ServerSend: 5, ClientReceive: 100},                       // server sent before receiving
		{ClientSend: 0, ServerReceive: 0, ServerSend: time.Second, ClientReceive: time.Millisecond}, // held longer than the round trip
		{ClientSend: 0, ServerReceive: 0, ServerSend: 0, ClientReceive: time.Minute},                // absurd round trip
	}
	for _, s := range bad {
		if err := e.Observe(s); !errors.Is(err, ErrBadSample) {
			t.Errorf("Observe(%+v) = %v, want ErrBadSample", s, err)
		}
	}
	if err := e.Observe(good); err != nil { // a duplicate is ignored
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, e.Estimate()); diff != "" {
		t.Errorf("bad samples changed the estimate (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(Stats{Samples: 1, Rejected: 4, Duplicates: 1}, e.Stats()); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}

func TestConfigValidation(t *testing.T) {
	for _, cfg := range []Config{
		{Window: -1}, {MaxSamples: 8}, {JumpConfirm: 20}, {RiseConfirm: 2, JumpConfirm: 3}, {MaxRTT: -1},
	} {
		if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("New(%+v) = %v, want ErrInvalidConfig", cfg, err)
		}
	}
}

func FuzzObserve(f *testing.F) {
	f.Add(int64(0), int64(1e9), int64(1e9), int64(4e7), uint8(10))
	f.Add(int64(-5), int64(-1), int64(3), int64(2), uint8(200))
	f.Fuzz(func(t *testing.T, t1, t2, t3, t4 int64, n uint8) {
		e, _ := New(Config{})
		for k := range int64(n) {
			d := k * int64(100*time.Millisecond)
			s := provider.Sample{ClientSend: time.Duration(t1 + d), ServerReceive: time.Duration(t2 + d + k*k),
				ServerSend: time.Duration(t3 + d + k*k), ClientReceive: time.Duration(t4 + d)}
			if e.Observe(s) != nil {
				continue
			}
			est := e.Estimate()
			if !est.Valid || est.ErrorBound < 0 || math.IsNaN(est.DriftPPM) || math.IsInf(est.DriftPPM, 0) {
				t.Fatalf("after %+v: estimate %+v", s, est)
			}
		}
	})
}

func BenchmarkObserve(b *testing.B) {
	p := &path{rng: rand.New(rand.NewPCG(5, 5)), offset: time.Second, driftPPM: 50,
		up: 30 * time.Millisecond, down: 30 * time.Millisecond, jitUp: uniform(20 * time.Millisecond), jitDn: uniform(20 * time.Millisecond)}
	samples := make([]provider.Sample, 4096)
	for i := range samples {
		samples[i] = p.exchange(time.Duration(i) * 100 * time.Millisecond)
	}
	e, _ := New(Config{})
	for _, s := range samples[:512] { // a full window
		_ = e.Observe(s)
	}
	b.ReportAllocs()
	i := 512
	for b.Loop() {
		if i == len(samples) {
			b.StopTimer()
			e.Reset()
			for _, s := range samples[:512] {
				_ = e.Observe(s)
			}
			i = 512
			b.StartTimer()
		}
		_ = e.Observe(samples[i])
		i++
	}
}

// TestIncrementalSummaryMatchesScan checks the incrementally kept summary of
// the older samples against a fresh scan after every sample, through window
// expiry, ring overflow, path steps and clock jumps.
func TestIncrementalSummaryMatchesScan(t *testing.T) {
	p := &path{rng: rand.New(rand.NewPCG(8, 8)), offset: 2 * time.Second, driftPPM: 120,
		up: 25 * time.Millisecond, down: 15 * time.Millisecond, jitUp: exponential(4 * time.Millisecond), jitDn: uniform(6 * time.Millisecond),
		jumpAt: 50 * time.Second, jumpBy: -time.Second}
	e, err := New(Config{Window: 20 * time.Second, MaxSamples: 128})
	if err != nil {
		t.Fatal(err)
	}
	for k := range 1500 {
		at := time.Duration(k) * 70 * time.Millisecond
		if at > 80*time.Second {
			p.up = 45 * time.Millisecond
		}
		// A ping in flight across the backwards jump is rightly rejected.
		if err := e.Observe(p.exchange(at)); err != nil && !errors.Is(err, ErrBadSample) {
			t.Fatal(err)
		}
		got := e.olderSummary()
		want := e.scan(0, max(0, e.n-e.cfg.RiseConfirm))
		if got != want {
			t.Fatalf("sample %d: incremental %+v, scanned %+v", k, got, want)
		}
	}
	if st := e.Stats(); st.Jumps == 0 || st.PathChanges == 0 {
		t.Errorf("stats %+v: the run should have exercised a jump and a path change", st)
	}
}

// TestSlewIsFollowedNotHeld: a clock slewed for two minutes (NTP moves
// CLOCK_MONOTONIC up to 500 ppm) lowers one floor as it lifts the other.
// That must be followed as a clock move, not booked as one-way path changes
// that would hold a wrong offset after the slew ends.
func TestSlewIsFollowedNotHeld(t *testing.T) {
	p := &path{rng: rand.New(rand.NewPCG(6, 6)), offset: -4 * time.Second, driftPPM: 20,
		up: 9 * time.Millisecond, down: 9 * time.Millisecond, jitUp: uniform(2 * time.Millisecond), jitDn: uniform(2 * time.Millisecond),
		slewFrom: 60 * time.Second, slewTo: 180 * time.Second, slewPPM: 500}
	e := newEst(t)
	run(t, e, p, 0, 180*time.Second, 100*time.Millisecond, 0)
	worst, _, _ := run(t, e, p, 180*time.Second, 300*time.Second, 100*time.Millisecond, 240*time.Second)
	if worst > time.Millisecond {
		t.Errorf("a minute after the slew the error is up to %v, want < 1ms", worst)
	}
	if st := e.Stats(); st.PathChanges != 0 || st.ClockShifts == 0 {
		t.Errorf("stats %+v: want the slew seen as clock shifts, never as path changes", st)
	}
}

// TestBoundStaysTightOnAPerfectPath: on a path without jitter the drift
// fits exactly (standard error 0); that must not read as "no fit yet" and
// widen the bound to the prior's.
func TestBoundStaysTightOnAPerfectPath(t *testing.T) {
	p := &path{rng: rand.New(rand.NewPCG(9, 9)), offset: time.Second,
		up: 30 * time.Millisecond, down: 10 * time.Millisecond, jitUp: uniform(0), jitDn: uniform(0)}
	e := newEst(t)
	for at := time.Duration(0); at < 60*time.Second; at += 100 * time.Millisecond {
		if err := e.Observe(p.exchange(at)); err != nil {
			t.Fatal(err)
		}
		if at > 10*time.Second && e.Estimate().ErrorBound > 200*time.Microsecond {
			t.Fatalf("at %v the bound is %v on a jitter-free path, want <= 200µs", at, e.Estimate().ErrorBound)
		}
	}
}
