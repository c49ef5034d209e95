package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/netclock/netclock/netsim"
)

// SuiteOptions configure RunSuite.
type SuiteOptions struct {
	// Scenarios is the number of scenarios: netsim.RandomProfile(First),
	// RandomProfile(First+1), ... Required.
	Scenarios int
	// First is the first scenario's seed. Default 1.
	First uint64
	// Seeds is the number of run seeds (1..Seeds) per scenario. Default 5.
	Seeds int
	// Duration of each run. Default netsim.RandomHorizon (20 minutes).
	Duration time.Duration
	// Warmup as in Options. Default 10s.
	Warmup time.Duration
	// Systems to run; they must include netclock (KindNetclock) and at
	// least one seed or reference. Default AllSystems().
	Systems []System
	// Parallel is the number of runs at once. Default GOMAXPROCS.
	Parallel int
	// Worst is how many worst scenarios to list. Default 10.
	Worst int
	// Profiles, if set, are run instead of random scenarios (Scenarios and
	// First are then ignored): the named profiles, say, as a table of
	// medians over run seeds.
	Profiles []netsim.Profile
	// Buffers, if set, measures inputs and interpolation as in Options;
	// each ScenarioResult then holds the medians.
	Buffers *BufferOptions
}

// Spread is the median and range of a figure over several values.
type Spread struct {
	Median float64 `json:"median"` // the median value
	Min    float64 `json:"min"`    // the smallest value
	Max    float64 `json:"max"`    // the largest value
}

// Distribution summarizes a figure over the scenarios: its median, its
// 90th percentile and its maximum (for coverage, where low is bad, P10 and
// Min are the tail).
type Distribution struct {
	Median float64 `json:"median"` // over the scenarios
	P10    float64 `json:"p10"`    // 10th percentile
	P90    float64 `json:"p90"`    // 90th percentile
	Min    float64 `json:"min"`    // smallest
	Max    float64 `json:"max"`    // largest
}

// ScenarioResult is netclock on one scenario, over the run seeds.
type ScenarioResult struct {
	// Scenario is the scenario's seed: -profile random:<Scenario> (0 when
	// SuiteOptions.Profiles were run).
	Scenario uint64 `json:"scenario"`
	// Name and Description are the profile's.
	Name        string `json:"name"`
	Description string `json:"description"`
	// P99MS is netclock's p99 |error| in ms.
	P99MS Spread `json:"p99_ms"`
	// VsSeed is netclock's p99 over the best seed system's (in each run).
	VsSeed *Spread `json:"vs_best_seed,omitempty"`
	// VsRef is netclock's p99 over the best reference filter's.
	VsRef *Spread `json:"vs_best_ref,omitempty"`
	// Coverage is netclock's bound coverage.
	Coverage Spread `json:"bound_coverage"`
	// AsymmetryMS is |up − down| of the base floors at the start, in ms:
	// a fixed asymmetry puts every two-way system at A/2.
	AsymmetryMS float64 `json:"asymmetry_ms"`
	// WorstSeed is the run seed of the highest ratio to the best of
	// seeds and references: -seed <WorstSeed>.
	WorstSeed uint64 `json:"worst_seed"`
	// WorstRatio is that run's ratio.
	WorstRatio float64 `json:"worst_ratio"`
	// BestSeed and BestRef name the best seed system and reference in the
	// worst run.
	BestSeed string `json:"best_seed,omitempty"`
	BestRef  string `json:"best_ref,omitempty"`
	// Buffers holds each buffer model's measurements over the run seeds,
	// and OracleLeadMS, OracleTickLeadMS, OracleInterpDelayMS the
	// oracle's (Result's fields of the same names; with
	// SuiteOptions.Buffers).
	Buffers             []BufferSummary `json:"buffers,omitempty"`
	OracleLeadMS        *Spread         `json:"oracle_lead_ms,omitempty"`
	OracleTickLeadMS    *Spread         `json:"oracle_tick_lead_ms,omitempty"`
	OracleInterpDelayMS *Spread         `json:"oracle_interp_delay_ms,omitempty"`
}

