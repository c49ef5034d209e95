package netsim

import (
	"encoding/json"
	"testing"
	"time"
)

func TestRandomProfile(t *testing.T) {
	seen := map[string]int{}
	for seed := uint64(1); seed <= 400; seed++ {
		p := RandomProfile(seed)
		if err := p.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		a, _ := json.Marshal(p)
		b, _ := json.Marshal(RandomProfile(seed))
		if string(a) != string(b) {
			t.Fatalf("seed %d: two draws differ:\n%s\n%s", seed, a, b)
		}
		if _, err := ParseProfile(a); err != nil {
			t.Fatalf("seed %d: its JSON does not parse: %v", seed, err)
		}
		if c, _ := json.Marshal(RandomProfile(seed + 1000)); string(c) == string(a) {
			t.Fatalf("seeds %d and %d draw the same profile", seed, seed+1000)
		}
		rtt := p.Up.Base + p.Down.Base
		if rtt < ms-100*time.Microsecond || rtt > 300*ms+time.Microsecond {
			t.Errorf("seed %d: base RTT %v outside 1-300ms", seed, rtt)
		}
		for _, l := range []LinkSpec{p.Up, p.Down} {
			kind := string(l.Jitter.Kind)
			if kind == "" {
				kind = "none"
			}
			seen[kind]++
			if l.Queue != nil {
				seen["queue"]++
			}
			if l.Bloat != nil {
				seen["bloat"]++
			}
			if l.Flap != nil {
				seen["flap"]++
			}
			if l.Burst != nil {
				seen["burst"]++
			}
			if l.Reorder > 0 {
				seen["reorder"]++
			}
			if l.Duplicate > 0 {
				seen["duplicate"]++
			}
			if l.Periodic != nil {
				seen["grant"]++
			}
		}
		for _, c := range p.Changes {
			switch {
			case c.Periodic != nil:
				seen["power save"]++
			case c.Outage > 0:
				seen["handover"]++
			case c.Ramp > 0:
				seen["ramp"]++
			}
		}
		for _, j := range p.Client.Jumps {
			if j.By < 0 && -j.By < rtt {
				seen["backward step < rtt"]++
			}
		}
		if len(p.Server.Jumps) > 0 {
			seen["server step"]++
		}
		if len(p.Server.Slews) > 0 {
			seen["server slew"]++
		}
		if len(p.Client.Slews) > 0 {
			seen["client slew"]++
		}
		if p.Client.Wander != nil {
			seen["wander"]++
		}
		if len(p.Client.Suspends) > 0 {
			seen["suspend"]++
		}
		if p.Client.DriftPPM > 100 || p.Client.DriftPPM < -100 {
			seen["drift > 100ppm"]++
		}
		if d := p.Up.Base - p.Down.Base; d > ms || d < -ms {
			seen["asymmetric"]++
		}
		// Every drawn profile runs.
		if seed <= 40 {
			up, down, err := p.NewLinks(seed)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range []*Link{up, down} {
				var buf []time.Duration
				for now := time.Duration(0); now < RandomHorizon; now += 997 * ms {
					buf = l.SendAppend(buf[:0], now)
					for _, at := range buf {
						if at < now+l.MinDelay(now) {
							t.Fatalf("seed %d: arrival %v before the floor", seed, at-now)
						}
					}
				}
			}
			cc, _, err := p.NewClocks()
			if err != nil {
				t.Fatal(err)
			}
			cc.Read(RandomHorizon)
		}
	}
	for _, want := range []string{"none", "uniform", "triangular", "normal", "exponential", "pareto", "empirical",
		"queue", "bloat", "flap", "burst", "reorder", "duplicate", "grant", "power save", "handover", "ramp",
		"backward step < rtt", "server step", "server slew", "client slew", "wander", "suspend", "drift > 100ppm", "asymmetric"} {
		if seen[want] == 0 {
			t.Errorf("400 draws never had %s (seen %v)", want, seen)
		}
	}
}
