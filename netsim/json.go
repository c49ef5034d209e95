package netsim

import (
	"encoding/json"
	"math"
	"time"
)

// The JSON forms. They mirror the public types with Duration in place of
// time.Duration and lower-camel-case keys. Decoding is strict: unknown keys
// are errors.

type jitterJSON struct {
	Kind   JitterKind `json:"kind,omitempty"`
	Spread Duration   `json:"spread,omitzero"`
	Mean   Duration   `json:"mean,omitzero"`
	StdDev Duration   `json:"stdDev,omitzero"`
	Scale  Duration   `json:"scale,omitzero"`
	Shape  float64    `json:"shape,omitzero"`
	Cap    Duration   `json:"cap,omitzero"`
	// Histogram names a built-in histogram; Bins give one inline as
	// [lower bound in ms, count] rows, the last closing the last bin.
	Histogram string      `json:"histogram,omitempty"`
	Bins      [][]float64 `json:"bins,omitempty"`
}

type periodicJSON struct {
	Period Duration `json:"period"`
	Phase  Duration `json:"phase,omitzero"`
}

type bloatJSON struct {
	Max   Duration `json:"max"`
	Rise  Duration `json:"rise"`
	Drain Duration `json:"drain"`
	Busy  Duration `json:"busy"`
	Idle  Duration `json:"idle"`
}

type flapJSON struct {
	Extra   Duration `json:"extra"`
	MinHold Duration `json:"minHold"`
	MaxHold Duration `json:"maxHold"`
}

type suspendJSON struct {
	At  Duration `json:"at"`
	For Duration `json:"for"`
}

type wanderJSON struct {
	PPMPerMinute float64  `json:"ppmPerMinute"`
	Step         Duration `json:"step,omitzero"`
	LimitPPM     float64  `json:"limitPPM,omitzero"`
	Seed         uint64   `json:"seed,omitzero"`
}

type queueJSON struct {
	Mean   Duration `json:"mean"`
	StdDev Duration `json:"stdDev"`
	Tau    Duration `json:"tau"`
}

type stepsJSON struct {
	Interval Duration `json:"interval"`
	Max      Duration `json:"max"`
}

type burstJSON struct {
	PGoodToBad float64 `json:"pGoodToBad"`
	PBadToGood float64 `json:"pBadToGood"`
	LossInBad  float64 `json:"lossInBad"`
}

type linkJSON struct {
	Base         Duration      `json:"base"`
	Jitter       jitterJSON    `json:"jitter,omitzero"`
	Queue        *queueJSON    `json:"queue,omitempty"`
	Steps        *stepsJSON    `json:"steps,omitempty"`
	Loss         float64       `json:"loss,omitzero"`
	Burst        *burstJSON    `json:"burst,omitempty"`
	Reorder      float64       `json:"reorder,omitzero"`
	ReorderDelay Duration      `json:"reorderDelay,omitzero"`
	Duplicate    float64       `json:"duplicate,omitzero"`
	Periodic     *periodicJSON `json:"periodic,omitempty"`
	Bloat        *bloatJSON    `json:"bloat,omitempty"`
	Flap         *flapJSON     `json:"flap,omitempty"`
}

type jumpJSON struct {
	At Duration `json:"at"`
	By Duration `json:"by"`
}

type slewJSON struct {
	From Duration `json:"from"`
	To   Duration `json:"to"`
	PPM  float64  `json:"ppm"`
}

type clockJSON struct {
	Offset   Duration      `json:"offset,omitzero"`
	DriftPPM float64       `json:"driftPPM,omitzero"`
	Jumps    []jumpJSON    `json:"jumps,omitempty"`
	Slews    []slewJSON    `json:"slews,omitempty"`
	Suspends []suspendJSON `json:"suspends,omitempty"`
	Wander   *wanderJSON   `json:"wander,omitempty"`
}

type framesJSON struct {
	Interval      Duration `json:"interval,omitzero"`
	Jitter        Duration `json:"jitter,omitzero"`
	HitchProb     float64  `json:"hitchProb,omitzero"`
	HitchDuration Duration `json:"hitchDuration,omitzero"`
}