// BufferSummary is a BufferResult over several run seeds: each figure's
// median and range (the means and p99s of each run, summarized).
type BufferSummary struct {
	// Model names the buffer model; the other fields are BufferResult's.
	Model         string        `json:"model"`
	InputsOnTime  Spread        `json:"inputs_on_time"`
	InputsLost    Spread        `json:"inputs_lost"`
	InputLeadMS   MeanP99Spread `json:"input_lead_ms"`
	StarvedFrames Spread        `json:"starved_frames"`
	InterpDelayMS MeanP99Spread `json:"interp_delay_ms"`
}

// MeanP99Spread is a MeanP99 over several run seeds.
type MeanP99Spread struct {
	// Mean and P99 summarize each run's MeanP99.
	Mean Spread `json:"mean"`
	P99  Spread `json:"p99"`
}

// Worst is the larger of the two median ratios.
func (s ScenarioResult) Worst() float64 {
	w := 0.0
	if s.VsSeed != nil {
		w = s.VsSeed.Median
	}
	if s.VsRef != nil {
		w = max(w, s.VsRef.Median)
	}
	return w
}

// SymmetricMS is the largest difference of the starting up and down floors
// (ms) of a scenario counted as without a fixed asymmetry.
const SymmetricMS = 0.1

// SuiteReport is the outcome of RunSuite.
type SuiteReport struct {
	// Scenarios, First, Seeds and DurationS are the suite's options: how
	// many scenarios from which first one, run seeds each, seconds each.
	Scenarios int     `json:"scenarios"`
	First     uint64  `json:"first"`
	Seeds     int     `json:"seeds"`
	DurationS float64 `json:"duration_s"`
	// VsSeed, VsRef and Coverage are distributions over the scenarios of
	// each scenario's median over its run seeds.
	// VsSeed (VsRef) is nil when no seed (reference) ran.
	VsSeed   *Distribution `json:"vs_best_seed"`
	VsRef    *Distribution `json:"vs_best_ref"`
	Coverage Distribution  `json:"bound_coverage"`
	// CoverageSymmetric is Coverage over the scenarios without a fixed
	// asymmetry (starting floors within SymmetricMS), where the bound
	// must hold; nil if there are none. Symmetric counts them.
	CoverageSymmetric *Distribution `json:"bound_coverage_symmetric"`
	Symmetric         int           `json:"symmetric"`
	// Worst lists the scenarios with the highest Worst ratio, worst first;
	// LowestCoverage those with the lowest median coverage.
	Worst          []ScenarioResult `json:"worst"`
	LowestCoverage []ScenarioResult `json:"lowest_coverage"`
	// Results holds every scenario, in scenario order.
	Results []ScenarioResult `json:"results"`
}

type suiteRun struct {
	p99, vsSeed, vsRef, cov float64
	bestSeed, bestRef       string
	buffers                 []BufferResult
	oracleLead, oracleInt   float64
	oracleTickLead          float64
}

// RunSuite runs every system on Scenarios random scenarios with Seeds run
// seeds each, Parallel runs at a time, and summarizes netclock against the
// best seed system and the best reference filter of each run. It stops
// early with ctx's error if ctx is done.
func RunSuite(ctx context.Context, o SuiteOptions) (SuiteReport, error) {
	if o.Profiles != nil {
		o.Scenarios, o.First = len(o.Profiles), 1
	}
	if o.Scenarios <= 0 {
		return SuiteReport{}, errors.New("harness: suite needs at least one scenario")
	}
	if o.First == 0 {
		o.First = 1
	}
	if o.Seeds <= 0 {
		o.Seeds = 5
	}
	if o.Duration == 0 {
		o.Duration = netsim.RandomHorizon
	}
	if o.Systems == nil {
		o.Systems = AllSystems()
	}
	if o.Parallel <= 0 {
		o.Parallel = runtime.GOMAXPROCS(0)
	}
	if o.Worst <= 0 {
		o.Worst = 10
	}
	if !slices.ContainsFunc(o.Systems, func(s System) bool { return s.Kind == KindNetclock }) {
		return SuiteReport{}, errors.New("harness: suite needs netclock among the systems")
	}
	type job struct{ scenario, seed int }
	runs := make([][]suiteRun, o.Scenarios)
	for i := range runs {
		runs[i] = make([]suiteRun, o.Seeds)
	}
	jobs := make(chan job)
	errs := make(chan error, o.Parallel)
	var wg sync.WaitGroup
	for range o.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				p := o.profile(j.scenario)
				rep, err := Run(Options{Profile: p, Seed: uint64(j.seed + 1), Duration: o.Duration, Warmup: o.Warmup, Systems: o.Systems, Buffers: o.Buffers})
				if err != nil {
					errs <- fmt.Errorf("scenario %d seed %d: %w", o.First+uint64(j.scenario), j.seed+1, err)
					return
				}
				runs[j.scenario][j.seed] = summarizeRun(rep)
			}
		}()
	}
	var err error
