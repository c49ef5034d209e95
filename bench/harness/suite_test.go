package harness

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/netclock/netclock/netsim"
)

func TestRunSuite(t *testing.T) {
	o := SuiteOptions{Scenarios: 3, First: 11, Seeds: 2, Duration: 30 * time.Second, Worst: 2}
	a, err := RunSuite(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.Parallel = 1
	b, err := RunSuite(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("parallel and serial suites differ:\n%s", diff)
	}
	if len(a.Results) != 3 || len(a.Worst) != 2 || len(a.LowestCoverage) != 2 || a.VsSeed == nil || a.VsRef == nil {
		t.Fatalf("report %+v", a)
	}
	for i, r := range a.Results {
		if r.Scenario != 11+uint64(i) || r.Description == "" || r.WorstSeed < 1 || r.WorstSeed > 2 ||
			r.VsSeed == nil || r.VsRef == nil || r.VsSeed.Min > r.VsSeed.Median || r.VsSeed.Median > r.VsSeed.Max {
			t.Errorf("scenario %+v", r)
		}
		if r.BestSeed == "" || r.BestRef == "" {
			t.Errorf("scenario %d: best seed %q, best ref %q", r.Scenario, r.BestSeed, r.BestRef)
		}
	}
	for i := 1; i < len(a.Worst); i++ {
		if a.Worst[i].Worst() > a.Worst[i-1].Worst() {
			t.Errorf("worst list not sorted: %v after %v", a.Worst[i].Worst(), a.Worst[i-1].Worst())
		}
	}
	if a.VsRef.Median < a.VsRef.Min || a.VsRef.P90 > a.VsRef.Max {
		t.Errorf("distribution %+v", a.VsRef)
	}
	// The worst run reproduces: the same scenario and seed give the same ratio.
	w := a.Worst[0]
	rep, err := Run(Options{Profile: netsim.RandomProfile(w.Scenario), Seed: w.WorstSeed, Duration: 30 * time.Second, Systems: AllSystems()})
	if err != nil {
		t.Fatal(err)
	}
	r := summarizeRun(rep)
	if got := max(nanTo0(r.vsSeed), nanTo0(r.vsRef)); got != w.WorstRatio || got < w.VsSeed.Max || got < w.VsRef.Max {
		t.Errorf("reproducing scenario %d seed %d: ratio %v, suite %+v %+v %+v", w.Scenario, w.WorstSeed, got, w, *w.VsSeed, *w.VsRef)
	}
	if _, err := json.Marshal(a); err != nil {
		t.Error(err)
	}
	if _, err := RunSuite(context.Background(), SuiteOptions{Scenarios: 1, Systems: Baselines()}); err == nil {
		t.Error("a suite without netclock accepted")
	}
	if _, err := RunSuite(context.Background(), SuiteOptions{}); err == nil {
		t.Error("an empty suite accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunSuite(ctx, SuiteOptions{Scenarios: 50, Duration: time.Minute}); err == nil {
		t.Error("a cancelled suite ran")
	}
}

// TestRunSuiteOnProfiles runs given profiles instead of random scenarios:
// one result per profile, in order, named after it.
func TestRunSuiteOnProfiles(t *testing.T) {
	var ps []netsim.Profile
	for _, name := range []string{"fiber", "uplink-step"} {
		ps = append(ps, profile(t, name))
	}
	rep, err := RunSuite(context.Background(), SuiteOptions{Profiles: ps, Seeds: 2, Duration: 30 * time.Second, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rep.Results {
		names = append(names, r.Name)
		if r.Scenario != 0 {
			t.Errorf("%s: scenario %d, want 0 for a named profile", r.Name, r.Scenario)
		}
		if r.VsSeed == nil || r.VsRef == nil || r.P99MS.Median <= 0 {
			t.Errorf("%s: missing figures %+v", r.Name, r)
		}
	}
	if diff := cmp.Diff([]string{"fiber", "uplink-step"}, names); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}