type changeJSON struct {
	At           Duration      `json:"at"`
	Direction    Direction     `json:"direction"`
	Base         *Duration     `json:"base,omitempty"`
	Jitter       *jitterJSON   `json:"jitter,omitempty"`
	Loss         *float64      `json:"loss,omitempty"`
	Outage       Duration      `json:"outage,omitzero"`
	Queue        *queueJSON    `json:"queue,omitempty"`
	Steps        *stepsJSON    `json:"steps,omitempty"`
	Reorder      *float64      `json:"reorder,omitempty"`
	ReorderDelay *Duration     `json:"reorderDelay,omitempty"`
	Duplicate    *float64      `json:"duplicate,omitempty"`
	Periodic     *periodicJSON `json:"periodic,omitempty"`
	Ramp         Duration      `json:"ramp,omitzero"`
}

type profileJSON struct {
	Name        string       `json:"name"`
	Description string       `json:"description,omitempty"`
	Up          linkJSON     `json:"up"`
	Down        linkJSON     `json:"down"`
	Client      clockJSON    `json:"client,omitzero"`
	Server      clockJSON    `json:"server,omitzero"`
	Frames      framesJSON   `json:"frames,omitzero"`
	Changes     []changeJSON `json:"changes,omitempty"`
}

// Conversions to the JSON forms.

func (j JitterSpec) toJSON() jitterJSON {
	m := jitterJSON{Kind: j.Kind, Spread: Duration(j.Spread), Mean: Duration(j.Mean), StdDev: Duration(j.StdDev),
		Scale: Duration(j.Scale), Shape: j.Shape, Cap: Duration(j.Cap)}
	if h := j.Histogram; h != nil {
		if b, ok := BuiltinHistogram(h.Name); ok && b == h {
			m.Histogram = h.Name
		} else {
			for _, bin := range h.Bins {
				m.Bins = append(m.Bins, []float64{float64(bin.Lower) / 1e6, bin.Count})
			}
		}
	}
	return m
}

func (p *PeriodicSpec) toJSON() *periodicJSON {
	if p == nil {
		return nil
	}
	return &periodicJSON{Duration(p.Period), Duration(p.Phase)}
}

func (m *periodicJSON) spec() *PeriodicSpec {
	if m == nil {
		return nil
	}
	return &PeriodicSpec{time.Duration(m.Period), time.Duration(m.Phase)}
}

func (q QueueSpec) toJSON() queueJSON {
	return queueJSON{Duration(q.Mean), Duration(q.StdDev), Duration(q.Tau)}
}

func (s StepSpec) toJSON() stepsJSON { return stepsJSON{Duration(s.Interval), Duration(s.Max)} }

func (g GilbertElliott) toJSON() burstJSON { return burstJSON(g) }

func (s LinkSpec) toJSON() linkJSON {
	m := linkJSON{
		Base:         Duration(s.Base),
		Jitter:       s.Jitter.toJSON(),
		Loss:         s.Loss,
		Reorder:      s.Reorder,
		ReorderDelay: Duration(s.ReorderDelay),
		Duplicate:    s.Duplicate,
	}
	if s.Queue != nil {
		q := s.Queue.toJSON()
		m.Queue = &q
	}
	if s.Steps != nil {
		st := s.Steps.toJSON()
		m.Steps = &st
	}
	if s.Burst != nil {
		b := s.Burst.toJSON()
		m.Burst = &b
	}
	m.Periodic = s.Periodic.toJSON()
	if b := s.Bloat; b != nil {
		m.Bloat = &bloatJSON{Duration(b.Max), Duration(b.Rise), Duration(b.Drain), Duration(b.Busy), Duration(b.Idle)}
	}
	if f := s.Flap; f != nil {
		m.Flap = &flapJSON{Duration(f.Extra), Duration(f.MinHold), Duration(f.MaxHold)}
	}
	return m
}

func (j Jump) toJSON() jumpJSON { return jumpJSON{Duration(j.At), Duration(j.By)} }

func (s Slew) toJSON() slewJSON { return slewJSON{Duration(s.From), Duration(s.To), s.PPM} }