feed:
	for i := range o.Scenarios {
		for k := range o.Seeds {
			select {
			case jobs <- job{i, k}:
			case err = <-errs:
				break feed
			case <-ctx.Done():
				err = ctx.Err()
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	if err != nil {
		return SuiteReport{}, fmt.Errorf("harness: suite: %w", err)
	}
	return summarizeSuite(o, runs), nil
}

// profile returns scenario i (from 0) of the suite.
func (o SuiteOptions) profile(i int) netsim.Profile {
	if o.Profiles != nil {
		return o.Profiles[i]
	}
	return netsim.RandomProfile(o.First + uint64(i))
}

func summarizeRun(rep Report) suiteRun {
	// Without a bound (netclock never synced) coverage is 0.
	r := suiteRun{vsSeed: math.NaN(), vsRef: math.NaN()}
	bestSeed, bestRef := math.Inf(1), math.Inf(1)
	for _, x := range rep.Results {
		p := x.SharedErrorMS.P99
		switch x.Kind {
		case KindNetclock:
			r.p99 = p
			if x.Buffers != nil && r.buffers == nil {
				r.buffers, r.oracleInt, r.oracleTickLead = x.Buffers, *x.OracleInterpDelayMS, *x.OracleTickLeadMS
				r.oracleLead = math.NaN()
				if x.OracleLeadMS != nil {
					r.oracleLead = *x.OracleLeadMS
				}
			}
			if x.BoundCoverage != nil {
				r.cov = *x.BoundCoverage
			}
		case KindSeed:
			if p < bestSeed {
				bestSeed, r.bestSeed = p, x.System
			}
		case KindReference:
			if p < bestRef {
				bestRef, r.bestRef = p, x.System
			}
		}
	}
	if r.bestSeed != "" {
		r.vsSeed = ratio(r.p99, bestSeed)
	}
	if r.bestRef != "" {
		r.vsRef = ratio(r.p99, bestRef)
	}
	return r
}

// ratio is a/b, with 0/0 = 1 (both perfect) and b at least 1 ns.
func ratio(a, b float64) float64 {
	if a == 0 && b == 0 {
		return 1
	}
	return a / max(b, 1e-6)
}

func spreadOf(v []float64) Spread {
	v = slices.DeleteFunc(slices.Clone(v), math.IsNaN)
	if len(v) == 0 {
		return Spread{math.NaN(), math.NaN(), math.NaN()}
	}
	slices.Sort(v)
	return Spread{Median: medianSorted(v), Min: v[0], Max: v[len(v)-1]}
}

func medianSorted(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func distributionOf(v []float64) *Distribution {
	if len(v) == 0 {
		return nil
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return &Distribution{Median: medianSorted(v), P10: quantile(v, 0.1), P90: quantile(v, 0.9), Min: v[0], Max: v[len(v)-1]}
}

func summarizeSuite(o SuiteOptions, runs [][]suiteRun) SuiteReport {
	rep := SuiteReport{Scenarios: o.Scenarios, First: o.First, Seeds: o.Seeds, DurationS: o.Duration.Seconds()}
	var vsSeed, vsRef, cov, covSym []float64
	for i, rs := range runs {
		p := o.profile(i)
		sr := ScenarioResult{Scenario: o.First + uint64(i), Name: p.Name, Description: p.Description,
			AsymmetryMS: math.Abs(float64(p.Up.Base-p.Down.Base)) / 1e6}
		if o.Profiles != nil {
			sr.Scenario = 0
		}
		var p99, s, r, c []float64
		worst := -1.0
		for k, x := range rs {
			p99, s, r, c = append(p99, x.p99), append(s, x.vsSeed), append(r, x.vsRef), append(c, x.cov)
			if w := max(nanTo0(x.vsSeed), nanTo0(x.vsRef)); w > worst {
				// The run to reproduce: the worst ratio.
				worst, sr.WorstSeed, sr.BestSeed, sr.BestRef = w, uint64(k+1), x.bestSeed, x.bestRef
				sr.WorstRatio = w
			}
		}
		sr.P99MS, sr.Coverage = spreadOf(p99), spreadOf(c)
		summarizeBuffers(&sr, rs)
		if sp := spreadOf(s); !math.IsNaN(sp.Median) {
			sr.VsSeed = &sp
			vsSeed = append(vsSeed, sp.Median)
		}
		if sp := spreadOf(r); !math.IsNaN(sp.Median) {
			sr.VsRef = &sp
			vsRef = append(vsRef, sp.Median)
		}
		cov = append(cov, sr.Coverage.Median)
		if sr.AsymmetryMS <= SymmetricMS {
			covSym = append(covSym, sr.Coverage.Median)
		}
		rep.Results = append(rep.Results, sr)
	}
	rep.VsSeed, rep.VsRef, rep.Coverage = distributionOf(vsSeed), distributionOf(vsRef), *distributionOf(cov)
	rep.CoverageSymmetric, rep.Symmetric = distributionOf(covSym), len(covSym)
	worst := slices.Clone(rep.Results)
	slices.SortStableFunc(worst, func(a, b ScenarioResult) int { return cmp.Compare(b.Worst(), a.Worst()) })
	rep.Worst = worst[:min(o.Worst, len(worst))]
	low := slices.Clone(rep.Results)
	slices.SortStableFunc(low, func(a, b ScenarioResult) int {
		return cmp.Compare(nanTo0(a.Coverage.Median), nanTo0(b.Coverage.Median))
	})
	rep.LowestCoverage = low[:min(o.Worst, len(low))]
	return rep
}

func nanTo0(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return x
}

// summarizeBuffers fills sr's buffer figures from its runs, if measured.
func summarizeBuffers(sr *ScenarioResult, rs []suiteRun) {
	if len(rs) == 0 || rs[0].buffers == nil {
		return
	}
	var lead, tickLead, interp []float64
	for _, x := range rs {
		lead, interp = append(lead, x.oracleLead), append(interp, x.oracleInt)
		tickLead = append(tickLead, x.oracleTickLead)
	}
	l, tl, i := spreadOf(lead), spreadOf(tickLead), spreadOf(interp)
	sr.OracleLeadMS, sr.OracleTickLeadMS, sr.OracleInterpDelayMS = &l, &tl, &i
	for m, b := range rs[0].buffers {
		var onTime, lost, leadMean, leadP99, starved, delayMean, delayP99 []float64
		for _, x := range rs {
			y := x.buffers[m]
			onTime, lost, starved = append(onTime, y.InputsOnTime), append(lost, y.InputsLost), append(starved, y.StarvedFrames)
			leadMean, leadP99 = append(leadMean, y.InputLeadMS.Mean), append(leadP99, y.InputLeadMS.P99)
			delayMean, delayP99 = append(delayMean, y.InterpDelayMS.Mean), append(delayP99, y.InterpDelayMS.P99)
		}
		sr.Buffers = append(sr.Buffers, BufferSummary{Model: b.Model, InputsOnTime: spreadOf(onTime), InputsLost: spreadOf(lost),
			InputLeadMS: MeanP99Spread{spreadOf(leadMean), spreadOf(leadP99)}, StarvedFrames: spreadOf(starved),
			InterpDelayMS: MeanP99Spread{spreadOf(delayMean), spreadOf(delayP99)}})
	}
}
