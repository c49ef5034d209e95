package harness

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/netclock/netclock/netsim"
)

func TestMedian(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 1; n < 60; n++ {
		for range 20 {
			v := make([]float64, n)
			for i := range v {
				v[i] = float64(r.IntN(10)) // many ties
			}
			s := slices.Clone(v)
			slices.Sort(s)
			want := s[n/2]
			if n%2 == 0 {
				want = (s[n/2-1] + s[n/2]) / 2
			}
			if got := median(v); got != want {
				t.Fatalf("median of %v = %v, want %v", s, got, want)
			}
		}
	}
}

// counted wraps a system, counting the client's messages and frames.
type counted struct {
	sends, frames int
}

func (c *counted) wrap(s System) System {
	inner := s.New
	s.New = func(toServer, toClient Link) (Client, Server) {
		cl, sv := inner(linkFunc(func(m Msg) { c.sends++; toServer.Send(m) }), toClient)
		if p, ok := cl.(Pacer); ok {
			return &countedPacer{countedClient{cl, c}, p}, sv
		}
		return countedClient{cl, c}, sv
	}
	return s
}

type countedClient struct {
	Client
	c *counted
}

func (c countedClient) Frame(now, dt time.Duration) { c.c.frames++; c.Client.Frame(now, dt) }

type countedPacer struct {
	countedClient
	p Pacer
}

func (c *countedPacer) Ping(now time.Duration) time.Duration { return c.p.Ping(now) }

func TestPingsFollowTrueTime(t *testing.T) {
	fiber := profile(t, "fiber")
	back := fiber.Clone()
	back.Client.Jumps = []netsim.Jump{{At: 30 * time.Second, By: -2 * time.Second}}
	asleep := fiber.Clone()
	asleep.Client.Suspends = []netsim.Suspend{{At: 30 * time.Second, For: 10 * time.Second}}
	for _, tc := range []struct {
		name           string
		p              netsim.Profile
		pings, frames  int
		tolP, tolFrame int
	}{
		// 10 burst pings, then 10 Hz; 60 Hz frames. (The steady pings'
		// spread adds up to a few pings either way over a minute; a clock
		// step or a suspend the pacer followed would cost 20 and 100.)
		{"steady", fiber, 10 + 600, 3600, 6, 120},
		{"backward step", back, 10 + 600, 3600, 6, 120},
		{"suspended 10s", asleep, 10 + 500, 3000, 6, 120},
	} {
		var c counted
		sys := c.wrap(Netclock())
		if _, err := Run(Options{Profile: tc.p, Duration: time.Minute, Warmup: time.Second, Systems: []System{sys}}); err != nil {
			t.Fatal(err)
		}
		if c.sends < tc.pings-tc.tolP || c.sends > tc.pings+tc.tolP {
			t.Errorf("%s: %d pings in a minute, want %d±%d", tc.name, c.sends, tc.pings, tc.tolP)
		}
		if c.frames < tc.frames-tc.tolFrame || c.frames > tc.frames+tc.tolFrame {
			t.Errorf("%s: %d frames in a minute, want %d±%d", tc.name, c.frames, tc.frames, tc.tolFrame)
		}
	}
}

func TestWithPing(t *testing.T) {
	for _, sys := range AllSystems() {
		var def, fast counted
		o := Options{Profile: profile(t, "lan"), Duration: time.Minute, Warmup: time.Second}
		o.Systems = []System{def.wrap(sys)}
		rep, err := Run(o)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Results[0].Kind != sys.Kind || rep.Results[0].PingS != sys.Ping.Seconds() {
			t.Errorf("%s: result kind %q ping %v s", sys.Name, rep.Results[0].Kind, rep.Results[0].PingS)
		}
		o.Systems = []System{fast.wrap(sys.WithPing(50 * time.Millisecond))}
		if _, err := Run(o); err != nil {
			t.Fatal(err)
		}
		// ue-vanilla's requests are the server's; the client sends none.
		// Frame-driven timers fire at the first frame past their expiry,
		// so 50ms may take four 60 Hz frames.
		if sys.Name != blNameUEVanilla && (fast.sends < 900 || fast.sends > 1300) {
			t.Errorf("%s at 50ms: %d requests in a minute (default: %d)", sys.Name, fast.sends, def.sends)
		}
	}
	kinds := map[Kind]int{}
	for _, s := range AllSystems() {
		kinds[s.Kind]++
	}
	if kinds[KindNetclock] != 1 || kinds[KindSeed] != 7 || kinds[KindReference] != 5 {
		t.Errorf("kinds %v", kinds)
	}
}

func TestReferencesTrackTheClock(t *testing.T) {
	// On a clean path the regressions are within a fraction of a
	// millisecond; the plain window filters lag the drift by half a window
	// (fiber: 42 ppm × 30 s = 1.26 ms); on a fast-drifting clock only the
	// regressions keep up.
	for _, tc := range []struct {
		profile string
		maxP99  map[string]float64
	}{
		{"fiber", map[string]float64{refNameMedian: 1.5, refNameSimpson: 1.5, refNameDriftMean: 0.5, refNameNTP: 1, refNameChrony: 0.5}},
		{"drift-500ppm", map[string]float64{refNameDriftMean: 3, refNameChrony: 3, refNameNTP: 12}},
	} {
		rep, err := Run(Options{Profile: profile(t, tc.profile), Duration: 3 * time.Minute, Systems: References()})
		if err != nil {
			t.Fatal(err)
		}
		p99 := map[string]float64{}
		for _, r := range rep.Results {
			p99[r.System] = r.SharedErrorMS.P99
			if limit, ok := tc.maxP99[r.System]; ok && r.SharedErrorMS.P99 > limit {
				t.Errorf("%s %s: p99 %.3f ms, want <= %v", tc.profile, r.System, r.SharedErrorMS.P99, limit)
			}
		}
		if tc.profile == "drift-500ppm" && p99[refNameMedian] < 3*p99[refNameDriftMean] {
			t.Errorf("drift-500ppm: median p99 %.3f ms not far behind the drift-corrected mean's %.3f ms",
				p99[refNameMedian], p99[refNameDriftMean])
		}
	}
}
