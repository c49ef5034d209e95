package harness

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/netclock/netclock/netsim"
	"github.com/netclock/netclock/provider"
)

// BufferOptions turn on the input and interpolation measurements of a Run
// (Options.Buffers): each simulated client sends an input every predicted
// tick, stamped with that tick; the server applies the inputs of a tick
// when the tick starts and sends a snapshot every SnapshotEvery ticks; the
// client interpolates at its server time every frame. Every model runs
// over netclock's clock (the KindNetclock systems), on its own copy of the
// run's network (same profile and seed, so the same events), so the
// clock's own pings, and every existing figure, are unchanged. Two more
// copies carry the oracles' probes: one sent at each tick start, one at
// each client frame. A run with Buffers keeps about 40 more bytes per
// client frame and model, and 24 per frame for the oracle.
type BufferOptions struct {
	// SnapshotEvery is the snapshot interval in server ticks. Default 1.
	SnapshotEvery int
	// Models are the buffer policies to measure. Default BufferModels().
	Models []BufferModel
}

// MeanP99 is a mean and a 99th percentile, in milliseconds.
type MeanP99 struct {
	// Mean and P99 are the figure's mean and 99th percentile.
	Mean float64 `json:"mean"`
	P99  float64 `json:"p99"`
}

// BufferResult is one buffer model's measurements, over the inputs for the
// ticks and the client frames after the warm-up (and before the last
// second, whose inputs may still be in flight).
type BufferResult struct {
	// Model is the BufferModel's Name.
	Model string `json:"model"`
	// InputsOnTime is the fraction of delivered inputs that arrived no
	// later than the start of their tick on the server.
	InputsOnTime float64 `json:"inputs_on_time"`
	// InputsLost is the fraction of inputs sent that never arrived.
	InputsLost float64 `json:"inputs_lost"`
	// InputLeadMS is how long before the start of its tick each delivered
	// input arrived (server clock; negative: late).
	InputLeadMS MeanP99 `json:"input_lead_ms"`
	// StarvedFrames is the fraction of client frames without a received
	// snapshot at or before and one at or after the interpolation time.
	StarvedFrames float64 `json:"starved_frames"`
	// InterpDelayMS is true server time − interpolation time per frame.
	InterpDelayMS MeanP99 `json:"interp_delay_ms"`
}

// The hindsight oracle's target rates.
const (
	oracleOnTime  = 0.99 // inputs on time
	oracleStarved = 0.01 // starved frames
	jitTail       = time.Second
	maxCatchUp    = 1024 // ticks sent in one frame at most
	// keepSnapshots is how far behind the newest snapshot the client
	// keeps the ones it received: an interpolation time further back is
	// starved.
	keepSnapshots = 10 * time.Second
	// fbRing is how many snapshots' feedback the server remembers for
	// delivery (18 minutes at 60 Hz: longer than any simulated delay).
	fbRing = 1 << 16
)

// OnTime is the fraction of leads ≥ 0 (an input arriving exactly at its
// tick's start is on time); 0 without leads.
func OnTime(leads []float64) float64 {
	if len(leads) == 0 {
		return 0
	}
	n := 0
	for _, l := range leads {
		if l >= 0 {
			n++
		}
	}
	return float64(n) / float64(len(leads))
}

// snapshots is the set of snapshot times a client has received, sorted.
type snapshots struct{ at []time.Duration }

func (s *snapshots) add(t time.Duration) {
	i, found := slices.BinarySearch(s.at, t)
	if !found {
		s.at = slices.Insert(s.at, i, t)
	}
	// Forget what is more than keepSnapshots older than the newest, in
	// batches, so that memory stays bounded on long runs.
	if n := len(s.at); n >= 2048 {
		cut, _ := slices.BinarySearch(s.at, s.at[n-1]-keepSnapshots)
		if cut >= n/2 {
			s.at = append(s.at[:0], s.at[cut:]...)
		}
	}
}

// fed reports whether a snapshot at or before t and one at or after t have
// been received: interpolation at t is possible.
func (s *snapshots) fed(t time.Duration) bool {
	i, found := slices.BinarySearch(s.at, t)
	return found || (i > 0 && i < len(s.at))
}

func (s *snapshots) newest() (time.Duration, bool) {
	if len(s.at) == 0 {
		return 0, false
	}
	return s.at[len(s.at)-1], true
}

// tickSet records which ticks' first copy has arrived.
type tickSet []uint64

func (b *tickSet) add(k int64) (first bool) {
	if k < 0 {
		return false
	}
	w := int(k / 64)
	for len(*b) <= w {
		*b = append(*b, 0)
	}
	bit := uint64(1) << (k % 64)
	if (*b)[w]&bit != 0 {
		return false
	}
	(*b)[w] |= bit
	return true
}

