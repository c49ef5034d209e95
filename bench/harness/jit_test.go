package harness

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/netclock/netclock/netsim"
)

func TestOnTime(t *testing.T) {
	for _, tc := range []struct {
		name  string
		leads []float64
		want  float64
	}{
		{"none", nil, 0},
		{"all early", []float64{1, 2, 3}, 1},
		{"exactly at the tick is on time", []float64{0}, 1},
		{"one late of four", []float64{-0.001, 0, 5, 10}, 0.75},
		{"all late", []float64{-1, -2}, 0},
	} {
		if got := OnTime(tc.leads); got != tc.want {
			t.Errorf("%s: OnTime(%v) = %v, want %v", tc.name, tc.leads, got, tc.want)
		}
	}
}

func seq(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(n - i) // descending: the functions must not need sorted input
	}
	return v
}

func TestOracleLead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		delays []float64
		q      float64
		want   float64
	}{
		{"none", nil, 0.99, 0},
		{"one", []float64{7}, 0.99, 7},
		{"1..100: the 99th", seq(100), 0.99, 99},
		{"1..10: 99% needs all", seq(10), 0.99, 10},
		{"median of three", []float64{3, 1, 2}, 0.5, 2},
		{"constant", []float64{10, 10, 10, 10}, 0.99, 10},
	} {
		if got := OracleLead(tc.delays, tc.q); got != tc.want {
			t.Errorf("%s: OracleLead = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestOracleInterpDelay(t *testing.T) {
	for _, tc := range []struct {
		name  string
		needs []float64
		q     float64
		want  float64
	}{
		{"none", nil, 0.01, 0},
		// 100 frames: starving the one that needs 100 is 1%.
		{"1..100 at 1%", seq(100), 0.01, 99},
		// 10 frames: starving any is 10%, so all must be fed.
		{"1..10 at 1%", seq(10), 0.01, 10},
		{"1..10 at 20%", seq(10), 0.2, 8},
		{"negative need (snapshot ahead of truth)", []float64{-2, -1}, 0.01, -1},
	} {
		if got := OracleInterpDelay(tc.needs, tc.q); got != tc.want {
			t.Errorf("%s: OracleInterpDelay = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSnapshotsFed(t *testing.T) {
	var s snapshots
	if s.fed(0) {
		t.Error("fed with no snapshot")
	}
	for _, at := range []time.Duration{30, 10, 20, 20} { // out of order, a duplicate
		s.add(at)
	}
	if diff := cmp.Diff([]time.Duration{10, 20, 30}, s.at); diff != "" {
		t.Errorf("received (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{
		{5, false},  // before the oldest: nothing at or before
		{10, true},  // on a snapshot
		{15, true},  // between two
		{30, true},  // on the newest
		{31, false}, // past the newest: starved
	} {
		if got := s.fed(tc.at); got != tc.want {
			t.Errorf("fed(%v) = %v, want %v", tc.at, got, tc.want)
		}
	}
	if n, ok := s.newest(); !ok || n != 30 {
		t.Errorf("newest = %v, %v; want 30, true", n, ok)
	}
}

func TestTickSet(t *testing.T) {
	var b tickSet
	for i, tc := range []struct {
		k    int64
		want bool
	}{{3, true}, {3, false}, {-1, false}, {200, true}, {64, true}, {200, false}, {0, true}} {
		if got := b.add(tc.k); got != tc.want {
			t.Errorf("step %d: add(%d) = %v, want %v", i, tc.k, got, tc.want)
		}
	}
}

func TestMeanP99(t *testing.T) {
	for _, tc := range []struct {
		v    []float64
		want MeanP99
	}{
		{nil, MeanP99{}},
		{[]float64{2}, MeanP99{2, 2}},
		{seq(100), MeanP99{50.5, 99}},
		{[]float64{-3, 1}, MeanP99{-1, 1}},
	} {
		if got := meanP99(tc.v); got != tc.want {
			t.Errorf("meanP99 = %+v, want %+v", got, tc.want)
		}
	}
}

func TestEMA(t *testing.T) {
	e := newEMA(3) // alpha 0.5
	for _, x := range []float64{4, 8, 8} {
		e.add(x)
	}
	// mean: 4 → 6 → 7; variance: 0 → 0.5·(0+0.5·16)=4 → 0.5·(4+0.5·4)=3.
	if e.mean != 7 || e.variance != 3 {
		t.Errorf("ema mean, variance = %v, %v; want 7, 3", e.mean, e.variance)
	}
}

// A perfect network with fixed delays: the oracle is exact and every
// model with a margin puts every input on time.
func TestBuffersFixedDelays(t *testing.T) {
	p := netsim.Profile{Name: "fixed", Up: netsim.LinkSpec{Base: 10 * time.Millisecond},
		Down: netsim.LinkSpec{Base: 10 * time.Millisecond}}
	rep, err := Run(Options{Profile: p, Duration: time.Minute, Systems: []System{Netclock()}, Buffers: &BufferOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if *r.OracleTickSendLeadMS != 10 || *r.OracleTickLeadMS != 0 {
		t.Errorf("tick-start oracle send lead, lead = %v, %v ms; want 10, 0 (every input takes 10 ms)", *r.OracleTickSendLeadMS, *r.OracleTickLeadMS)
	}
	// A client sending at its 60 Hz frames: 10 ms plus up to a frame's
	// phase after the tick, and its inputs arrive up to a frame early.
	if l, m := *r.OracleSendLeadMS, *r.OracleLeadMS; l < 10 || l > 10+ms(netsim.DefaultFrameInterval) || m < 0 || m > ms(netsim.DefaultFrameInterval) {
		t.Errorf("frame oracle send lead, lead = %v, %v ms; want in [10, 26.7], [0, 16.7]", l, m)
	}
	// The newest snapshot is 10 ms plus the frame's phase after its tick
	// old.
	if o := *r.OracleInterpDelayMS; o < 10 || o > 10+ms(ServerFrame) {
		t.Errorf("oracle interpolation delay %v ms, want in [10, 26.7]", o)
	}
	byName := map[string]BufferResult{}
	for _, b := range r.Buffers {
		byName[b.Model] = b
		if b.InputsLost != 0 {
			t.Errorf("%s: %v inputs lost on a lossless link", b.Model, b.InputsLost)
		}
	}
	if len(byName) != len(BufferModels()) {
		t.Fatalf("got %d models, want %d", len(byName), len(BufferModels()))
	}
	for _, name := range []string{"netclock-fixed", "n4e"} {
		if b := byName[name]; b.InputsOnTime != 1 || b.StarvedFrames != 0 {
			t.Errorf("%s: on time %v, starved %v; want 1, 0", name, b.InputsOnTime, b.StarvedFrames)
		}
	}
	// netclock's fixed buffers: 2 ticks ahead of the uplink (less the
	// frame's phase), 1 tick behind the downlink.
	nc := byName["netclock-fixed"]
	if d := nc.InterpDelayMS.Mean; math.Abs(d-(10+ms(ServerFrame))) > 0.5 {
		t.Errorf("netclock-fixed interpolation delay %v ms, want 26.7±0.5", d)
	}
	if l := nc.InputLeadMS.Mean; l < ms(ServerFrame) || l > 2*ms(ServerFrame)+0.5 {
		t.Errorf("netclock-fixed input lead %v ms, want in [1, 2] ticks", l)
	}
}

// The measurements must not move any figure of the clock, for any system,
// and must be deterministic.
func TestBuffersLeaveResultsAlone(t *testing.T) {
	p, _ := netsim.ProfileByName("broadband")
	o := Options{Profile: p, Duration: 40 * time.Second, Systems: AllSystems()}
	plain, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	o.Buffers = &BufferOptions{SnapshotEvery: 2}
	with, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(with, again); diff != "" {
		t.Errorf("two runs differ (-first +second):\n%s", diff)
	}
	measured := 0
	for i := range with.Results {
		r := &with.Results[i]
		if r.Buffers != nil {
			measured++
		}
		r.Buffers, r.OracleLeadMS, r.OracleSendLeadMS, r.OracleInterpDelayMS = nil, nil, nil, nil
		r.OracleTickLeadMS, r.OracleTickSendLeadMS = nil, nil
	}
	if measured != 1 {
		t.Errorf("%d systems measured, want 1 (netclock)", measured)
	}
	if diff := cmp.Diff(plain, with); diff != "" {
		t.Errorf("buffer measurements changed the clock's results (-without +with):\n%s", diff)
	}
}

// On lan, netclock's fixed buffers put inputs on time and starve almost
// no frame; every model's rates are fractions.
func TestBuffersLAN(t *testing.T) {
	p, _ := netsim.ProfileByName("lan")
	rep, err := Run(Options{Profile: p, Duration: 2 * time.Minute, Systems: []System{Netclock()}, Buffers: &BufferOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	for _, b := range r.Buffers {
		for name, f := range map[string]float64{"on time": b.InputsOnTime, "lost": b.InputsLost, "starved": b.StarvedFrames} {
			if f < 0 || f > 1 {
				t.Errorf("%s: %s = %v, not a fraction", b.Model, name, f)
			}
		}
		if b.Model == "netclock-fixed" && (b.InputsOnTime < 0.99 || b.StarvedFrames > 0.01) {
			t.Errorf("netclock-fixed on lan: inputs on time %v, starved %v; want ≥ 99%%, ≤ 1%%", b.InputsOnTime, b.StarvedFrames)
		}
	}
}

func TestSnapshotsForgetOld(t *testing.T) {
	var s snapshots
	tick := ServerFrame
	n := 4000 // 66 s of 60 Hz snapshots
	for k := range n {
		s.add(time.Duration(k) * tick)
	}
	newest, _ := s.newest()
	if newest != time.Duration(n-1)*tick {
		t.Errorf("newest %v, want %v", newest, time.Duration(n-1)*tick)
	}
	if oldest := s.at[0]; newest-oldest > keepSnapshots+1024*tick || len(s.at) >= 2048 {
		t.Errorf("kept %d snapshots back to %v before the newest", len(s.at), newest-oldest)
	}
	if !s.fed(newest-keepSnapshots/2) || s.fed(0) {
		t.Error("fed: want the last 5 s fed and the first snapshot forgotten")
	}
}

func TestBufferModelValidation(t *testing.T) {
	p := netsim.Profile{Name: "perfect"}
	for _, b := range []BufferOptions{
		{SnapshotEvery: -1},
		{Models: []BufferModel{{Name: "no-new"}}},
		{Models: []BufferModel{{New: BufferModels()[0].New}}},
	} {
		if _, err := Run(Options{Profile: p, Duration: 20 * time.Second, Systems: []System{Netclock()}, Buffers: &b}); err == nil {
			t.Errorf("%+v: no error", b)
		}
	}
}

func TestSummarizeBuffers(t *testing.T) {
	run := func(onTime, lead, starved, delay, oLead, oInt float64) suiteRun {
		return suiteRun{oracleLead: oLead, oracleTickLead: oLead - 4, oracleInt: oInt, buffers: []BufferResult{{Model: "m", InputsOnTime: onTime,
			InputLeadMS: MeanP99{lead, 2 * lead}, StarvedFrames: starved, InterpDelayMS: MeanP99{delay, delay + 1}}}}
	}
	var sr ScenarioResult
	noLead := run(0.8, 5, 0, 45, math.NaN(), 45) // no lead reached 99%: left out of the spread
	summarizeBuffers(&sr, []suiteRun{run(0.9, 10, 0.1, 50, 5, 40), run(1, 30, 0, 70, 7, 60), run(0.95, 20, 0.2, 60, 6, 50)})
	want := ScenarioResult{
		OracleLeadMS:        &Spread{6, 5, 7},
		OracleTickLeadMS:    &Spread{2, 1, 3},
		OracleInterpDelayMS: &Spread{50, 40, 60},
		Buffers: []BufferSummary{{Model: "m", InputsOnTime: Spread{0.95, 0.9, 1}, InputsLost: Spread{0, 0, 0},
			InputLeadMS: MeanP99Spread{Spread{20, 10, 30}, Spread{40, 20, 60}}, StarvedFrames: Spread{0.1, 0, 0.2},
			InterpDelayMS: MeanP99Spread{Spread{60, 50, 70}, Spread{61, 51, 71}}}},
	}
	if diff := cmp.Diff(want, sr); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	var partial ScenarioResult
	summarizeBuffers(&partial, []suiteRun{run(0.9, 10, 0.1, 50, 5, 40), noLead, run(1, 30, 0, 70, 7, 60)})
	if got, want := *partial.OracleLeadMS, (Spread{6, 5, 7}); got != want {
		t.Errorf("oracle lead with a run without one: %v, want %v", got, want)
	}
	var none ScenarioResult
	summarizeBuffers(&none, []suiteRun{{}})
	if none.Buffers != nil || none.OracleLeadMS != nil {
		t.Errorf("without buffers: %+v", none)
	}
}

func TestSuiteBuffers(t *testing.T) {
	p, _ := netsim.ProfileByName("lan")
	rep, err := RunSuite(t.Context(), SuiteOptions{Profiles: []netsim.Profile{p}, Seeds: 2, Duration: 40 * time.Second,
		Systems: []System{Netclock()}, Buffers: &BufferOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if len(r.Buffers) != len(BufferModels()) || r.OracleLeadMS == nil || r.OracleInterpDelayMS == nil {
		t.Fatalf("scenario %+v", r)
	}
	if nc := r.Buffers[1]; nc.Model != "netclock-fixed" || nc.InputsOnTime.Min < 0.99 {
		t.Errorf("netclock-fixed on lan: %+v", nc)
	}
	// The adaptive buffers: their interpolation delay is sized from the
	// downlink at once; their lead needs the server's feedback, which a
	// 40 s run with a 10 s warm-up only begins to settle.
	if ad := r.Buffers[0]; ad.Model != "netclock-adaptive" || ad.StarvedFrames.Max > 0.01 || ad.InputsOnTime.Min < 0.9 {
		t.Errorf("netclock-adaptive on lan: %+v", ad)
	}
}
