package netsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// RandomHorizon is the run length RandomProfile places its events in: every
// scheduled event (changes, clock steps, slews, suspends) falls in
// [30s, RandomHorizon-30s].
const RandomHorizon = 20 * time.Minute

// RandomProfile draws one realistic scenario, a pure function of seed, from
// the distribution below (independent draws unless said otherwise; "U(a,b)"
// is uniform, "logU(a,b)" log-uniform; "dir" is up or down with equal odds).
// Its Name is "random-<seed>" and its Description lists what was drawn.
//
// Path:
//   - base RTT logU(1ms, 300ms), split evenly; with probability 0.3 the
//     split is asymmetric: the uplink's share U(0.2, 0.8);
//   - jitter per direction: none 5%, else uniform, triangular, normal,
//     exponential, pareto (shape U(1.5, 3)) or empirical (the measured 5G
//     histogram of that direction) with equal odds, of scale
//     logU(0.05ms, 30ms) (at most base+1ms; the 5G histograms are as
//     measured), capped at 20× its scale;
//   - p 0.25: a correlated queue in each direction (mean U(1,30)ms, stdDev
//     U(0.3,1)× mean, tau logU(0.5s, 30s));
//   - p 0.2: a bloat queue on dir (uplink p 0.7): max U(20ms, 300ms), rise
//     U(2s, 20s), drain U(5s, 60s), busy U(10s, 120s), idle U(30s, 300s);
//   - p 0.5: random loss U(0, 5%); p 0.3: bursty loss (pGoodToBad
//     U(0.001, 0.01), pBadToGood U(0.1, 0.5), lossInBad U(0.5, 1));
//   - p 0.2: reordering U(0.1%, 2%) by U(1ms, 10ms); p 0.1: duplication
//     U(0.05%, 1%);
//   - p 0.15: a route flap on dir, extra U(2ms, 30ms), holds 30-60s;
//   - p 0.2: 1-3 one-way floor steps on dir at U(horizon) of ±U(2ms, 40ms)
//     (floor at least 0.5ms), half of them ramped over U(1s, 30s);
//   - p 0.15: handovers every U(60s, 300s): an outage U(50ms, 2s) of both
//     directions and each direction's floor moving by ±U(1ms, 15ms),
//     independently;
//   - p 0.15: Wi-Fi power save on the downlink (102.4ms beacon) switching on
//     and off every U(20s, 120s); p 0.1: a cellular uplink grant period
//     U(2.5ms, 20ms).
//
// Clocks:
//   - client offset U(-10s, 10s); drift U(-50, 50) ppm, or with p 0.3
//     U(-500, 500) ppm; p 0.3: wander logU(0.01, 1) ppm/min, limit 50 ppm;
//   - p 0.2 per end (client, server): a slew of ±U(50, 500) ppm for
//     U(10s, 300s) starting at U(horizon);
//   - p 0.2: a client clock step at U(horizon), backward or forward with
//     equal odds, smaller than the RTT (U(1ms, max(2ms, RTT))) with p 0.6,
//     else U(50ms, 5s); p 0.1: the same on the server;
//   - p 0.1: a client suspend at U(horizon) for U(1s, 60s).
//
// Frames: desktop (60 Hz ±1ms, 0.1% hitches of 100ms) with p 0.7, else
// mobile (30 Hz ±3ms, 0.3% hitches of 150ms).
func RandomProfile(seed uint64) Profile {
	g := &gen{r: rand.New(rand.NewPCG(seed, mix(seed^0x72616e646f6d)))}
	r := g.r
	p := Profile{Name: fmt.Sprintf("random-%d", seed)}
	secs := time.Second

	// Path floors.
	rtt := g.logU(1*ms, 300*ms)
	share := 0.5
	if g.p(0.3) {
		share = g.u(0.2, 0.8)
	}
	p.Up.Base = max(time.Duration(share*float64(rtt)), 50*time.Microsecond)
	p.Down.Base = max(rtt-p.Up.Base, 50*time.Microsecond)
	g.tag("rtt %v (up %v, down %v)", rtt.Round(100*time.Microsecond), p.Up.Base.Round(100*time.Microsecond), p.Down.Base.Round(100*time.Microsecond))

	for _, d := range []struct {
		l    *LinkSpec
		hist string
		name string
	}{{&p.Up, Histogram5GUplink, "up"}, {&p.Down, Histogram5GDownlink, "down"}} {
		d.l.Jitter = g.jitter(d.l.Base, d.hist)
		g.tag("%s jitter %v", d.name, d.l.Jitter)
	}
	if g.p(0.25) {
		for _, l := range []*LinkSpec{&p.Up, &p.Down} {
			mean := g.durU(1*ms, 30*ms)
			l.Queue = &QueueSpec{Mean: mean, StdDev: time.Duration(g.u(0.3, 1) * float64(mean)), Tau: g.logU(500*ms, 30*secs)}
		}
		g.tag("correlated queues (up mean %v tau %v)", p.Up.Queue.Mean.Round(100*time.Microsecond), p.Up.Queue.Tau.Round(100*ms))
	}
	if g.p(0.2) {
		l, name := &p.Down, "down"
		if g.p(0.7) {
			l, name = &p.Up, "up"
		}
		l.Bloat = &BloatSpec{Max: g.durU(20*ms, 300*ms), Rise: g.durU(2*secs, 20*secs), Drain: g.durU(5*secs, 60*secs),
			Busy: g.durU(10*secs, 120*secs), Idle: g.durU(30*secs, 300*secs)}
		g.tag("bloat %s to %v", name, l.Bloat.Max.Round(ms))
	}
	for _, l := range []*LinkSpec{&p.Up, &p.Down} {
		if g.p(0.5) {
			l.Loss = g.u(0, 0.05)
		}
		if g.p(0.3) {
			l.Burst = &GilbertElliott{PGoodToBad: g.u(0.001, 0.01), PBadToGood: g.u(0.1, 0.5), LossInBad: g.u(0.5, 1)}
		}
		if g.p(0.2) {
			l.Reorder, l.ReorderDelay = g.u(0.001, 0.02), g.durU(1*ms, 10*ms)
		}
		if g.p(0.1) {
			l.Duplicate = g.u(0.0005, 0.01)
		}
	}
	if p.Up.Loss+p.Down.Loss > 0 || p.Up.Burst != nil || p.Down.Burst != nil {
		g.tag("loss")
	}
	if p.Up.Reorder+p.Down.Reorder+p.Up.Duplicate+p.Down.Duplicate > 0 {
		g.tag("reordering/duplicates")
	}
	if g.p(0.15) {
		l, name := g.dir(&p)
		l.Flap = &FlapSpec{Extra: g.durU(2*ms, 30*ms), MinHold: 30 * secs, MaxHold: 60 * secs}
		g.tag("route flap %s +%v", name, l.Flap.Extra.Round(100*time.Microsecond))
	}
	if g.p(0.2) {
		l, name := g.dir(&p)
		dir := Direction(name)
		base := l.Base
		for range 1 + r.IntN(3) {
			base = max(base+g.sign()*g.durU(2*ms, 40*ms), 500*time.Microsecond)
			c := Change{At: g.at(), Direction: dir, Base: ptr(base)}
			if g.p(0.5) {
				c.Ramp = g.durU(1*secs, 30*secs)
			}
			p.Changes = append(p.Changes, c)
			g.tag("%s floor -> %v at %v", name, base.Round(100*time.Microsecond), c.At.Round(secs))
		}
	}
	if g.p(0.15) {
		every := g.durU(60*secs, 300*secs)
		up, down := p.Up.Base, p.Down.Base
		for at := every; at < RandomHorizon-30*secs; at += every {
			p.Changes = append(p.Changes, Change{At: at, Direction: DirBoth, Outage: g.durU(50*ms, 2*secs)})
			up = max(up+g.sign()*g.durU(1*ms, 15*ms), 500*time.Microsecond)
			down = max(down+g.sign()*g.durU(1*ms, 15*ms), 500*time.Microsecond)
			p.Changes = append(p.Changes,
				Change{At: at, Direction: DirUp, Base: ptr(up)},
				Change{At: at, Direction: DirDown, Base: ptr(down)})
		}
		g.tag("handovers every %v", every.Round(secs))
	}
	if g.p(0.15) {
		on := false
		for at := g.durU(20*secs, 120*secs); at < RandomHorizon-30*secs; at += g.durU(20*secs, 120*secs) {
			on = !on
			per := &PeriodicSpec{}
			if on {
				per.Period = 102400 * time.Microsecond
			}
			p.Changes = append(p.Changes, Change{At: at, Direction: DirDown, Periodic: per})
		}
		g.tag("wifi power save on/off")
	}
	if g.p(0.1) {
		p.Up.Periodic = &PeriodicSpec{Period: g.durU(2500*time.Microsecond, 20*ms)}
		g.tag("uplink grant %v", p.Up.Periodic.Period.Round(100*time.Microsecond))
	}

	// Clocks.
	p.Client.Offset = g.durU(-10*secs, 10*secs)
	p.Client.DriftPPM = g.u(-50, 50)
	if g.p(0.3) {
		p.Client.DriftPPM = g.u(-500, 500)
	}
	g.tag("drift %.0fppm", p.Client.DriftPPM)
	if g.p(0.3) {
		p.Client.Wander = &Wander{PPMPerMinute: math.Exp(g.u(math.Log(0.01), math.Log(1))), LimitPPM: 50, Seed: r.Uint64()}
		g.tag("wander %.2fppm/min", p.Client.Wander.PPMPerMinute)
	}
	for _, c := range []struct {
		spec *ClockSpec
		name string
	}{{&p.Client, "client"}, {&p.Server, "server"}} {
		if g.p(0.2) {
			from := g.at()
			s := Slew{From: from, To: from + g.durU(10*secs, 300*secs), PPM: float64(g.sign()) * g.u(50, 500)}
			c.spec.Slews = append(c.spec.Slews, s)
			g.tag("%s slew %+.0fppm %v-%v", c.name, s.PPM, s.From.Round(secs), s.To.Round(secs))
		}
	}
	for _, c := range []struct {
		spec *ClockSpec
		name string
		prob float64
	}{{&p.Client, "client", 0.2}, {&p.Server, "server", 0.1}} {
		if g.p(c.prob) {
			by := g.durU(1*ms, max(2*ms, rtt))
			if !g.p(0.6) {
				by = g.durU(50*ms, 5*secs)
			}
			j := Jump{At: g.at(), By: g.sign() * by}
			c.spec.Jumps = append(c.spec.Jumps, j)
			g.tag("%s step %v at %v", c.name, j.By.Round(100*time.Microsecond), j.At.Round(secs))
		}
	}
	if g.p(0.1) {
		s := Suspend{At: g.at(), For: g.durU(1*secs, 60*secs)}
		p.Client.Suspends = []Suspend{s}
		g.tag("suspend %v at %v", s.For.Round(100*ms), s.At.Round(secs))
	}
	p.Frames = desktopFrames
	if g.p(0.3) {
		p.Frames = mobileFrames
		g.tag("mobile frames")
	}
	p.Description = strings.Join(g.tags, "; ")
	return p
}