// jitModel is one buffer model's state in a run.
type jitModel struct {
	name    string
	policy  BufferPolicy
	up      *netsim.Link
	next    int64 // next tick to send an input for; −1 before the first
	arrived tickSet
	age     Feedback
	window  provider.ArrivalWindow
	sent    int
	leads   []float64 // ms, delivered inputs in the window
	delays  []float64 // ms, frames after the warm-up
	starved int
	fbs     []Feedback // the feedback each snapshot carried, by index mod fbRing
}

// jit measures the buffer models over a netclock client in one run.
type jit struct {
	o        Options
	s        *sim
	c        *ncClient
	tick     time.Duration
	every    int
	models   []*jitModel
	down     *netsim.Link // snapshots
	oracleUp *netsim.Link // probes sent at each tick start
	probes   tickSet
	frameUp  *netsim.Link // probes sent at each client frame
	sends    []FrameSend  // each client frame's probe
	needLead []float64
	needInt  []float64
	recv     snapshots
	pending  []Msg // snapshots arrived since the last client frame
	tl       [][2]time.Duration
	snaps    uint64
	frames   int
	lastNow  time.Duration
}

// event kinds of the buffer measurements, after the clock's.
const (
	evInput = evClientPing + 1 + iota
	evSnapshot
	evProbe
	evFrameProbe
)

func newJIT(o Options, s *sim, c *ncClient) (*jit, error) {
	b := *o.Buffers
	if b.SnapshotEvery == 0 {
		b.SnapshotEvery = 1
	}
	if b.SnapshotEvery < 0 {
		return nil, errors.New("buffers: negative snapshot interval")
	}
	if b.Models == nil {
		b.Models = BufferModels()
	}
	j := &jit{o: o, s: s, c: c, tick: ServerFrame, every: b.SnapshotEvery}
	c.collect = true
	var err error
	if j.oracleUp, j.down, err = o.Profile.NewLinks(o.Seed); err != nil {
		return nil, err
	}
	if j.frameUp, _, err = o.Profile.NewLinks(o.Seed); err != nil {
		return nil, err
	}
	for _, m := range b.Models {
		if m.Name == "" || m.New == nil {
			return nil, fmt.Errorf("buffer model %q: needs a name and New", m.Name)
		}
		up, _, err := o.Profile.NewLinks(o.Seed)
		if err != nil {
			return nil, err
		}
		j.models = append(j.models, &jitModel{name: m.Name, policy: m.New(), up: up, next: -1, fbs: make([]Feedback, fbRing)})
	}
	return j, nil
}

// inWindow reports whether tick k's inputs are measured.
func (j *jit) inWindow(k int64) bool {
	t := time.Duration(k) * j.tick
	return t >= j.o.Warmup && t < j.o.Duration-jitTail
}

func (j *jit) view(now time.Duration) View {
	v := View{Now: now, Dt: now - j.lastNow, Estimate: j.c.prov.Estimate(), SRTT: j.c.srtt,
		Tick: j.tick, SnapshotInterval: time.Duration(j.every) * j.tick}
	v.Shared = v.Estimate.ServerTime(now)
	v.Samples = j.c.samples
	if j.c.sys != nil {
		v.Predicted, v.Server = j.c.sys.PredictedTime().Duration(), j.c.sys.ServerTime().Duration()
	}
	return v
}

// serverFrame runs at the start of tick k (server clock k·tick): the probe
// for the oracle, and the snapshot if one is due.
func (j *jit) serverFrame(k int64) {
	s := j.s
	for _, at := range j.oracleUp.SendAppend(s.buf[:0], s.now) {
		s.push(at, evProbe, Msg{Tick: k, T1: s.server.Read(s.now)})
	}
	if k%int64(j.every) != 0 {
		return
	}
	for _, m := range j.models {
		fb := m.age
		// The arrival summary rides a pong in the transport, 10 a second:
		// here every PingInterval's worth of snapshots.
		if int64(j.snaps)%int64(max(1, PingInterval/(time.Duration(j.every)*j.tick))) == 0 {
			fb.Arrivals = m.window.Feedback()
		}
		m.fbs[j.snaps%fbRing] = fb
	}
	for _, at := range j.down.SendAppend(s.buf[:0], s.now) {
		s.push(at, evSnapshot, Msg{Tick: k, Seq: j.snaps})
	}
	j.snaps++
}

// deliver handles a measurement event at server clock sNow and client
// clock cNow.
func (j *jit) deliver(ev event, sNow, cNow time.Duration) {
	switch ev.kind {
	case evProbe:
		if j.probes.add(ev.msg.Tick) && j.inWindow(ev.msg.Tick) {
			j.needLead = append(j.needLead, ms(sNow-ev.msg.T1))
		}
	case evFrameProbe:
		if f := &j.sends[ev.msg.Seq]; f.Lost {
			f.Arrived, f.Lost = sNow, false // the first copy
		}
	case evInput:
		m := j.models[ev.msg.Seq]
		if !m.arrived.add(ev.msg.Tick) {
			return
		}
		lead := time.Duration(ev.msg.Tick)*j.tick - sNow
		m.window.Add(lead)
		if m.age.Valid {
			m.age.AgeEWMA += (lead - m.age.AgeEWMA) / 8
		} else {
			m.age = Feedback{AgeEWMA: lead, Valid: true}
		}
		if j.inWindow(ev.msg.Tick) {
			m.leads = append(m.leads, ms(lead))
		}
	case evSnapshot:
		// A game reads the network once a frame: the snapshot is the
		// client's at its next frame.
		j.pending = append(j.pending, ev.msg)
	}
}

