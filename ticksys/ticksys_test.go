package ticksys

import (
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/provider"
)

// recorder collects events and checks the invariants as they arrive.
type recorder struct {
	t      *testing.T
	ticks  []TickEvent
	resets []ResetEvent
	lastP  int64
	haveP  bool
	lastS  nettime.Time
	haveS  bool
}

func record(t *testing.T, s *System) *recorder {
	r := &recorder{t: t}
	s.OnNetworkTick(func(ev TickEvent) {
		t.Helper()
		if r.haveP && ev.Predicted.Tick() != r.lastP+1 {
			t.Fatalf("predicted tick %d after %d", ev.Predicted.Tick(), r.lastP)
		}
		if ev.Predicted.TickOffset() != 0 {
			t.Fatalf("tick event at %v, not at the start of its tick", ev.Predicted)
		}
		if r.haveS && ev.Server.Before(r.lastS) {
			t.Fatalf("server time went backwards in events: %v after %v", ev.Server, r.lastS)
		}
		if got := s.PredictedTime(); got != ev.Predicted {
			t.Fatalf("PredictedTime in a callback = %v, want the tick's %v", got, ev.Predicted)
		}
		r.lastP, r.haveP = ev.Predicted.Tick(), true
		r.lastS, r.haveS = ev.Server, true
		r.ticks = append(r.ticks, ev)
	})
	s.OnReset(func(ev ResetEvent) {
		r.resets = append(r.resets, ev)
		// Continuity restarts after a reset.
		r.lastP = ev.NewPredicted.Tick()
		if ev.Reason == ReasonStall {
			r.lastP = ev.NewPredicted.Tick() - int64(s.cfg.MaxTicksPerAdvance)
		}
		r.haveS = false
	})
	return r
}

func mustNew(t *testing.T, cfg Config) *System {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEveryTickExactlyOnce walks windows of frames placed at random points
// of a 30-day session (and near the end of the accepted range) with jittery
// frame times, and checks that every predicted tick fires exactly once, in
// order. NGO's float ticks duplicated and skipped ticks here (#1495, #1905).
func TestEveryTickExactlyOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const day = 24 * time.Hour
	for _, rate := range []uint32{60, 128, 20, 30, 64, 144} {
		var starts []time.Duration
		for range 20 {
			starts = append(starts, time.Duration(rng.Int64N(int64(30*day))))
		}
		starts = append(starts, 0, -time.Hour, nettime.MaxDuration-time.Minute, -nettime.MaxDuration+time.Second)
		for _, start := range starts {
			s := mustNew(t, Config{TickRate: rate, Start: start})
			r := record(t, s)
			r.lastP, r.haveP = s.PredictedTime().Tick(), true
			first := r.lastP + 1
			var elapsed time.Duration
			for elapsed < 10*time.Second {
				dt := time.Duration(rng.Int64N(int64(40 * time.Millisecond)))
				if rng.IntN(10) == 0 {
					dt = time.Duration(rng.Int64N(20)) // sub-tick frames, even 0
				}
				s.Advance(dt)
				elapsed += dt
			}
			want := nettime.New(rate, start+elapsed).Tick() - first + 1
			if int64(len(r.ticks)) != want || len(r.resets) != 0 {
				t.Fatalf("%d Hz from %v: %d ticks and %d resets over %v, want %d ticks and no reset",
					rate, start, len(r.ticks), len(r.resets), elapsed, want)
			}
			if got := s.PredictedTime(); got != nettime.New(rate, start+elapsed) {
				t.Fatalf("predicted time %v, want %v", got, nettime.New(rate, start+elapsed))
			}
		}
	}
}

// TestEveryTickExactlyOnceWhileSlewing repeats the check with the client
// provider scaling time, so predicted and server run at different speeds.
func TestEveryTickExactlyOnceWhileSlewing(t *testing.T) {
	var now time.Duration
	c, err := provider.NewSteered(provider.SteeredConfig{Clock: func() time.Duration { return now }})
	if err != nil {
		t.Fatal(err)
	}
	c.SetEstimate(provider.Estimate{Valid: true, Offset: 10 * 24 * time.Hour, DriftPPM: 80,
		Uplink: 40 * time.Millisecond, Downlink: 60 * time.Millisecond})
	s := mustNew(t, Config{Provider: c})
	r := record(t, s)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 60 * 120 {
		if i%600 == 0 {
			// A new estimate 150ms away every 10s: slewed, never reset.
			e := c.Estimate()
			e.Offset += time.Duration((i/600)%2*2-1) * 150 * time.Millisecond
			c.SetEstimate(e)
		}
		dt := time.Second/60 + time.Duration(rng.Int64N(int64(4*time.Millisecond))) - 2*time.Millisecond
		now += dt
		s.Advance(dt)
	}
	if len(r.resets) != 0 {
		t.Fatalf("resets: %+v", r.resets)
	}
	if c.Status().PredictedScale == 1 {
		t.Error("the provider is not slewing; the test would not test anything")
	}
	if n := len(r.ticks); n < 60*110 {
		t.Errorf("only %d ticks in 120s", n)
	}
}

