package debugpage

// HistoryLen is the number of samples a History keeps: five minutes at
// one a second.
const HistoryLen = 300

// History is a ring of a client's last HistoryLen samples: 19,200 bytes
// whatever runs. Not safe for concurrent use.
type History struct {
	s    [HistoryLen]Sample
	head int // the oldest sample
	n    int
}

// Add appends s, dropping the oldest sample if full.
func (h *History) Add(s Sample) {
	if h.n < HistoryLen {
		h.s[(h.head+h.n)%HistoryLen] = s
		h.n++
		return
	}
	h.s[h.head] = s
	h.head = (h.head + 1) % HistoryLen
}

// Len returns the number of samples held.
func (h *History) Len() int { return h.n }

// Last returns the newest sample, and false if there is none.
func (h *History) Last() (Sample, bool) {
	if h.n == 0 {
		return Sample{}, false
	}
	return h.s[(h.head+h.n-1)%HistoryLen], true
}

// AppendTo appends the samples, oldest first, to dst.
func (h *History) AppendTo(dst []Sample) []Sample {
	for i := range h.n {
		dst = append(dst, h.s[(h.head+i)%HistoryLen])
	}
	return dst
}

// SeriesOf returns samples as the page's columns.
func SeriesOf(samples []Sample) *Series {
	n := len(samples)
	s := &Series{T: make([]float64, 0, n), RTT: make([]float64, 0, n), Uplink: make([]float64, 0, n),
		Downlink: make([]float64, 0, n), Jitter: make([]float64, 0, n), Offset: make([]float64, 0, n),
		Bound: make([]float64, 0, n), Drift: make([]float64, 0, n), PredictedScale: make([]float64, 0, n),
		ServerScale: make([]float64, 0, n), Lead: make([]float64, 0, n), Interp: make([]float64, 0, n),
		Loss: make([]float64, 0, n), Resets: make([]int64, 0, n), State: make([]int, 0, n)}
	for _, x := range samples {
		p := x.Point()
		s.T = append(s.T, p.T)
		s.RTT = append(s.RTT, p.RTT)
		s.Uplink = append(s.Uplink, p.Uplink)
		s.Downlink = append(s.Downlink, p.Downlink)
		s.Jitter = append(s.Jitter, p.Jitter)
		s.Offset = append(s.Offset, p.Offset)
		s.Bound = append(s.Bound, p.Bound)
		s.Drift = append(s.Drift, p.Drift)
		s.PredictedScale = append(s.PredictedScale, p.PredictedScale)
		s.ServerScale = append(s.ServerScale, p.ServerScale)
		s.Lead = append(s.Lead, p.Lead)
		s.Interp = append(s.Interp, p.Interp)
		s.Loss = append(s.Loss, p.Loss)
		s.Resets = append(s.Resets, p.Resets)
		s.State = append(s.State, int(x.State))
	}
	return s
}

// EventsLen is the number of events an Events ring keeps.
const EventsLen = 16

// Events is a ring of a client's last EventsLen events. Not safe for
// concurrent use.
type Events struct {
	e    [EventsLen]Event
	head int
	n    int
}

// Add appends e, dropping the oldest event if full.
func (r *Events) Add(e Event) {
	if r.n < EventsLen {
		r.e[(r.head+r.n)%EventsLen] = e
		r.n++
		return
	}
	r.e[r.head] = e
	r.head = (r.head + 1) % EventsLen
}

// List returns the events, oldest first; never nil.
func (r *Events) List() []Event {
	out := make([]Event, 0, r.n)
	for i := range r.n {
		out = append(out, r.e[(r.head+i)%EventsLen])
	}
	return out
}