// clientFrame runs after each client frame at true time t: every model
// sends the inputs of the predicted ticks it entered and interpolates.
func (j *jit) clientFrame(t, cNow time.Duration) {
	s := j.s
	v := j.view(cNow)
	j.lastNow = cNow
	// The policies run every frame (their timelines advance with the
	// client's), the game only once netclock's tick system has started.
	started := j.c.sys != nil
	// Each frame: the timelines advance, then the snapshots that arrived
	// since the last frame are received (a policy adjusts to them from
	// the next frame on), then the frame interpolates and sends.
	j.tl = j.tl[:0]
	for _, m := range j.models {
		pred, server := m.policy.Timelines(v)
		j.tl = append(j.tl, [2]time.Duration{pred, server})
	}
	for _, msg := range j.pending {
		at := time.Duration(msg.Tick) * j.tick
		j.recv.add(at)
		for _, m := range j.models {
			m.policy.Snapshot(v, at, m.fbs[msg.Seq%fbRing])
		}
	}
	j.pending = j.pending[:0]
	j.c.samples = j.c.samples[:0]
	truth := s.server.Read(t)
	// The frame oracle's probe: when an input sent at this frame reaches
	// the server. Server time is kept monotone for its search, should the
	// server's clock step back.
	at := truth
	if n := len(j.sends); n > 0 {
		at = max(at, j.sends[n-1].At)
	}
	for _, arr := range j.frameUp.SendAppend(s.buf[:0], s.now) {
		s.push(arr, evFrameProbe, Msg{Seq: uint64(len(j.sends))})
	}
	j.sends = append(j.sends, FrameSend{At: at, Lost: true})
	newest, any := j.recv.newest()
	measured := started && any && t >= j.o.Warmup && t < j.o.Duration-jitTail
	if measured {
		j.frames++
		j.needInt = append(j.needInt, ms(truth-newest))
	}
	for i, m := range j.models {
		pred, server := j.tl[i][0], j.tl[i][1]
		if !started {
			continue
		}
		last := int64(pred / j.tick) // the predicted tick now
		// A jump of more than maxCatchUp ticks (a reset, a resume) skips
		// the ticks in between instead of flooding the server.
		if m.next < 0 || last-m.next > maxCatchUp {
			m.next = last
		}
		for ; m.next <= last; m.next++ {
			if j.inWindow(m.next) {
				m.sent++
			}
			for _, at := range m.up.SendAppend(s.buf[:0], s.now) {
				s.push(at, evInput, Msg{Seq: uint64(i), Tick: m.next})
			}
		}
		if measured {
			m.delays = append(m.delays, ms(truth-server))
			if !j.recv.fed(server) {
				m.starved++
			}
		}
	}
}

func (j *jit) results(r *Result) {
	for _, m := range j.models {
		br := BufferResult{Model: m.name, InputsOnTime: OnTime(m.leads), InputLeadMS: meanP99(m.leads),
			InterpDelayMS: meanP99(m.delays)}
		if m.sent > 0 {
			br.InputsLost = max(0, 1-float64(len(m.leads))/float64(m.sent))
		}
		if j.frames > 0 {
			br.StarvedFrames = float64(m.starved) / float64(j.frames)
		}
		r.Buffers = append(r.Buffers, br)
	}
	mean := meanP99(j.needLead).Mean
	tickSend := OracleLead(j.needLead, oracleOnTime)
	tickMargin, interp := tickSend-mean, OracleInterpDelay(j.needInt, oracleStarved)
	r.OracleTickSendLeadMS, r.OracleTickLeadMS, r.OracleInterpDelayMS = &tickSend, &tickMargin, &interp
	var ticks []time.Duration // the measured ticks' starts
	for k := int64((j.o.Warmup + j.tick - 1) / j.tick); j.inWindow(k); k++ {
		ticks = append(ticks, time.Duration(k)*j.tick)
	}
	// No lead up to MaxOracleLead reaching 99%: none, rather than a
	// number that looks measured.
	if l, m, ok := OracleFrameLead(j.sends, ticks, oracleOnTime); ok {
		send, margin := ms(l), ms(m)
		r.OracleSendLeadMS, r.OracleLeadMS = &send, &margin
	}
}

// meanP99 of v, which it reorders; the p99 is of the values (a lead's p99
// is its 99th percentile, high values being early).
func meanP99(v []float64) MeanP99 {
	if len(v) == 0 {
		return MeanP99{}
	}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return MeanP99{Mean: sum / float64(len(v)), P99: selectQuantile(v, 0.99)}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
