package transport

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/netclock/netclock/internal/debugpage"
	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/provider/clocksync"
)

// getPage fetches the JSON document of a debug handler over HTTP.
func getPage(t *testing.T, h http.Handler) debugpage.Page {
	t.Helper()
	hs := httptest.NewServer(h)
	defer hs.Close()
	resp, err := http.Get(hs.URL + "/?format=json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !json.Valid(b) {
		t.Fatalf("status %d, body %s", resp.StatusCode, b)
	}
	var p debugpage.Page
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// pageShape is what a page's JSON must say, whatever the timing.
type pageShape struct {
	Role      string
	TickRate  uint32
	IDs       []uint64
	Modes     []string
	Reporting []bool
	Histories []bool // a history with at least one sample
	FirstWhat []string
}

func shapeOf(p debugpage.Page) pageShape {
	s := pageShape{Role: p.Role, TickRate: p.TickRate, IDs: []uint64{}, Modes: []string{}, Reporting: []bool{},
		Histories: []bool{}, FirstWhat: []string{}}
	for _, c := range p.Clients {
		s.IDs = append(s.IDs, c.ID)
		s.Modes = append(s.Modes, c.Mode)
		s.Reporting = append(s.Reporting, c.Reporting)
		s.Histories = append(s.Histories, c.History != nil && len(c.History.T) > 0)
		first := ""
		if len(c.Events) > 0 {
			first, _, _ = strings.Cut(c.Events[0].What, ",")
		}
		s.FirstWhat = append(s.FirstWhat, first)
	}
	return s
}

func TestServerDebugJSON(t *testing.T) {
	for _, tc := range []struct {
		name    string
		clients []ClientConfig
		want    pageShape
	}{
		{"no clients", nil, pageShape{Role: "server", TickRate: 30, IDs: []uint64{}, Modes: []string{},
			Reporting: []bool{}, Histories: []bool{}, FirstWhat: []string{}}},
		{"two clients", []ClientConfig{{}, {DisableDatagrams: true}}, pageShape{Role: "server", TickRate: 30,
			IDs: []uint64{1, 2}, Modes: []string{"datagram", "stream"}, Reporting: []bool{true, true},
			Histories: []bool{true, true}, FirstWhat: []string{"connected", "connected"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, ServerConfig{TickRate: 30})
			h := srv.DebugHandler()
			for _, cfg := range tc.clients {
				c, err := dialTest(t, srv, cfg)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err = c.WaitSynced(ctx) // its burst's first ping carried a report
				cancel()
				if err != nil {
					t.Fatal(err)
				}
			}
			p := getPage(t, h)
			if d := cmp.Diff(tc.want, shapeOf(p)); d != "" {
				t.Errorf("page (-want +got):\n%s", d)
			}
			// A report's time is the server clock at its arrival, which may
			// be within the server's first millisecond: 0 is a time too.
			for _, c := range p.Clients {
				if c.Last.PredictedScale < 0.9 || c.Last.PredictedScale > 1.1 || c.Last.T < 0 {
					t.Errorf("client %d: last sample %+v: no report in it", c.ID, c.Last)
				}
			}
		})
	}
}

func TestClientDebugJSON(t *testing.T) {
	srv := startServer(t, ServerConfig{TickRate: 30})
	c, err := dialTest(t, srv, ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	p := getPage(t, c.DebugHandler())
	want := pageShape{Role: "client", TickRate: 30, IDs: []uint64{0}, Modes: []string{"datagram"},
		Reporting: []bool{true}, Histories: []bool{true}, FirstWhat: []string{}}
	got := shapeOf(p)
	got.FirstWhat = []string{} // events depend on timing
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("page (-want +got):\n%s", d)
	}
	if p.Epoch == "" || len(p.Summary) == 0 || p.Clients[0].Remote != srv.Addr().String() {
		t.Errorf("page header: epoch %q, summary %v, remote %q", p.Epoch, p.Summary, p.Clients[0].Remote)
	}
}

// TestServerKeepsReports feeds a server's client handle reports as its ping
// goroutine would, on an injected server clock, and checks what it keeps.
func TestServerKeepsReports(t *testing.T) {
	s := &Server{}
	s.recording.Store(true)
	sc := &serverClient{}
	ms := time.Millisecond
	rep := func(synced bool, q Quality, st clocksync.State, resets uint32) *wire.Report {
		return &wire.Report{Synchronized: synced, Quality: uint8(q), State: uint8(st), Resets: resets,
			ErrorBound: 300 * time.Microsecond, PredictedScale: 1, ServerScale: 1}
	}
	for i, r := range []*wire.Report{
		rep(false, QualityUnknown, clocksync.StateInit, 0),
		nil, // a ping without a report
		rep(true, QualityGood, clocksync.StateLocked, 0),
		rep(true, QualityFair, clocksync.StateHeld, 2),
	} {
		s.notePing(sc, wire.Ping{Seq: uint32(i), Report: r}, time.Duration(i)*time.Second+ms)
	}
	var got []string
	for _, e := range sc.events.List() {
		got = append(got, e.What)
	}
	want := []string{
		"first report: init, quality unknown, bound 300µs",
		"synchronized",
		"quality unknown → good (bound 300µs, jitter 0s, loss 0.0%)",
		"estimator init → locked",
		"quality good → fair (bound 300µs, jitter 0s, loss 0.0%)",
		"estimator locked → held",
		"2 reset(s) (2 in all)",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if sc.report.Quality != QualityFair || sc.report.At != 3*time.Second+ms || sc.report.Resets != 2 {
		t.Errorf("latest report %+v", sc.report)
	}
	if n := sc.history.Len(); n != 4 {
		t.Errorf("%d samples, want one a second: 4", n)
	}
	// The history stays bounded whatever the client sends.
	for i := range 2 * debugpage.HistoryLen {
		q := QualityGood - Quality(i%2) // an event every report
		s.notePing(sc, wire.Ping{Report: rep(true, q, clocksync.StateLocked, 2)},
			time.Duration(10+i)*time.Second)
	}
	if n, e := sc.history.Len(), len(sc.events.List()); n != debugpage.HistoryLen || e != debugpage.EventsLen {
		t.Errorf("history %d samples, %d events: want at most %d, %d", n, e, debugpage.HistoryLen, debugpage.EventsLen)
	}
}

// TestClientReportsReachServer checks a client's report arrives whole: the
// server's ClientInfo says what the client's Stats say.
func TestClientReportsReachServer(t *testing.T) {
	srv := startServer(t, ServerConfig{})
	var changes []QualityChange
	changed := make(chan struct{}, 16)
	c, err := dialTest(t, srv, ClientConfig{OnQualityChange: func(q QualityChange) {
		changes = append(changes, q) // never called concurrently
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	await(t, changed, 10*time.Second, "the first quality change")
	var info ClientInfo
	eventually(t, 10*time.Second, "a synchronized report", func() bool {
		infos := srv.Clients()
		if len(infos) != 1 || infos[0].Report == nil || !infos[0].Report.Synchronized {
			return false
		}
		info = infos[0]
		return true
	})
	r := info.Report
	if r.Quality == QualityUnknown || info.Quality != r.Quality || r.State == clocksync.StateInit ||
		r.ErrorBound <= 0 || r.PredictedScale < 0.9 || r.PredictedScale > 1.1 || r.Lead <= 0 || r.InterpolationDelay <= 0 {
		t.Errorf("report %+v", *r)
	}
	if st := c.Stats(); st.Quality == QualityUnknown {
		t.Errorf("client quality %v after a change to %v", st.Quality, changes)
	}
	c.Close()
	if changes[0].From != QualityUnknown || changes[0].To == QualityUnknown {
		t.Errorf("first change %+v: want from unknown to a grade", changes[0])
	}
}

// TestQualityPoorWhenLost: a client whose server went away grades its
// connection Poor, and says so in an event.
func TestQualityPoorWhenLost(t *testing.T) {
	srv := startServer(t, ServerConfig{})
	changes := make(chan QualityChange, 64)
	c, err := dialTest(t, srv, ClientConfig{OnQualityChange: func(q QualityChange) { changes <- q }})
	if err != nil {
		t.Fatal(err)
	}
	q := await(t, changes, 10*time.Second, "a first grade")
	if q.From != QualityUnknown || q.To == QualityUnknown {
		t.Fatalf("first change %+v", q)
	}
	srv.Close()
	// The grade drops to Poor before the client stops (a loaded machine
	// may have graded it Poor already: then no change is due).
	await(t, c.Done(), 15*time.Second, "the client to stop")
	for len(changes) > 0 {
		q = <-changes
	}
	if q.To != QualityPoor {
		t.Errorf("last change %+v, want to poor", q)
	}
	if st := c.Stats(); st.Quality != QualityPoor {
		t.Errorf("quality %v after the server closed, want poor", st.Quality)
	}
}

// TestDebugHandlersConcurrent serves both pages to concurrent requests
// while the client pings (the race detector checks the locking).
func TestDebugHandlersConcurrent(t *testing.T) {
	srv := startServer(t, ServerConfig{})
	c, err := dialTest(t, srv, ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, h := range []http.Handler{srv.DebugHandler(), c.DebugHandler(), srv.DebugHandler()} {
		wg.Go(func() {
			for range 20 {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/?format=json", nil))
				if rec.Code != 200 || !json.Valid(rec.Body.Bytes()) {
					t.Errorf("status %d, body %.200s", rec.Code, rec.Body.String())
				}
			}
		})
	}
	wg.Wait()
}

func TestCountMissed(t *testing.T) {
	for _, tc := range []struct {
		name string
		seqs []uint32
		want int64
	}{
		{"in order", []uint32{5, 6, 7}, 0},
		{"a gap", []uint32{5, 6, 9}, 2},
		{"a late one taken back", []uint32{5, 7, 6}, 0},
		{"a duplicate", []uint32{5, 6, 6}, 0},
		{"across the wrap", []uint32{1<<32 - 2, 1<<32 - 1, 1}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &serverClient{}
			for _, s := range tc.seqs {
				sc.countMissed(s)
			}
			if got := sc.missed.Load(); got != tc.want {
				t.Errorf("missed %d, want %d", got, tc.want)
			}
		})
	}
}
