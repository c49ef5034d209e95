package netsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// MaxTime bounds the true and local times a Clock is defined for: about ±146
// years around true time 0. TrueTime saturates at ±MaxTime.
const MaxTime = time.Duration(1 << 62)

// Limits checked by ClockSpec.Validate.
const (
	// MaxClockStep is the largest accepted |Offset| + Σ|Jump.By| (about 36
	// years).
	MaxClockStep = time.Duration(1 << 60)

	// MaxPPM is the largest accepted |DriftPPM| + Σ|Slew.PPM|: half of the
	// true rate, so a modelled clock always runs forward at 0.5x to 1.5x.
	MaxPPM = 500_000
)

// ClockSpec describes a clock relative to true time. True time is the
// simulation's ideal time line, in nanoseconds since the start of the run. The
// zero value is a perfect clock (it reads true time).
//
// The reading at true time t is
//
//	t + Offset + Σ{Jump.By : Jump.At <= t}
//	  + round((DriftPPM*t + Σ Slew.PPM*(clamp(t, Slew.From, Slew.To) - Slew.From) + W(t)) / 1e6)
//
// computed in integer nanoseconds except for the rounded rate term, where
// W(t) is the integral of the Wander random walk (0 without one). During a
// Suspend the clock stops (t and the rate term stand still, as Linux's
// CLOCK_MONOTONIC does while the machine sleeps) and it resumes from where
// it stopped: the reading loses the suspended time.
type ClockSpec struct {
	// Offset is the local reading minus true time at true time 0. It may be
	// negative. Default 0.
	Offset time.Duration

	// DriftPPM is the frequency error in parts per million: the clock runs
	// at (1 + DriftPPM/1e6) times the true rate. Positive runs fast. 50 ppm
	// gains 3 ms per minute. Default 0.
	DriftPPM float64

	// Jumps are steps of the reading (suspend/resume, VM migration, a
	// stepped NTP correction). Any order; jumps at the same instant add up.
	Jumps []Jump

	// Slews are temporary extra rate changes (NTP or chrony slewing a
	// correction in). They may overlap; their rates add up.
	Slews []Slew

	// Suspends are intervals during which the machine sleeps: the clock
	// stops, and (in the harness) the client's frames and pings stop and
	// what arrives for it is lost. They must not overlap. Only the client
	// may suspend.
	Suspends []Suspend

	// Wander, if set, makes the frequency error a random walk around
	// DriftPPM (temperature, ageing). Default none.
	Wander *Wander
}

// Suspend stops a clock during the true-time window [At, At+For).
type Suspend struct {
	// At is the true time the machine goes to sleep.
	At time.Duration
	// For is how long it sleeps; it must be positive.
	For time.Duration
}

// Validate reports whether s is usable: finite rates, |DriftPPM| + Σ|PPM| <=
// MaxPPM, |Offset| + Σ|By| <= MaxClockStep, every At/From/To within ±MaxTime
// and From < To.
func (s ClockSpec) Validate() error {
	var v validator
	s.validate(&v, "clock")
	return v.err()
}

