package wire

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fullReport has every field set to a value the wire carries exactly.
var fullReport = Report{
	Synchronized: true, State: 2, Quality: 3, Loss: 17,
	ErrorBound: 1234 * time.Microsecond, Jitter: 5 * time.Millisecond,
	Uplink: 20 * time.Millisecond, Downlink: 21 * time.Millisecond,
	Lead: 53 * time.Millisecond, Interp: 38 * time.Millisecond,
	Offset: -987654321, DriftPPM: -12.345, PredictedScale: 1.000012, ServerScale: 0.99,
	Resets: 3,
}

// approx compares floats to the wire's resolution.
var approx = cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })

func TestReportRoundTrip(t *testing.T) {
	for _, r := range []Report{{PredictedScale: 1, ServerScale: 1}, fullReport} {
		p := Ping{Seq: 9, ClientSend: time.Second, Report: &r}
		b := AppendPing(nil, p)
		if len(b) != PingReportLen {
			t.Fatalf("len %d, want %d", len(b), PingReportLen)
		}
		got, err := ParsePing(b)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(p, got, approx); d != "" {
			t.Errorf("round trip (-want +got):\n%s", d)
		}
	}
}

func TestReportSaturates(t *testing.T) {
	in := Report{State: 200, Quality: 9, Loss: 5000,
		ErrorBound: -time.Second, Jitter: 100 * time.Hour, DriftPPM: 1e9, PredictedScale: math.NaN(),
		ServerScale: -10}
	got, err := ParseReport(AppendReport(nil, in))
	if err != nil {
		t.Fatal(err)
	}
	want := Report{State: MaxState, Quality: MaxQuality, Loss: MaxLoss,
		ErrorBound: 0, Jitter: math.MaxUint32 * time.Microsecond, DriftPPM: math.MaxInt32 / 1e3,
		PredictedScale: 1, ServerScale: 1 + math.MinInt32/1e9}
	if d := cmp.Diff(want, got, approx); d != "" {
		t.Errorf("saturated (-want +got):\n%s", d)
	}
}

func TestReportLayout(t *testing.T) {
	b := AppendReport(nil, Report{Synchronized: true, State: 1, Quality: 2, Loss: 0x0102,
		ErrorBound: 3 * time.Microsecond, Offset: 4, DriftPPM: 0.005, PredictedScale: 1 + 6e-9,
		ServerScale: 1 - 1e-9, Resets: 7})
	want := []byte{1, 1, 2, 1, 2,
		0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 4,
		0, 0, 0, 5, 0, 0, 0, 6, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 7}
	if d := cmp.Diff(want, b); d != "" {
		t.Errorf("encoding (-want +got):\n%s", d)
	}
}

func TestReportRejects(t *testing.T) {
	ping := AppendPing(nil, Ping{Seq: 1, ClientSend: 2, Report: &fullReport})
	with := func(i int, v byte) []byte {
		b := bytes.Clone(ping)
		b[i] = v
		return b
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"between lengths", ping[:PingLen+1], ErrMalformed},
		{"one short", ping[:PingReportLen-1], ErrMalformed},
		{"one long", append(bytes.Clone(ping), 0), ErrMalformed},
		{"reserved flag", with(PingLen, 2), ErrMalformed},
		{"state", with(PingLen+1, MaxState+1), ErrMalformed},
		{"quality", with(PingLen+2, MaxQuality+1), ErrMalformed},
		{"loss", with(PingLen+3, 0xff), ErrMalformed},
		{"version", with(1, 2), ErrVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParsePing(tc.in); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := ParsePing(ping[:PingLen]); err != nil {
		t.Errorf("a ping without its report: %v, want accepted", err)
	}
}

func FuzzParseReport(f *testing.F) {
	fuzzCanonical(f, ParseReport, AppendReport, AppendReport(nil, fullReport),
		AppendReport(nil, Report{PredictedScale: 1, ServerScale: 1}), nil)
}