// gen draws the pieces of a random profile.
type gen struct {
	r    *rand.Rand
	tags []string
}

func (g *gen) tag(format string, args ...any) { g.tags = append(g.tags, fmt.Sprintf(format, args...)) }

func (g *gen) p(prob float64) bool { return g.r.Float64() < prob }

func (g *gen) u(a, b float64) float64 { return a + (b-a)*g.r.Float64() }

func (g *gen) durU(a, b time.Duration) time.Duration {
	return time.Duration(g.u(float64(a), float64(b)))
}

func (g *gen) logU(a, b time.Duration) time.Duration {
	return time.Duration(math.Exp(g.u(math.Log(float64(a)), math.Log(float64(b)))))
}

func (g *gen) sign() time.Duration {
	if g.r.IntN(2) == 0 {
		return -1
	}
	return 1
}

// at draws an event time within the horizon.
func (g *gen) at() time.Duration { return g.durU(30*time.Second, RandomHorizon-30*time.Second) }

func (g *gen) dir(p *Profile) (*LinkSpec, string) {
	if g.r.IntN(2) == 0 {
		return &p.Up, "up"
	}
	return &p.Down, "down"
}

func (g *gen) jitter(base time.Duration, hist string) JitterSpec {
	if g.p(0.05) {
		return JitterSpec{}
	}
	scale := min(g.logU(50*time.Microsecond, 30*ms), base+ms)
	j := JitterSpec{Cap: 20 * scale}
	switch g.r.IntN(6) {
	case 0:
		j.Kind, j.Spread = JitterUniform, 2*scale
	case 1:
		j.Kind, j.Spread = JitterTriangular, 2*scale
	case 2:
		j.Kind, j.StdDev = JitterNormal, scale
	case 3:
		j.Kind, j.Mean = JitterExponential, scale
	case 4:
		shape := g.u(1.5, 3)
		j.Kind, j.Shape, j.Scale = JitterPareto, shape, time.Duration(float64(scale)*(shape-1))
	case 5:
		h, _ := BuiltinHistogram(hist)
		j = JitterSpec{Kind: JitterEmpirical, Histogram: h}
	}
	return j
}