func (s ClockSpec) validate(v *validator, path string) {
	if math.IsNaN(s.DriftPPM) || math.IsInf(s.DriftPPM, 0) {
		v.addf(path+".driftPPM", "must be a finite number, got %v", s.DriftPPM)
	}
	ppm := math.Abs(s.DriftPPM)
	step := absDur(s.Offset)
	for i, j := range s.Jumps {
		p := fmt.Sprintf("%s.jumps[%d]", path, i)
		if j.At < -MaxTime || j.At > MaxTime {
			v.addf(p+".at", "must be within ±%v, got %v", MaxTime, j.At)
		}
		if absDur(j.By) > MaxClockStep {
			v.addf(p+".by", "must be within ±%v, got %v", MaxClockStep, j.By)
		} else if step <= MaxClockStep {
			step += absDur(j.By)
		}
	}
	if step > MaxClockStep {
		v.addf(path, "|offset| + Σ|jumps[].by| must be at most %v, got more", MaxClockStep)
	}
	for i, sl := range s.Slews {
		p := fmt.Sprintf("%s.slews[%d]", path, i)
		if math.IsNaN(sl.PPM) || math.IsInf(sl.PPM, 0) {
			v.addf(p+".ppm", "must be a finite number, got %v", sl.PPM)
		} else {
			ppm += math.Abs(sl.PPM)
		}
		if sl.From < -MaxTime || sl.From > MaxTime {
			v.addf(p+".from", "must be within ±%v, got %v", MaxTime, sl.From)
		}
		if sl.To < -MaxTime || sl.To > MaxTime {
			v.addf(p+".to", "must be within ±%v, got %v", MaxTime, sl.To)
		}
		if sl.To <= sl.From {
			v.addf(p, "to (%v) must be after from (%v)", sl.To, sl.From)
		}
	}
	if w := s.Wander; w != nil {
		if math.IsNaN(w.PPMPerMinute) || w.PPMPerMinute < 0 || w.PPMPerMinute > MaxPPM {
			v.addf(path+".wander.ppmPerMinute", "must be in [0, %d], got %v", MaxPPM, w.PPMPerMinute)
		}
		if w.Step != 0 && (w.Step < 10*time.Millisecond || w.Step > time.Hour) {
			v.addf(path+".wander.step", "must be 0 (1s) or in [10ms, 1h], got %v", w.Step)
		}
		if math.IsNaN(w.LimitPPM) || math.IsInf(w.LimitPPM, 0) || w.LimitPPM < 0 {
			v.addf(path+".wander.limitPPM", "must be a finite number >= 0, got %v", w.LimitPPM)
		} else if ppm <= MaxPPM {
			ppm += w.limit()
		}
	}
	if ppm > MaxPPM {
		v.addf(path, "|driftPPM| + Σ|slews[].ppm| + wander.limitPPM must be at most %d, got %v", MaxPPM, ppm)
	}
	sus := slices.Clone(s.Suspends)
	slices.SortFunc(sus, func(a, b Suspend) int { return cmpDur(a.At, b.At) })
	for i, su := range s.Suspends {
		p := fmt.Sprintf("%s.suspends[%d]", path, i)
		if su.At < 0 || su.At > MaxTime/2 {
			v.addf(p+".at", "must be within [0, %v], got %v", MaxTime/2, su.At)
		}
		if su.For <= 0 || su.For > MaxTime/2 {
			v.addf(p+".for", "must be positive and at most %v, got %v", MaxTime/2, su.For)
		}
	}
	for i := 1; i < len(sus); i++ {
		if sus[i].At < sus[i-1].At+sus[i-1].For {
			v.addf(path+".suspends", "must not overlap: one at %v during the one at %v", sus[i].At, sus[i-1].At)
			break
		}
	}
}

// Clock is a model clock built from a ClockSpec. It is immutable and safe for
// concurrent use.
type Clock struct {
	spec     ClockSpec
	jumps    []Jump          // sorted by At
	slews    []Slew          // as given
	suspends []Suspend       // sorted by At
	breaks   []time.Duration // sorted unique jump, slew and suspend boundaries

	wander *wanderWalk // nil without Wander
}

// NewClock validates spec and builds its clock.
func NewClock(spec ClockSpec) (*Clock, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	c := &Clock{spec: cloneClockSpec(spec)}
	c.jumps = slices.Clone(spec.Jumps)
	slices.SortStableFunc(c.jumps, func(a, b Jump) int { return cmpDur(a.At, b.At) })
	c.slews = slices.Clone(spec.Slews)
	c.suspends = slices.Clone(spec.Suspends)
	slices.SortFunc(c.suspends, func(a, b Suspend) int { return cmpDur(a.At, b.At) })
	for _, j := range c.jumps {
		c.breaks = append(c.breaks, j.At)
	}
	for _, s := range c.slews {
		c.breaks = append(c.breaks, s.From, s.To)
	}
	for _, s := range c.suspends {
		c.breaks = append(c.breaks, s.At, s.At+s.For)
	}
	if w := spec.Wander; w != nil {
		ww := &wanderWalk{spec: *w, step: w.step(), rng: rand.New(rand.NewPCG(w.Seed, mix(w.Seed^0x77616e646572)))}
		ww.sigma = w.PPMPerMinute * math.Sqrt(float64(ww.step)/float64(time.Minute))
		ww.rate, ww.phase = []float64{0}, []float64{0}
		c.wander = ww
	}
	slices.Sort(c.breaks)
	c.breaks = slices.Compact(c.breaks)
	return c, nil
}

// Spec returns a copy of the spec c was built from.
func (c *Clock) Spec() ClockSpec { return cloneClockSpec(c.spec) }

// Read returns the clock's reading at true time t (|t| <= MaxTime). It is
// exact and deterministic; between jumps it never decreases.
func (c *Clock) Read(t time.Duration) time.Duration {
	r := t + c.spec.Offset
	for _, j := range c.jumps {
		if j.At > t {
			break
		}
		r += j.By
	}
	g := c.rateTerm(t)
	for _, s := range c.suspends {
		if s.At >= t {
			break
		}
		e := min(t, s.At+s.For)
		r -= e - s.At
		g -= c.rateTerm(e) - c.rateTerm(s.At)
	}
	return r + time.Duration(math.Round(g/1e6))
}