func TestStallIsCappedAndReported(t *testing.T) {
	s := mustNew(t, Config{TickRate: 60, MaxTicksPerAdvance: 15})
	r := record(t, s)
	s.Advance(17 * time.Millisecond) // tick 1 (it starts at 16666667ns)
	if n := s.Advance(time.Hour); n != 15 {
		t.Fatalf("Advance(1h) fired %d ticks, want 15", n)
	}
	if len(r.resets) != 1 {
		t.Fatalf("%d reset events, want 1", len(r.resets))
	}
	ev := r.resets[0]
	wantSkipped := int64(60*3600) - 15
	if ev.Reason != ReasonStall || ev.Skipped != wantSkipped {
		t.Errorf("reset = %v skipped %d, want stall skipped %d", ev.Reason, ev.Skipped, wantSkipped)
	}
	last := r.ticks[len(r.ticks)-1].Predicted.Tick()
	if want := int64(60*3600 + 1); last != want {
		t.Errorf("last tick %d, want %d (the newest ticks fire)", last, want)
	}
	s.Advance(17 * time.Millisecond)
	if got := r.ticks[len(r.ticks)-1].Predicted.Tick(); got != last+1 {
		t.Errorf("after the stall tick %d, want %d", got, last+1)
	}
	if diff := cmp.Diff(Stats{Ticks: 17, Resets: 1, Skipped: wantSkipped}, s.Stats()); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}

// scripted is a provider that does what the test says.
type scripted struct {
	jumpTo time.Duration
	back   bool
}

func (p *scripted) AdvanceTime(pr, sv *nettime.Time, dt time.Duration) bool {
	switch {
	case p.jumpTo != 0:
		*pr = nettime.New(pr.TickRate(), p.jumpTo)
		*sv = *pr
		p.jumpTo = 0
		return false
	case p.back:
		p.back = false
		*pr = pr.Add(-time.Second)
		*sv = *pr
		return true // lies: a backwards move is a reset all the same
	}
	*sv = sv.Add(dt)
	*pr = *sv
	return true
}

func (p *scripted) InitializeClient(pr, sv *nettime.Time) { *pr = *sv }

func TestHardResetFiresOneEventAndNoTicks(t *testing.T) {
	prov := &scripted{}
	s := mustNew(t, Config{Provider: prov})
	r := record(t, s)
	s.Advance(100 * time.Millisecond) // ticks 1..6
	prov.jumpTo = 10 * time.Second
	if n := s.Advance(17 * time.Millisecond); n != 0 {
		t.Errorf("a reset frame fired %d ticks", n)
	}
	prov.back = true
	s.Advance(17 * time.Millisecond)
	s.Advance(17 * time.Millisecond)

	got := make([]string, 0, len(r.resets))
	for _, ev := range r.resets {
		got = append(got, ev.Reason.String()+" "+ev.OldPredicted.String()+" -> "+ev.NewPredicted.String())
	}
	want := []string{
		"hard-reset 6+0s@60Hz -> 600+0s@60Hz",
		"hard-reset 600+0s@60Hz -> 540+0s@60Hz",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resets (-want +got):\n%s", diff)
	}
	// Ticks resume right after the tick a reset lands in.
	if last := r.ticks[len(r.ticks)-1].Predicted.Tick(); last != 541 {
		t.Errorf("last tick %d, want 541", last)
	}
}

// fixedLead is the RFC's sample custom provider: predicted time runs a fixed
// 100ms ahead of server time.
type fixedLead struct{}

func (fixedLead) AdvanceTime(predicted, server *nettime.Time, dt time.Duration) bool {
	*server = server.Add(dt)
	*predicted = server.Add(100 * time.Millisecond)
	return true
}

func (fixedLead) InitializeClient(predicted, server *nettime.Time) {
	*predicted = server.Add(100 * time.Millisecond)
}