func (s ClockSpec) toJSON() clockJSON {
	m := clockJSON{Offset: Duration(s.Offset), DriftPPM: s.DriftPPM}
	for _, j := range s.Jumps {
		m.Jumps = append(m.Jumps, j.toJSON())
	}
	for _, sl := range s.Slews {
		m.Slews = append(m.Slews, sl.toJSON())
	}
	for _, su := range s.Suspends {
		m.Suspends = append(m.Suspends, suspendJSON{Duration(su.At), Duration(su.For)})
	}
	if w := s.Wander; w != nil {
		m.Wander = &wanderJSON{w.PPMPerMinute, Duration(w.Step), w.LimitPPM, w.Seed}
	}
	return m
}

func (s FrameSpec) toJSON() framesJSON {
	return framesJSON{Duration(s.Interval), Duration(s.Jitter), s.HitchProb, Duration(s.HitchDuration)}
}

func (c Change) toJSON() changeJSON {
	m := changeJSON{At: Duration(c.At), Direction: c.Direction, Outage: Duration(c.Outage)}
	if c.Base != nil {
		b := Duration(*c.Base)
		m.Base = &b
	}
	if c.Jitter != nil {
		j := c.Jitter.toJSON()
		m.Jitter = &j
	}
	if c.Loss != nil {
		l := *c.Loss
		m.Loss = &l
	}
	if c.Queue != nil {
		m.Queue = ptr(c.Queue.toJSON())
	}
	if c.Steps != nil {
		m.Steps = ptr(c.Steps.toJSON())
	}
	if c.Reorder != nil {
		m.Reorder = ptr(*c.Reorder)
	}
	if c.ReorderDelay != nil {
		m.ReorderDelay = ptr(Duration(*c.ReorderDelay))
	}
	if c.Duplicate != nil {
		m.Duplicate = ptr(*c.Duplicate)
	}
	m.Periodic = c.Periodic.toJSON()
	m.Ramp = Duration(c.Ramp)
	return m
}

func (p Profile) toJSON() profileJSON {
	m := profileJSON{
		Name:        p.Name,
		Description: p.Description,
		Up:          p.Up.toJSON(),
		Down:        p.Down.toJSON(),
		Client:      p.Client.toJSON(),
		Server:      p.Server.toJSON(),
		Frames:      p.Frames.toJSON(),
	}
	for _, c := range p.Changes {
		m.Changes = append(m.Changes, c.toJSON())
	}
	return m
}

// Conversions from the JSON forms.

func (m jitterJSON) spec() JitterSpec {
	j := JitterSpec{Kind: m.Kind, Spread: time.Duration(m.Spread), Mean: time.Duration(m.Mean), StdDev: time.Duration(m.StdDev),
		Scale: time.Duration(m.Scale), Shape: m.Shape, Cap: time.Duration(m.Cap)}
	switch {
	case m.Histogram != "" && m.Bins != nil:
		// Both: an invalid histogram whose validation says so.
		j.Histogram = &Histogram{Name: m.Histogram, Bins: []HistogramBin{{Lower: -1}}}
	case m.Histogram != "":
		if h, ok := BuiltinHistogram(m.Histogram); ok {
			j.Histogram = h
		} else {
			j.Histogram = &Histogram{Name: m.Histogram}
		}
	case m.Bins != nil:
		h := &Histogram{}
		for _, row := range m.Bins {
			b := HistogramBin{Lower: -1, Count: math.NaN()}
			if len(row) == 2 {
				b = HistogramBin{Lower: time.Duration(math.Round(row[0] * 1e6)), Count: row[1]}
				if math.IsNaN(row[0]) || math.Abs(row[0]) > float64(MaxDelay/time.Millisecond) {
					b.Lower = -1
				}
			}
			h.Bins = append(h.Bins, b)
		}
		j.Histogram = h
	}
	return j
}

func (m queueJSON) spec() QueueSpec {
	return QueueSpec{time.Duration(m.Mean), time.Duration(m.StdDev), time.Duration(m.Tau)}
}

func (m stepsJSON) spec() StepSpec { return StepSpec{time.Duration(m.Interval), time.Duration(m.Max)} }

func (m burstJSON) spec() GilbertElliott { return GilbertElliott(m) }

