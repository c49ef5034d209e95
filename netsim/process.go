package netsim

import (
	"math"
	"math/rand/v2"
	"time"
)

// Time-driven link processes: a delay locked to a period (PeriodicSpec), a
// queue filled by competing traffic (BloatSpec) and a route flapping between
// two floors (FlapSpec). Each is a function of true time and of its own
// random stream, never of the packets sent, so it looks the same at any send
// rate.

// MinHold is the shortest mean busy/idle period of a BloatSpec and the
// shortest hold of a FlapSpec, which bounds how many switches a run draws.
const MinHold = 100 * time.Millisecond

// PeriodicSpec holds every packet until the next service instant, at
// Phase + k*Period of true time: a Wi-Fi client in power save wakes for the
// AP's beacon every 102.4ms, an LTE/5G uplink waits for its next scheduling
// grant. The extra delay is in [0, Period). A change with a zero Period
// switches it off.
type PeriodicSpec struct {
	// Period is the time between service instants; 0 is off.
	Period time.Duration
	// Phase places the instants: Phase + k*Period.
	Phase time.Duration
}

// wait returns the time from now to the next service instant at or after it.
func (p *PeriodicSpec) wait(now time.Duration) time.Duration {
	if p == nil || p.Period <= 0 {
		return 0
	}
	r := (p.Phase - now) % p.Period
	if r < 0 {
		r += p.Period
	}
	return r
}

// BloatSpec is a queue that competing bulk traffic fills and empties (an
// upload saturating the uplink, a download on the same Wi-Fi): busy periods
// alternate with idle ones, of exponential lengths with means Busy and Idle.
// While busy the queueing delay builds toward Max with time constant Rise;
// while idle it drains toward zero with time constant Drain. The link starts
// idle and empty. The level is exact in continuous time, so the queue looks
// the same at any send rate.
type BloatSpec struct {
	// Max is the level a busy period builds toward (the buffer's depth in
	// time).
	Max time.Duration
	// Rise is the build-up time constant (63% of the way in Rise).
	Rise time.Duration
	// Drain is the drain time constant.
	Drain time.Duration
	// Busy is the mean length of a busy period; at least MinHold.
	Busy time.Duration
	// Idle is the mean length of an idle period; at least MinHold.
	Idle time.Duration
}

// FlapSpec alternates the link's floor between Base and Base+Extra, a route
// flapping between two paths: each path holds for a time uniform in
// [MinHold, MaxHold]. The link starts on the shorter path.
type FlapSpec struct {
	// Extra is the second path's extra delay.
	Extra time.Duration
	// MinHold and MaxHold bound how long a path holds; MinHold is at least
	// the package's MinHold.
	MinHold, MaxHold time.Duration
}

// alternator is an alternating renewal process: switch times drawn lazily
// from its own stream. State 0 holds until the first switch.
type alternator struct {
	rng      *rand.Rand
	draw     func(r *rand.Rand, state int) time.Duration // length of a period in state
	switches []time.Duration                             // sorted; state k holds on [switches[k-1], switches[k])
	cur      int                                         // cached index: number of switches <= last query
}

func newAlternator(seed, stream uint64, draw func(*rand.Rand, int) time.Duration) *alternator {
	a := &alternator{rng: newRand(seed, stream), draw: draw}
	a.switches = append(a.switches, draw(a.rng, 0))
	return a
}

// count returns how many switches happened at or before t.
func (a *alternator) count(t time.Duration) int {
	for a.switches[len(a.switches)-1] <= t {
		last := a.switches[len(a.switches)-1]
		a.switches = append(a.switches, last+max(a.draw(a.rng, len(a.switches)%2), 1))
	}
	i := a.cur
	if i > 0 && a.switches[i-1] > t {
		i = 0
	}
	for i < len(a.switches) && a.switches[i] <= t {
		i++
	}
	a.cur = i
	return i
}

// bloat is the state of a BloatSpec.
type bloat struct {
	spec  BloatSpec
	alt   *alternator
	level float64 // ns
	last  time.Duration
	n     int // switches applied
}

func newBloat(spec BloatSpec, seed uint64) *bloat {
	return &bloat{spec: spec, alt: newAlternator(seed, streamBloat, func(r *rand.Rand, state int) time.Duration {
		mean := spec.Idle
		if state == 1 {
			mean = spec.Busy
		}
		return time.Duration(r.ExpFloat64() * float64(mean))
	})}
}

// at advances the queue to now (never backwards) and returns its delay.
func (b *bloat) at(now time.Duration) time.Duration {
	if now > b.last {
		n := b.alt.count(now)
		for b.n < n {
			sw := b.alt.switches[b.n]
			b.evolve(sw, b.n%2 == 1)
			b.n++
		}
		b.evolve(now, b.n%2 == 1)
	}
	return clampDelay(b.level, 0)
}

// evolve moves the level from b.last to t in the given state.
func (b *bloat) evolve(t time.Duration, busy bool) {
	dt := float64(t - b.last)
	if dt <= 0 {
		return
	}
	b.last = t
	if busy {
		m := float64(b.spec.Max)
		b.level = m - (m-b.level)*math.Exp(-dt/float64(b.spec.Rise))
	} else {
		b.level *= math.Exp(-dt / float64(b.spec.Drain))
	}
}

// newFlap returns the alternator of a FlapSpec.
func newFlap(spec FlapSpec, seed uint64) *alternator {
	return newAlternator(seed, streamFlap, func(r *rand.Rand, _ int) time.Duration {
		return spec.MinHold + time.Duration(r.Float64()*float64(spec.MaxHold-spec.MinHold))
	})
}

func (v *validator) periodic(path string, p *PeriodicSpec) {
	if p == nil {
		return
	}
	v.delay(path+".period", p.Period)
	v.delay(path+".phase", p.Phase)
}

func (v *validator) bloat(path string, b *BloatSpec) {
	if b == nil {
		return
	}
	v.delay(path+".max", b.Max)
	for _, f := range []struct {
		name string
		d    time.Duration
		min  time.Duration
	}{{"rise", b.Rise, 1}, {"drain", b.Drain, 1}, {"busy", b.Busy, MinHold}, {"idle", b.Idle, MinHold}} {
		switch {
		case f.d < f.min:
			v.addf(path+"."+f.name, "must be at least %v, got %v", f.min, f.d)
		case f.d > MaxDelay:
			v.addf(path+"."+f.name, "must be at most %v, got %v", MaxDelay, f.d)
		}
	}
}

func (v *validator) flap(path string, f *FlapSpec) {
	if f == nil {
		return
	}
	v.delay(path+".extra", f.Extra)
	switch {
	case f.MinHold < MinHold:
		v.addf(path+".minHold", "must be at least %v, got %v", MinHold, f.MinHold)
	case f.MaxHold < f.MinHold:
		v.addf(path+".maxHold", "must be at least minHold (%v), got %v", f.MinHold, f.MaxHold)
	case f.MaxHold > MaxDelay:
		v.addf(path+".maxHold", "must be at most %v, got %v", MaxDelay, f.MaxHold)
	}
}
