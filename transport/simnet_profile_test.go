package transport

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netclock/netclock/bench/harness"
	"github.com/netclock/netclock/internal/simlink"
	"github.com/netclock/netclock/netsim"
)

// TestSimnetProfilesMatchTheHarness runs the real transport in virtual time
// behind the harness's profiles, with jitter and loss, and checks that the
// estimate's true error is what the accuracy harness reports for netclock on
// the same profile: the median of three link seeds' p99 within 2× of the
// harness's worst of five seeds, plus 0.2 ms for the QUIC packets the
// harness does not model.
func TestSimnetProfilesMatchTheHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("three runs of two simulated minutes per profile")
	}
	const run = 2 * time.Minute
	const warmup = 10 * time.Second
	for _, name := range []string{"broadband", "ue-bad"} {
		t.Run(name, func(t *testing.T) {
			prof, ok := netsim.ProfileByName(name)
			if !ok {
				t.Fatalf("no profile %q", name)
			}
			// Two minutes of one network is one draw: the harness's own
			// p99 over this run length spreads by 2-3x across seeds, so the
			// transport's run is held against the harness's worst of five.
			want := 0.0
			for seed := uint64(1); seed <= 5; seed++ {
				rep, err := harness.Run(harness.Options{Profile: prof, Duration: run, Warmup: warmup, Seed: seed,
					Systems: []harness.System{harness.Netclock()}})
				if err != nil {
					t.Fatal(err)
				}
				want = max(want, rep.Results[0].SharedErrorMS.P99)
			}

			// The transport's run is one draw too, and not a repeatable one:
			// the order in which goroutines send within an instant decides
			// which packet gets which delay: the same link seed gave ue-bad
			// p99s of 0.6 to 2.6 ms over 16 runs under the race detector,
			// and 5.7 ms once in CI, past the bound. Its median over three
			// link seeds is held to the bound.
			var p99s []float64
			for seed := uint64(1); seed <= 3; seed++ {
				got, p50 := transportP99(t, prof, seed, run, warmup)
				t.Logf("%s link seed %d: transport p99 %.3f ms (p50 %.3f), harness p99 at most %.3f ms over seeds 1-5", name, seed, got, p50, want)
				p99s = append(p99s, got)
			}
			slices.Sort(p99s)
			if got := p99s[1]; got > 2*want+0.2 {
				t.Errorf("transport p99 %.3f ms by the median of three link seeds, more than 2× the harness's worst seed's %.3f ms (+0.2 ms)", got, want)
			}
		})
	}
}

// transportP99 runs the real transport in virtual time behind links of
// profile prof drawn with seed, samples the client's true error 20 times a
// second after warmup, and returns its p99 and p50 in ms.
func transportP99(t *testing.T, prof netsim.Profile, seed uint64, run, warmup time.Duration) (p99, p50 float64) {
	t.Helper()
	var errs []float64
	synctest.Test(t, func(t *testing.T) {
		up, down, err := prof.NewLinks(seed)
		if err != nil {
			t.Fatal(err)
		}
		router := simlink.New(simClientAddr, up, down)
		clock, err := netsim.NewWallClock(prof.Client) // virtual time in the bubble
		if err != nil {
			t.Fatal(err)
		}
		// The router delays the packets; the nodes add nothing.
		p := newSimPair(t, router, 0, 0, ServerConfig{}, clock)
		c, srv := p.c, p.srv
		begin := time.Now()
		for time.Since(begin) < run {
			time.Sleep(50 * time.Millisecond) // virtual: sample the error 20 times a second
			if time.Since(begin) < warmup {
				continue
			}
			if shared, ok := c.SharedTime(); ok {
				errs = append(errs, float64(abs(shared-srv.SharedTime()))/1e6)
			}
		}
		p.close(t)
	})
	if len(errs) < 1000 {
		t.Fatalf("only %d error samples", len(errs))
	}
	slices.Sort(errs)
	return errs[len(errs)*99/100], errs[len(errs)/2]
}
