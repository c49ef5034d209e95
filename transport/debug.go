package transport

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/netclock/netclock/internal/debugpage"
	"github.com/netclock/netclock/internal/wire"
)

// sampleEvery is the spacing of the history samples: with
// debugpage.HistoryLen samples, the page charts the last five minutes.
const sampleEvery = time.Second

// DebugHandler returns the server's live view: a self-updating page of each
// client's sync figures (from its reports, or quic-go's RTT) and events over
// five minutes, or JSON with ?format=json. From the first call it keeps
// 19,200 bytes of history per client. It shows players' addresses: keep it
// from them.
func (s *Server) DebugHandler() http.Handler {
	s.recording.Store(true)
	return debugpage.Handler(s.debugPage)
}

// notePing keeps a client's report and, once a second while recording, a
// history sample. It runs on the client's ping goroutine, after the pong
// left.
func (s *Server) notePing(sc *serverClient, p wire.Ping, t2 time.Duration) {
	sc.countMissed(p.Seq)
	due := s.recording.Load() && t2 >= sc.nextSample
	if p.Report == nil && !due {
		return
	}
	var quicRTT time.Duration
	if due {
		sc.nextSample = t2 + sampleEvery
		if sc.conn != nil { // nil only in tests
			quicRTT = sc.conn.ConnectionStats().SmoothedRTT
		}
	}
	sc.dmu.Lock()
	defer sc.dmu.Unlock()
	if p.Report != nil {
		r := syncReportOf(*p.Report, t2)
		reportEvents(&sc.events, sc.report, sc.reported, r, t2.Seconds())
		sc.report, sc.reported = r, true
	}
	if !due {
		return
	}
	if sc.history == nil {
		sc.history = new(debugpage.History)
	}
	var smp debugpage.Sample
	// A report older than three samples is stale: the client stopped
	// reporting or its pings are lost.
	if sc.reported && t2-sc.report.At < 3*sampleEvery {
		smp = sc.report.sample(t2.Milliseconds())
	} else {
		smp = debugpage.Sample{T: t2.Milliseconds(), RTT: debugpage.Micros(quicRTT), State: debugpage.NoReport}
	}
	sc.history.Add(smp)
}

// countMissed counts the gaps in the sequence numbers of a client's pings.
// Sequence numbers run on across the client's connections, so the first
// ping of a connection starts the count.
func (sc *serverClient) countMissed(seq uint32) {
	if !sc.seqSeen {
		sc.lastSeq, sc.seqSeen = seq, true
		return
	}
	switch d := int32(seq - sc.lastSeq); {
	case d > 1:
		sc.missed.Add(int64(d - 1))
		sc.lastSeq = seq
	case d == 1:
		sc.lastSeq = seq
	case d < 0 && sc.missed.Load() > 0: // a late one: not missed after all
		sc.missed.Add(-1)
	}
}

// debugPage is the server's JSON document.
func (s *Server) debugPage() debugpage.Page {
	s.mu.Lock()
	scs := make([]*serverClient, 0, len(s.byID))
	for _, sc := range s.byID {
		scs = append(scs, sc)
	}
	s.mu.Unlock()
	slices.SortFunc(scs, func(a, b *serverClient) int { return cmp.Compare(a.id, b.id) })
	now := s.SharedTime()
	st := s.Stats()
	p := debugpage.Page{Role: "server", Now: now.Seconds(), TickRate: s.cfg.TickRate,
		Epoch: fmt.Sprintf("%016x", s.epoch), Clients: make([]debugpage.Client, 0, len(scs)),
		Summary: []debugpage.Field{
			{Name: "clients", Value: fmt.Sprint(st.Clients)},
			{Name: "pings", Value: fmt.Sprint(st.Pings)},
			{Name: "refused", Value: fmt.Sprint(st.Refused + st.AdmissionRefused)},
			{Name: "malformed", Value: fmt.Sprint(st.Malformed)},
			{Name: "messages in/out", Value: fmt.Sprintf("%d/%d", st.MessagesReceived, st.MessagesSent)},
		}}
	var buf []debugpage.Sample
	for i, sc := range scs {
		info := sc.info()
		c := debugpage.Client{ID: uint64(sc.id), Remote: info.Remote.String(), Mode: sc.mode.String(),
			Connected: time.Since(sc.since).Seconds(), Pings: info.Pings, Missed: info.PingsMissed,
			Quality: QualityUnknown.String(),
			State:   "–"}
		sc.dmu.Lock()
		if sc.reported {
			r := sc.report
			c.Reporting, c.Synchronized, c.Quality, c.State = true, r.Synchronized, r.Quality.String(), r.State.String()
			c.Last = r.sample(r.At.Milliseconds()).Point()
		}
		buf = buf[:0]
		if sc.history != nil && i < debugpage.MaxHistoryClients {
			buf = sc.history.AppendTo(buf)
		}
		c.Events = sc.events.List()
		sc.dmu.Unlock()
		if !c.Reporting {
			c.Last = debugpage.Sample{T: now.Milliseconds(), RTT: debugpage.Micros(info.RTT)}.Point()
		}
		if i < debugpage.MaxHistoryClients {
			c.History = debugpage.SeriesOf(buf)
		}
		p.Clients = append(p.Clients, c)
	}
	return p
}