func (m linkJSON) spec() LinkSpec {
	s := LinkSpec{
		Base:         time.Duration(m.Base),
		Jitter:       m.Jitter.spec(),
		Loss:         m.Loss,
		Reorder:      m.Reorder,
		ReorderDelay: time.Duration(m.ReorderDelay),
		Duplicate:    m.Duplicate,
	}
	if m.Queue != nil {
		q := m.Queue.spec()
		s.Queue = &q
	}
	if m.Steps != nil {
		st := m.Steps.spec()
		s.Steps = &st
	}
	if m.Burst != nil {
		b := m.Burst.spec()
		s.Burst = &b
	}
	s.Periodic = m.Periodic.spec()
	if b := m.Bloat; b != nil {
		s.Bloat = &BloatSpec{time.Duration(b.Max), time.Duration(b.Rise), time.Duration(b.Drain), time.Duration(b.Busy), time.Duration(b.Idle)}
	}
	if f := m.Flap; f != nil {
		s.Flap = &FlapSpec{time.Duration(f.Extra), time.Duration(f.MinHold), time.Duration(f.MaxHold)}
	}
	return s
}

func (m jumpJSON) spec() Jump { return Jump{time.Duration(m.At), time.Duration(m.By)} }

func (m slewJSON) spec() Slew { return Slew{time.Duration(m.From), time.Duration(m.To), m.PPM} }

func (m clockJSON) spec() ClockSpec {
	s := ClockSpec{Offset: time.Duration(m.Offset), DriftPPM: m.DriftPPM}
	for _, j := range m.Jumps {
		s.Jumps = append(s.Jumps, j.spec())
	}
	for _, sl := range m.Slews {
		s.Slews = append(s.Slews, sl.spec())
	}
	for _, su := range m.Suspends {
		s.Suspends = append(s.Suspends, Suspend{time.Duration(su.At), time.Duration(su.For)})
	}
	if w := m.Wander; w != nil {
		s.Wander = &Wander{w.PPMPerMinute, time.Duration(w.Step), w.LimitPPM, w.Seed}
	}
	return s
}

func (m framesJSON) spec() FrameSpec {
	return FrameSpec{time.Duration(m.Interval), time.Duration(m.Jitter), m.HitchProb, time.Duration(m.HitchDuration)}
}

func (m changeJSON) spec() Change {
	c := Change{At: time.Duration(m.At), Direction: m.Direction, Outage: time.Duration(m.Outage)}
	if m.Base != nil {
		b := time.Duration(*m.Base)
		c.Base = &b
	}
	if m.Jitter != nil {
		j := m.Jitter.spec()
		c.Jitter = &j
	}
	if m.Loss != nil {
		l := *m.Loss
		c.Loss = &l
	}
	if m.Queue != nil {
		c.Queue = ptr(m.Queue.spec())
	}
	if m.Steps != nil {
		c.Steps = ptr(m.Steps.spec())
	}
	if m.Reorder != nil {
		c.Reorder = ptr(*m.Reorder)
	}
	if m.ReorderDelay != nil {
		c.ReorderDelay = ptr(time.Duration(*m.ReorderDelay))
	}
	if m.Duplicate != nil {
		c.Duplicate = ptr(*m.Duplicate)
	}
	c.Periodic = m.Periodic.spec()
	c.Ramp = time.Duration(m.Ramp)
	return c
}

func (m profileJSON) spec() Profile {
	p := Profile{
		Name:        m.Name,
		Description: m.Description,
		Up:          m.Up.spec(),
		Down:        m.Down.spec(),
		Client:      m.Client.spec(),
		Server:      m.Server.spec(),
		Frames:      m.Frames.spec(),
	}
	for _, c := range m.Changes {
		p.Changes = append(p.Changes, c.spec())
	}
	return p
}

// MarshalJSON encodes p in the format described in the package
// documentation.
func (p Profile) MarshalJSON() ([]byte, error) { return json.Marshal(p.toJSON()) }

// UnmarshalJSON decodes p strictly (unknown keys are errors). It does not
// validate; ParseProfile does both.
func (p *Profile) UnmarshalJSON(b []byte) error {
	var m profileJSON
	if err := decodeStrict(b, &m); err != nil {
		return err
	}
	*p = m.spec()
	return nil
}

// MarshalJSON encodes s as in a profile's "up" or "down".
func (s LinkSpec) MarshalJSON() ([]byte, error) { return json.Marshal(s.toJSON()) }