func TestRFCSampleProvider(t *testing.T) {
	s := mustNew(t, Config{TickRate: 50, Provider: fixedLead{}})
	r := record(t, s)
	if d := s.PredictedTime().Sub(s.ServerTime()); d != 100*time.Millisecond {
		t.Fatalf("initial lead %v, want 100ms", d)
	}
	for range 100 {
		s.Advance(10 * time.Millisecond)
	}
	if d := s.PredictedTime().Sub(s.ServerTime()); d != 100*time.Millisecond {
		t.Errorf("lead %v, want 100ms", d)
	}
	// Predicted starts at tick 5 (100ms at 50 Hz); 1s later it is at tick 55.
	if len(r.ticks) != 50 || r.ticks[0].Predicted.Tick() != 6 {
		t.Fatalf("%d ticks starting at %d, want 50 from tick 6", len(r.ticks), r.ticks[0].Predicted.Tick())
	}
	for _, ev := range r.ticks {
		// The tick event's server time is exactly 100ms behind.
		if d := ev.Predicted.Sub(ev.Server); d != 100*time.Millisecond {
			t.Fatalf("tick %d: server %v is %v behind, want 100ms", ev.Predicted.Tick(), ev.Server, d)
		}
	}
}

func TestCallbacksMaySubscribeAndCancel(t *testing.T) {
	s := mustNew(t, Config{})
	var calls []string
	var cancelB func()
	var cancelA func()
	cancelA = s.OnNetworkTick(func(ev TickEvent) {
		calls = append(calls, "a")
		cancelA()                                                       // cancel itself
		cancelA()                                                       // twice is fine
		cancelB()                                                       // and a later subscriber, which must not run for this event
		s.OnNetworkTick(func(TickEvent) { calls = append(calls, "c") }) // from the next event on
	})
	cancelB = s.OnNetworkTick(func(TickEvent) { calls = append(calls, "b") })
	s.Advance(17 * time.Millisecond) // tick 1
	s.Advance(17 * time.Millisecond) // tick 2
	if diff := cmp.Diff([]string{"a", "c"}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestAdvanceFromCallbackPanics(t *testing.T) {
	s := mustNew(t, Config{})
	var msg any
	s.OnNetworkTick(func(TickEvent) {
		defer func() { msg = recover() }()
		s.Advance(time.Millisecond)
	})
	s.Advance(17 * time.Millisecond)
	if str, _ := msg.(string); !strings.Contains(str, "Advance called while") {
		t.Fatalf("recovered %v, want the reentrancy panic", msg)
	}
	// The system still works.
	if n := s.Advance(17 * time.Millisecond); n != 1 {
		t.Errorf("after the panic Advance fired %d ticks, want 1", n)
	}
}

func TestReinitialize(t *testing.T) {
	var now time.Duration
	c, err := provider.NewSteered(provider.SteeredConfig{Clock: func() time.Duration { return now }})
	if err != nil {
		t.Fatal(err)
	}
	s := mustNew(t, Config{Provider: c, TickRate: 30})
	r := record(t, s)
	// The server restarted: a new estimate, far from the old one.
	c.SetEstimate(provider.Estimate{Valid: true, Offset: time.Hour})
	s.Reinitialize()
	wantP := nettime.New(30, time.Hour+2*nettime.New(30, 0).FixedDelta())
	if len(r.resets) != 1 || r.resets[0].Reason != ReasonReinitialize || r.resets[0].NewPredicted != wantP {
		t.Fatalf("resets %+v, want one reinitialize to %v", r.resets, wantP)
	}
	ticks := 0
	for range 100 {
		now += 10 * time.Millisecond
		ticks += s.Advance(10 * time.Millisecond)
	}
	if ticks != 30 || len(r.resets) != 1 {
		t.Errorf("a second after reinitializing: %d ticks, %d resets; want 30 ticks, no new reset", ticks, len(r.resets))
	}
}

// TestRequestReinitialize asks from another goroutine: nothing happens
// until the next Advance, which reinitializes first (on its goroutine) and
// then advances from the new times; Reinitialize clears a pending request.
func TestRequestReinitialize(t *testing.T) {
	var now time.Duration
	c, err := provider.NewSteered(provider.SteeredConfig{Clock: func() time.Duration { return now }})
	if err != nil {
		t.Fatal(err)
	}
	s := mustNew(t, Config{Provider: c, TickRate: 30})
	r := record(t, s)
	c.SetEstimate(provider.Estimate{Valid: true, Offset: time.Hour})
	done := make(chan struct{})
	go func() { s.RequestReinitialize(); close(done) }()
	<-done
	if len(r.resets) != 0 {
		t.Fatalf("resets before Advance: %+v", r.resets)
	}
	now += 40 * time.Millisecond
	n := s.Advance(40 * time.Millisecond)
	if len(r.resets) != 1 || r.resets[0].Reason != ReasonReinitialize || r.resets[0].NewServer.Duration() < time.Hour {
		t.Fatalf("resets %+v, want one reinitialize onto the estimate's clock (an hour on)", r.resets)
	}
	// The reinitialization read the clock at this frame: no tick has passed
	// since, so the frame fires none and the next tick is the one after.
	if n != 0 || len(r.ticks) != 0 {
		t.Errorf("Advance fired %d ticks %+v after reinitializing, want 0", n, r.ticks)
	}
	now += 40 * time.Millisecond
	s.Advance(40 * time.Millisecond)
	if want := r.resets[0].NewPredicted.Tick() + 1; len(r.ticks) == 0 || r.ticks[0].Predicted.Tick() != want {
		t.Errorf("ticks %+v, want the first at tick %d", r.ticks, want)
	}
	s.RequestReinitialize()
	s.Reinitialize()
	now += 40 * time.Millisecond
	s.Advance(40 * time.Millisecond)
	if len(r.resets) != 2 || r.resets[1].Reason != ReasonReinitialize {
		t.Errorf("after Reinitialize with a request pending: resets %+v, want 2 (the request consumed)", r.resets)
	}
}

func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want error
	}{
		{"rate too high", Config{TickRate: nettime.MaxTickRate + 1}, nettime.ErrInvalidRate},
		{"negative cap", Config{MaxTicksPerAdvance: -1}, ErrInvalidConfig},
		{"start out of range", Config{Start: nettime.MaxDuration + 1}, nettime.ErrOutOfRange},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("New: %v, want %v wrapped in ErrInvalidConfig", err, tc.want)
			}
		})
	}
	s := mustNew(t, Config{})
	if s.TickRate() != 60 || s.cfg.MaxTicksPerAdvance != 15 {
		t.Errorf("defaults: %d Hz, cap %d; want 60 Hz, cap 15", s.TickRate(), s.cfg.MaxTicksPerAdvance)
	}
}

