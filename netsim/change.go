package netsim

import "time"

// Change modifies a link from true time At on. Fields left nil keep their
// value; a set field replaces it (absolute values, not deltas). Later changes
// override earlier ones. Outage is separate: it drops every packet sent in
// [At, At+Outage) and ends by itself.
//
// With Ramp set, the numeric values the change sets (base, loss, reorder,
// reorderDelay, duplicate, the queue's parameters, and the jitter's when the
// kind stays the same) move linearly from their previous values to the new
// ones over [At, At+Ramp); everything else switches at At.
type Change struct {
	// At is the true time the change takes effect; it must not be negative.
	At time.Duration
	// Direction is the link affected: DirUp, DirDown or DirBoth.
	Direction Direction
	// Base, if set, is the new base delay.
	Base *time.Duration
	// Jitter, if set, is the new jitter.
	Jitter *JitterSpec
	// Loss, if set, is the new random loss probability.
	Loss *float64
	// Outage, if positive, drops every packet sent in [At, At+Outage).
	// Packets already in flight at At are still delivered.
	Outage time.Duration
	// Queue, if set, is the new queue; a zero QueueSpec switches it off.
	// The queue's level carries over and relaxes to the new mean with the
	// new Tau.
	Queue *QueueSpec
	// Steps, if set, is the new handover step process; Max 0 switches it
	// off.
	Steps *StepSpec
	// Reorder, if set, is the new reordering probability.
	Reorder *float64
	// ReorderDelay, if set, is the new delay of held-back packets.
	ReorderDelay *time.Duration
	// Duplicate, if set, is the new duplication probability.
	Duplicate *float64
	// Periodic, if set, is the new periodic service; a zero Period
	// switches it off (power save off).
	Periodic *PeriodicSpec
	// Ramp, if positive, spreads the change over [At, At+Ramp) (see the
	// type's documentation).
	Ramp time.Duration
}

// setsLink reports whether c sets any value of a link (as opposed to only an
// outage).
func (c Change) setsLink() bool {
	return c.Base != nil || c.Jitter != nil || c.Loss != nil || c.Queue != nil || c.Steps != nil ||
		c.Reorder != nil || c.ReorderDelay != nil || c.Duplicate != nil || c.Periodic != nil
}

// Validate reports whether c is a usable change.
func (c Change) Validate() error {
	var v validator
	c.validate(&v, "change")
	return v.err()
}

func (c Change) validate(v *validator, path string) {
	if c.At < 0 {
		v.addf(path+".at", "must not be negative, got %v", c.At)
	}
	switch c.Direction {
	case DirUp, DirDown, DirBoth:
	default:
		v.addf(path+".direction", "must be \"up\", \"down\" or \"both\", got %q", c.Direction)
	}
	if c.Base != nil {
		v.delay(path+".base", *c.Base)
	}
	if c.Jitter != nil {
		c.Jitter.validate(v, path+".jitter")
	}
	if c.Loss != nil {
		v.prob(path+".loss", *c.Loss)
	}
	v.delay(path+".outage", c.Outage)
	if q := c.Queue; q != nil {
		v.delay(path+".queue.mean", q.Mean)
		v.delay(path+".queue.stdDev", q.StdDev)
		v.delay(path+".queue.tau", q.Tau)
	}
	if st := c.Steps; st != nil {
		if st.Interval <= 0 {
			v.addf(path+".steps.interval", "must be positive, got %v", st.Interval)
		}
		v.delay(path+".steps.max", st.Max)
	}
	if c.Reorder != nil {
		v.prob(path+".reorder", *c.Reorder)
	}
	if c.ReorderDelay != nil {
		v.delay(path+".reorderDelay", *c.ReorderDelay)
	}
	if c.Duplicate != nil {
		v.prob(path+".duplicate", *c.Duplicate)
	}
	v.periodic(path+".periodic", c.Periodic)
	v.delay(path+".ramp", c.Ramp)
	if !c.setsLink() && c.Outage == 0 {
		v.addf(path, "changes nothing: set base, jitter, loss, queue, steps, reorder, reorderDelay, duplicate, periodic or outage")
	}
	if c.Ramp > 0 && !c.setsLink() {
		v.addf(path+".ramp", "ramps nothing: set a value to ramp to")
	}
}

// applies reports whether c affects the link of direction d.
func (c Change) applies(d Direction) bool {
	return c.Direction == DirBoth || c.Direction == d
}

// rampSegment is the segment a fraction f of the way from a to b: numeric
// values interpolated, the rest as in b.
func rampSegment(a, b *linkSegment, f float64) linkSegment {
	d := func(x, y time.Duration) time.Duration { return x + time.Duration(f*float64(y-x)) }
	p := func(x, y float64) float64 { return x + f*(y-x) }
	s := *b
	s.base = d(a.base, b.base)
	s.loss = p(a.loss, b.loss)
	s.reorder = p(a.reorder, b.reorder)
	s.reorderDelay = d(a.reorderDelay, b.reorderDelay)
	s.duplicate = p(a.duplicate, b.duplicate)
	if a.queue != nil || b.queue != nil {
		qa, qb := QueueSpec{}, QueueSpec{}
		if a.queue != nil {
			qa = *a.queue
		}
		if b.queue != nil {
			qb = *b.queue
		}
		if b.queue == nil {
			qb.Tau = qa.Tau
		}
		if a.queue == nil {
			qa.Tau = qb.Tau
		}
		s.queue = &QueueSpec{Mean: d(qa.Mean, qb.Mean), StdDev: d(qa.StdDev, qb.StdDev), Tau: d(qa.Tau, qb.Tau)}
	}
	if a.jitter.Kind == b.jitter.Kind && a.jitter.Histogram == b.jitter.Histogram {
		j := b.jitter
		j.Spread, j.Mean, j.StdDev = d(a.jitter.Spread, j.Spread), d(a.jitter.Mean, j.Mean), d(a.jitter.StdDev, j.StdDev)
		j.Scale, j.Shape = d(a.jitter.Scale, j.Scale), p(a.jitter.Shape, j.Shape)
		if a.jitter.Cap > 0 && j.Cap > 0 {
			j.Cap = d(a.jitter.Cap, j.Cap)
		}
		s.jitter = j
	}
	return s
}