// rateTerm is the accumulated rate error at t, in ppm·ns.
func (c *Clock) rateTerm(t time.Duration) float64 {
	g := c.spec.DriftPPM * float64(t)
	for _, s := range c.slews {
		if t > s.From {
			e := min(t, s.To)
			g += s.PPM * float64(e-s.From)
		}
	}
	if c.wander != nil {
		g += c.wander.at(t)
	}
	return g
}

// Suspended reports whether the machine of this clock sleeps at true time t.
func (c *Clock) Suspended(t time.Duration) bool {
	_, ok := c.SuspendedUntil(t)
	return ok
}

// SuspendedUntil returns the end of the suspend holding true time t, and
// false if t is in none.
func (c *Clock) SuspendedUntil(t time.Duration) (time.Duration, bool) {
	for _, s := range c.suspends {
		if s.At > t {
			break
		}
		if t < s.At+s.For {
			return s.At + s.For, true
		}
	}
	return 0, false
}

// Offset returns the clock's error at true time t: Read(t) - t.
func (c *Clock) Offset(t time.Duration) time.Duration { return c.Read(t) - t }

// RatePPM returns the clock's rate error at true time t in parts per million:
// DriftPPM plus the slews active at t plus the wander (while suspended the
// clock stands still; RatePPM still gives its oscillator's rate).
func (c *Clock) RatePPM(t time.Duration) float64 {
	p := c.spec.DriftPPM
	if c.wander != nil {
		p += c.wander.rateAt(t)
	}
	for _, s := range c.slews {
		if t >= s.From && t < s.To {
			p += s.PPM
		}
	}
	return p
}

// TrueTime returns the earliest true time at which the clock reads local or
// more: the moment a timer set for local would fire. For a clock without
// jumps it is the exact inverse of Read to the nanosecond:
// Read(TrueTime(x)) >= x > Read(TrueTime(x)-1). Local values skipped by a
// forward jump map to the jump; local values repeated after a backward jump
// map to their first occurrence (use TrueTimeAfter to get the later one).
func (c *Clock) TrueTime(local time.Duration) time.Duration {
	return c.TrueTimeAfter(local, -MaxTime)
}

// TrueTimeAfter returns the earliest true time t >= after at which the clock
// reads local or more (after itself if it already does): when a timer set at
// true time after for local time local fires. It saturates at MaxTime.
func (c *Clock) TrueTimeAfter(local, after time.Duration) time.Duration {
	t := min(max(after, -MaxTime), MaxTime)
	i, _ := slices.BinarySearch(c.breaks, t+1) // first break > t
	for {
		end := MaxTime
		if i < len(c.breaks) {
			end = c.breaks[i] - 1
		}
		if end >= t && c.Read(end) >= local {
			return c.search(t, end, local)
		}
		if i >= len(c.breaks) {
			return MaxTime
		}
		t = c.breaks[i]
		i++
	}
}

// search returns the smallest t in [lo, hi] with Read(t) >= local, given that
// Read is nondecreasing on [lo, hi] (no break inside) and Read(hi) >= local.
func (c *Clock) search(lo, hi, local time.Duration) time.Duration {
	rlo := c.Read(lo)
	if rlo >= local {
		return lo
	}
	// Read(a) < local <= Read(b).
	a, b := lo, hi
	rate := 1 + c.RatePPM(lo)/1e6
	guess := lo + time.Duration(float64(local-rlo)/rate)
	if guess > a && guess < b {
		step := time.Duration(1)
		if c.Read(guess) >= local {
			b = guess
			for {
				g := b - step
				if g <= a {
					break
				}
				if c.Read(g) < local {
					a = g
					break
				}
				b = g
				step *= 2
			}
		} else {
			a = guess
			for {
				g := a + step
				if g >= b {
					break
				}
				if c.Read(g) >= local {
					b = g
					break
				}
				a = g
				step *= 2
			}
		}
	}
	for b-a > 1 {
		m := a + (b-a)/2
		if c.Read(m) >= local {
			b = m
		} else {
			a = m
		}
	}
	return b
}

func cloneClockSpec(s ClockSpec) ClockSpec {
	s.Jumps = slices.Clone(s.Jumps)
	s.Slews = slices.Clone(s.Slews)
	s.Suspends = slices.Clone(s.Suspends)
	if s.Wander != nil {
		s.Wander = ptr(*s.Wander)
	}
	return s
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func cmpDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