func TestDeterministic(t *testing.T) {
	run := func() []TickEvent {
		var now time.Duration
		c, _ := provider.NewSteered(provider.SteeredConfig{Clock: func() time.Duration { return now }})
		c.SetEstimate(provider.Estimate{Valid: true, Offset: time.Minute, DriftPPM: -40, Uplink: 30 * time.Millisecond})
		s := mustNew(t, Config{Provider: c})
		var evs []TickEvent
		s.OnNetworkTick(func(ev TickEvent) { evs = append(evs, ev) })
		rng := rand.New(rand.NewPCG(9, 9))
		for i := range 3000 {
			if i == 1000 {
				c.SetEstimate(provider.Estimate{Valid: true, Offset: time.Minute + 90*time.Millisecond, DriftPPM: -40})
			}
			dt := time.Duration(rng.Int64N(int64(30 * time.Millisecond)))
			now += dt
			s.Advance(dt)
		}
		return evs
	}
	a, b := run(), run()
	if len(a) < 1000 {
		t.Fatalf("only %d events", len(a))
	}
	if diff := cmp.Diff(a, b, cmp.Comparer(func(x, y nettime.Time) bool { return x == y })); diff != "" {
		t.Errorf("two identical runs differ:\n%s", diff)
	}
}

// TestConcurrentUse runs readers and subscribers beside the game loop; it
// proves its point under -race.
func TestConcurrentUse(t *testing.T) {
	s := mustNew(t, Config{})
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				_ = s.PredictedTime().Tick() + s.ServerTime().Tick()
				cancel := s.OnReset(func(ResetEvent) {})
				_ = s.Stats()
				cancel()
			}
		}()
	}
	ticks := 0
	cancel := s.OnNetworkTick(func(TickEvent) { ticks++ })
	for range 2000 {
		s.Advance(time.Millisecond)
	}
	close(done)
	wg.Wait()
	cancel()
	if ticks != 120 {
		t.Errorf("%d ticks in 2s at 60 Hz, want 120", ticks)
	}
}

func TestInterpolate(t *testing.T) {
	tests := []struct{ span, num, den, want time.Duration }{
		{100, 0, 10, 0},
		{100, 5, 10, 50},
		{100, 10, 10, 100},
		{100, 3, 7, 42},
		{nettime.MaxDuration, nettime.MaxDuration - 1, nettime.MaxDuration, nettime.MaxDuration - 1},
		{nettime.MaxDuration - 1, nettime.MaxDuration - 1, nettime.MaxDuration, nettime.MaxDuration - 2},
		{100, 5, 0, 100},
	}
	for _, tc := range tests {
		if got := interpolate(tc.span, tc.num, tc.den); got != tc.want {
			t.Errorf("interpolate(%d, %d, %d) = %d, want %d", tc.span, tc.num, tc.den, got, tc.want)
		}
	}
}