// UnmarshalJSON decodes s strictly (unknown keys are errors).
func (s *LinkSpec) UnmarshalJSON(b []byte) error {
	var m linkJSON
	if err := decodeStrict(b, &m); err != nil {
		return err
	}
	*s = m.spec()
	return nil
}

// MarshalJSON encodes j as in a link's "jitter".
func (j JitterSpec) MarshalJSON() ([]byte, error) { return json.Marshal(j.toJSON()) }

// UnmarshalJSON decodes j strictly (unknown keys are errors).
func (j *JitterSpec) UnmarshalJSON(b []byte) error {
	var m jitterJSON
	if err := decodeStrict(b, &m); err != nil {
		return err
	}
	*j = m.spec()
	return nil
}

// MarshalJSON encodes q as in a link's "queue".
func (q QueueSpec) MarshalJSON() ([]byte, error) { return json.Marshal(q.toJSON()) }

// UnmarshalJSON decodes q strictly (unknown keys are errors).
func (q *QueueSpec) UnmarshalJSON(b []byte) error {
	var m queueJSON
	if err := decodeStrict(b, &m); err != nil {
		return err
	}
	*q = m.spec()
	return nil
}

// MarshalJSON encodes s as in a link's "steps".
func (s StepSpec) MarshalJSON() ([]byte, error) { return json.Marshal(s.toJSON()) }

// UnmarshalJSON decodes s strictly (unknown keys are errors).
func (s *StepSpec) UnmarshalJSON(b []byte) error {
	var m stepsJSON
	if err := decodeStrict(b, &m); err != nil {
		return err
	}
	*s = m.spec()
	return nil
}

// MarshalJSON encodes g as in a link's "burst".
func (g GilbertElliott) MarshalJSON() ([]byte, error) { return json.Marshal(g.toJSON()) }

// UnmarshalJSON decodes g strictly (unknown keys are errors).
func (g *GilbertElliott) UnmarshalJSON(b []byte) error {
	var m burstJSON
	if err := decodeStrict(b, &m); err != nil {
		return err
	}
	*g = m.spec()
	return nil
}

// MarshalJSON encodes s as in a profile's "client" or "server".
func (s ClockSpec) MarshalJSON() ([]byte, error) { return json.Marshal(s.toJSON()) }

// UnmarshalJSON decodes s strictly (unknown keys are errors).
func (s *ClockSpec) UnmarshalJSON(b []byte) error {
	var m clockJSON
	if err := decodeStrict(b, &m); err != nil {
		return err
	}
	*s = m.spec()
	return nil
}

// MarshalJSON encodes j as in a clock's "jumps".
func (j Jump) MarshalJSON() ([]byte, error) { return json.Marshal(j.toJSON()) }

// UnmarshalJSON decodes j strictly (unknown keys are errors).
func (j *Jump) UnmarshalJSON(b []byte) error {
	var m jumpJSON
	if err := decodeStrict(b, &m); err != nil {
		return err
	}
	*j = m.spec()
	return nil
}

// MarshalJSON encodes s as in a clock's "slews".
func (s Slew) MarshalJSON() ([]byte, error) { return json.Marshal(s.toJSON()) }

// UnmarshalJSON decodes s strictly (unknown keys are errors).
func (s *Slew) UnmarshalJSON(b []byte) error {
	var m slewJSON
	if err := decodeStrict(b, &m); err != nil {
		return err
	}
	*s = m.spec()
	return nil
}

// MarshalJSON encodes s as in a profile's "frames".
func (s FrameSpec) MarshalJSON() ([]byte, error) { return json.Marshal(s.toJSON()) }

// UnmarshalJSON decodes s strictly (unknown keys are errors).
func (s *FrameSpec) UnmarshalJSON(b []byte) error {
	var m framesJSON
	if err := decodeStrict(b, &m); err != nil {
		return err
	}
	*s = m.spec()
	return nil
}

// MarshalJSON encodes c as in a profile's "changes".
func (c Change) MarshalJSON() ([]byte, error) { return json.Marshal(c.toJSON()) }

// UnmarshalJSON decodes c strictly (unknown keys are errors).
func (c *Change) UnmarshalJSON(b []byte) error {
	var m changeJSON
	if err := decodeStrict(b, &m); err != nil {
		return err
	}
	*c = m.spec()
	return nil
}
