package debugpage

import (
	"encoding/json"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

func TestHandler(t *testing.T) {
	for _, tc := range []struct {
		name, method, query string
		page                Page
		code                int
		ctype, body         string // body: a substring
	}{
		{"page", "GET", "", Page{}, 200, "text/html; charset=utf-8", `id="charts"`},
		{"page ignores other queries", "GET", "?x=1", Page{}, 200, "text/html; charset=utf-8", "netclock live view"},
		{"no clients", "GET", "?format=json", Page{Role: "server"}, 200, "application/json",
			`"summary":[],"clients":[]`},
		{"nil events", "GET", "?format=json", Page{Clients: []Client{{ID: 3}}}, 200, "application/json",
			`"events":[]`},
		{"post", "POST", "?format=json", Page{}, 405, "text/plain; charset=utf-8", "method not allowed"},
		{"not a number", "GET", "?format=json", Page{Now: math.NaN()}, 500, "text/plain; charset=utf-8",
			"unsupported value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Handler(func() Page { return tc.page })
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, "/debug/"+tc.query, nil))
			got := struct {
				Code  int
				CType string
				Has   bool
			}{rec.Code, rec.Header().Get("Content-Type"), strings.Contains(rec.Body.String(), tc.body)}
			want := struct {
				Code  int
				CType string
				Has   bool
			}{tc.code, tc.ctype, true}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("response (-want +got):\n%s\nbody: %.300s", d, rec.Body.String())
			}
			if tc.code == 200 && tc.ctype == "application/json" && !json.Valid(rec.Body.Bytes()) {
				t.Errorf("invalid JSON: %s", rec.Body.String())
			}
		})
	}
}

func TestHistoryRing(t *testing.T) {
	if n := unsafe.Sizeof(Sample{}); n != 64 {
		t.Errorf("Sample is %d bytes, documented as 64", n)
	}
	if n := unsafe.Sizeof(History{}); n > 19_200+64 {
		t.Errorf("History is %d bytes, documented as 19,200", n)
	}
	for _, tc := range []struct {
		name  string
		added int
		want  []int64 // the times held, oldest first
	}{
		{"empty", 0, []int64{}},
		{"two", 2, []int64{0, 1}},
		{"full", HistoryLen, seq(0, HistoryLen)},
		{"wrapped", HistoryLen + 7, seq(7, HistoryLen+7)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h History
			for i := range tc.added {
				h.Add(Sample{T: int64(i)})
			}
			got := []int64{}
			for _, s := range h.AppendTo(nil) {
				got = append(got, s.T)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("held (-want +got):\n%s", d)
			}
			last, ok := h.Last()
			if ok != (tc.added > 0) || ok && last.T != int64(tc.added-1) {
				t.Errorf("Last = %v, %v", last.T, ok)
			}
		})
	}
}

func TestEventsRing(t *testing.T) {
	var r Events
	if got := r.List(); got == nil || len(got) != 0 {
		t.Fatalf("empty List = %#v, want empty and not nil", got)
	}
	for i := range EventsLen + 3 {
		r.Add(Event{T: float64(i)})
	}
	got := r.List()
	if len(got) != EventsLen || got[0].T != 3 || got[EventsLen-1].T != EventsLen+2 {
		t.Errorf("List = %v", got)
	}
}

func TestSeriesOf(t *testing.T) {
	s := SeriesOf([]Sample{{T: 1500, RTT: 2500, Offset: -3_000_000, Loss: 20, PredictedScale: 1.5, Resets: 2, State: 2}})
	want := &Series{T: []float64{1.5}, RTT: []float64{2.5}, Uplink: []float64{0}, Downlink: []float64{0},
		Jitter: []float64{0}, Offset: []float64{-3}, Bound: []float64{0}, Drift: []float64{0},
		PredictedScale: []float64{1.5}, ServerScale: []float64{0}, Lead: []float64{0}, Interp: []float64{0},
		Loss: []float64{0.02}, Resets: []int64{2}, State: []int{2}}
	if d := cmp.Diff(want, s); d != "" {
		t.Errorf("series (-want +got):\n%s", d)
	}
	if b, _ := json.Marshal(SeriesOf(nil)); !strings.Contains(string(b), `"t":[]`) {
		t.Errorf("empty series %s: want empty arrays, not null", b)
	}
}

func TestFiniteAndMicros(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want float32
	}{{1.25, 1.25}, {math.NaN(), 0}, {math.Inf(1), 0}, {1e300, 0}} {
		if got := Finite(tc.in); got != tc.want {
			t.Errorf("Finite(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if Micros(math.MaxInt64) != math.MaxInt32 || Micros(math.MinInt64) != math.MinInt32 || Micros(1500) != 1 {
		t.Errorf("Micros does not saturate or truncate")
	}
}

func seq(from, to int) []int64 {
	s := make([]int64, 0, to-from)
	for i := from; i < to; i++ {
		s = append(s, int64(i))
	}
	return s
}
