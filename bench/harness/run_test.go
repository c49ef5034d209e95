package harness

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/netclock/netclock/netsim"
)

func profile(t *testing.T, name string) netsim.Profile {
	t.Helper()
	p, ok := netsim.ProfileByName(name)
	if !ok {
		t.Fatalf("no profile %q", name)
	}
	return p
}

func TestRunIsDeterministic(t *testing.T) {
	o := Options{Profile: profile(t, "ue-bad"), Duration: time.Minute, Seed: 7}
	a, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Run(o)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two runs with one seed differ:\n%s", diff)
	}
	o.Seed = 8
	c, _ := Run(o)
	if cmp.Equal(a.Results, c.Results) {
		t.Error("another seed gave identical results")
	}
}

func TestSystemsAreNetclockThenTheSeeds(t *testing.T) {
	var got []string
	for _, s := range Systems() {
		got = append(got, s.Name)
	}
	want := []string{"netclock", "ue-vanilla", "sutphin-rtt2", "vorixo-min-rtt", "vorixo-window", "median11", "simpson", "ngo"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("systems (-want +got):\n%s", diff)
	}
}

func TestReportJSONShape(t *testing.T) {
	rep, err := Run(Options{Profile: profile(t, "fiber"), Duration: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]any) []string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		return k
	}
	sorted := cmp.Transformer("sort", func(in []string) map[string]bool {
		out := map[string]bool{}
		for _, s := range in {
			out[s] = true
		}
		return out
	})
	if diff := cmp.Diff([]string{"profile", "seed", "duration_s", "results"}, keys(doc), sorted); diff != "" {
		t.Errorf("top-level keys (-want +got):\n%s", diff)
	}
	results := doc["results"].([]any)
	if len(results) != len(Systems()) {
		t.Fatalf("%d results, want %d", len(results), len(Systems()))
	}
	for _, r := range results {
		r := r.(map[string]any)
		if diff := cmp.Diff([]string{"system", "kind", "ping_s", "shared_error_ms", "converge_s", "resets", "bound_coverage",
			"rate_p99_ppm", "reversals_per_min"}, keys(r), sorted); diff != "" {
			t.Errorf("%v keys (-want +got):\n%s", r["system"], diff)
		}
		if diff := cmp.Diff([]string{"p50", "p99", "p999", "max"}, keys(r["shared_error_ms"].(map[string]any)), sorted); diff != "" {
			t.Errorf("%v error keys (-want +got):\n%s", r["system"], diff)
		}
		// Systems without a bound report null.
		if _, isNull := r["bound_coverage"].(float64); isNull != (r["system"] == "netclock") {
			t.Errorf("%v bound_coverage = %v", r["system"], r["bound_coverage"])
		}
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	bad := profile(t, "fiber")
	bad.Up.Loss = 2
	for name, o := range map[string]Options{
		"warm-up too long": {Profile: profile(t, "fiber"), Duration: time.Second, Warmup: 2 * time.Second},
		"negative":         {Profile: profile(t, "fiber"), Duration: -time.Second},
		"invalid profile":  {Profile: bad},
		"too long":         {Profile: profile(t, "fiber"), Duration: 1000000 * time.Hour},
	} {
		if _, err := Run(o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	fast := profile(t, "fiber")
	fast.Frames.Interval = time.Millisecond
	if _, err := Run(Options{Profile: fast, Duration: 3 * time.Hour}); err == nil {
		t.Error("10.8M frames accepted")
	}
}

// TestAccuracyTargets pins the accuracy the issue asks of netclock on the
// harness, each against the best seed system in the same run, as the median
// over seeds 1-5 (single runs of three minutes are noisy: the connect
// transient sets p99). The runs are in virtual time: deterministic,
// independent of the machine.
func TestAccuracyTargets(t *testing.T) {
	tests := []struct {
		profile          string
		p50, p99         float64 // ms; 0: no target
		convergeS        float64 // 0: no target
		thirdOfBestSeed  bool
		minBoundCoverage float64
		// stepped: a route change mid-run moves predicted time's target
		// (the uplink grew), which is slewed at up to MaxScaleDeviation
		// for a few seconds; the ±0.5% rate target holds once converged.
		stepped bool
	}{
		{profile: "broadband", p99: 2, convergeS: 1, thirdOfBestSeed: true, minBoundCoverage: 0.99},
		{profile: "mobile-4g", p99: 3, thirdOfBestSeed: true, minBoundCoverage: 0.99},
		{profile: "ue-bad", p50: 1.5, p99: 8, convergeS: 3, thirdOfBestSeed: true, minBoundCoverage: 0.99},
		{profile: "asymmetric-jitter", p99: 2, thirdOfBestSeed: true, minBoundCoverage: 0.99},
		{profile: "latency-step", thirdOfBestSeed: true, minBoundCoverage: 0.99, stepped: true},
		{profile: "uplink-step", thirdOfBestSeed: true, minBoundCoverage: 0.99, stepped: true},
		{profile: "outage-10s", p99: 0.5, thirdOfBestSeed: true, minBoundCoverage: 0.99},
		{profile: "drift-500ppm", thirdOfBestSeed: true, minBoundCoverage: 0.99},
	}
	med := func(v []float64) float64 {
		slices.Sort(v)
		return v[len(v)/2]
	}
	for _, tc := range tests {
		t.Run(tc.profile, func(t *testing.T) {
			t.Parallel()
			var p50, p99, ratio, conv, cov, rate []float64
			resets := 0
			for seed := uint64(1); seed <= 5; seed++ {
				rep, err := Run(Options{Profile: profile(t, tc.profile), Seed: seed, Duration: 3 * time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				nc, seeds := rep.Results[0], rep.Results[1:]
				best := math.Inf(1)
				for _, s := range seeds {
					best = min(best, s.SharedErrorMS.P99)
				}
				p50 = append(p50, nc.SharedErrorMS.P50)
				p99 = append(p99, nc.SharedErrorMS.P99)
				ratio = append(ratio, nc.SharedErrorMS.P99/best)
				c := math.Inf(1)
				if nc.ConvergeS != nil {
					c = *nc.ConvergeS
				}
				conv = append(conv, c)
				k := 0.0
				if nc.BoundCoverage != nil {
					k = *nc.BoundCoverage
				}
				cov = append(cov, k)
				rate = append(rate, nc.RateP99PPM)
				resets += nc.Resets
			}
			if m := med(p50); tc.p50 > 0 && m > tc.p50 {
				t.Errorf("median p50 %.3f ms, want <= %v", m, tc.p50)
			}
			if m := med(p99); tc.p99 > 0 && m > tc.p99 {
				t.Errorf("median p99 %.3f ms, want <= %v", m, tc.p99)
			}
			if m := med(conv); tc.convergeS > 0 && m > tc.convergeS {
				t.Errorf("median convergence %v s, want <= %v", m, tc.convergeS)
			}
			if m := med(ratio); tc.thirdOfBestSeed && m > 1.0/3 {
				t.Errorf("median p99 %.2f of the best seed's, want <= 1/3 (per seed %.2f)", m, ratio)
			}
			if m := med(cov); m < tc.minBoundCoverage {
				t.Errorf("median bound coverage %v, want >= %v", m, tc.minBoundCoverage)
			}
			if resets != 0 {
				t.Errorf("%d hard resets in steady state over 5 seeds", resets)
			}
			if m := med(rate); !tc.stepped && m > 5000 {
				t.Errorf("median tick rate p99 off by %.0f ppm, want within ±0.5%%", m)
			}
		})
	}
}

func TestFixedAsymmetryIsThePhysicalLimit(t *testing.T) {
	rep, err := Run(Options{Profile: profile(t, "fixed-asymmetry"), Duration: 2 * time.Minute, Systems: []System{Netclock()}})
	if err != nil {
		t.Fatal(err)
	}
	// Uplink 40ms, downlink 10ms: half the 30ms asymmetry, within 1ms.
	if e := rep.Results[0].SharedErrorMS; math.Abs(e.P50-15) > 1 || math.Abs(e.Max-15) > 1 {
		t.Errorf("error p50 %.3f max %.3f ms, want 15 ±1", e.P50, e.Max)
	}
}

func TestClockJumpRecoversWithinASecond(t *testing.T) {
	p := profile(t, "clock-jump") // the client clock jumps +2s at 60s
	rep, err := Run(Options{Profile: p, Duration: 2 * time.Minute, Systems: []System{Netclock()}, TraceEvery: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	jump := p.Client.Jumps[0].At.Seconds()
	var lastBad float64
	for _, tp := range rep.Results[0].Trace {
		if tp.T >= jump && math.Abs(tp.ErrMS) > 5 {
			lastBad = tp.T
		}
	}
	if lastBad == 0 {
		t.Fatal("the jump never showed in the error: the test would not test anything")
	}
	if d := lastBad - jump; d >= 1 {
		t.Errorf("back within 5ms %.2f s after the jump, want under 1 s", d)
	}
}

func TestQuantile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for q, want := range map[float64]float64{0.5: 5, 0.99: 10, 0.1: 1, 1: 10, 0: 1} {
		if got := quantile(v, q); got != want {
			t.Errorf("quantile(%v) = %v, want %v", q, got, want)
		}
	}
	if quantile(nil, 0.5) != 0 {
		t.Error("quantile of nothing is not 0")
	}
}

func TestTraceCarriesTheBound(t *testing.T) {
	var ngo System
	for _, s := range Baselines() {
		if s.Name == "ngo" {
			ngo = s
		}
	}
	rep, err := Run(Options{Profile: profile(t, "broadband"), Duration: 30 * time.Second,
		Systems: []System{Netclock(), ngo}, TraceEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	nc, bl := rep.Results[0].Trace, rep.Results[1].Trace
	if len(nc) < 250 || len(bl) < 250 {
		t.Fatalf("traces of %d and %d points, want about 280", len(nc), len(bl))
	}
	for _, tp := range nc {
		if tp.T >= 5 && !(tp.BoundMS > 0) {
			t.Fatalf("netclock at %.1f s: bound %v ms, want > 0", tp.T, tp.BoundMS)
		}
	}
	for _, tp := range bl {
		if tp.BoundMS != 0 {
			t.Fatalf("ngo publishes no bound, but its trace at %.1f s has %v ms", tp.T, tp.BoundMS)
		}
	}
}
