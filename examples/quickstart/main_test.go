package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// TestQuickstartJSON runs the demo for 4 s with -compare and checks its
// summary. The run is in wall time on loopback behind emulated links, so
// accuracy is not asserted beyond "finite": only that every client synced
// and was measured, and the harness ran.
func TestQuickstartJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 4 s of wall time")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, []string{"-duration", "4s", "-json", "-compare"}, &out, io.Discard); err != nil {
		t.Fatalf("run: %v\n%s", err, out.Bytes())
	}
	var s summary
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("summary is not JSON: %v", err)
	}
	if dec.More() {
		t.Error("more than one JSON value on stdout")
	}
	if len(s.Clients) != 3 {
		t.Fatalf("%d clients, want 3", len(s.Clients))
	}
	for i, want := range []string{"fiber", "broadband", "ue-bad"} {
		c := s.Clients[i]
		if c.Harness == nil {
			t.Fatalf("%s: no harness result with -compare", c.Profile)
		}
		t.Logf("%s: synced after %s, %d samples, same tick %.1f%%, in bound %.1f%%, |true error| p50 %.3f p99 %.3f max %.3f ms (harness p50 %.3f p99 %.3f)",
			c.Profile, secs(c.SyncS), c.Samples, c.SameTickPct, c.InBoundPct, c.TrueErrorMS.P50, c.TrueErrorMS.P99,
			c.TrueErrorMS.Max, c.Harness.TrueErrorMS.P50, c.Harness.TrueErrorMS.P99)
		if c.Profile != want {
			t.Errorf("client %d is %q, want %q", i, c.Profile, want)
		}
		if !c.Synced || c.SyncS == nil {
			t.Errorf("%s: not synced", c.Profile)
		}
		if c.Samples == 0 {
			t.Errorf("%s: no samples after the warm-up", c.Profile)
		}
		for _, v := range []float64{c.TrueErrorMS.P50, c.TrueErrorMS.P99, c.TrueErrorMS.Max, c.ErrorBoundMS, c.BoundMS} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Errorf("%s: error statistic %v", c.Profile, v)
			}
		}
		for _, v := range []float64{c.SameTickPct, c.InBoundPct} {
			if !(v >= 0 && v <= 100) {
				t.Errorf("%s: percentage %v", c.Profile, v)
			}
		}
		if st := c.Streams; st == nil {
			t.Errorf("%s: no game streams", c.Profile)
		} else if !(st.InputsOnTimePct >= 0 && st.InputsOnTimePct <= 100 && st.StarvedPct >= 0 && st.StarvedPct <= 100) ||
			st.ServerBufferMS < 0 || st.ClientBufferMS < 0 {
			t.Errorf("%s: streams %+v", c.Profile, *st)
		}
		if c.PingsSent == 0 || c.PongsReceived == 0 {
			t.Errorf("%s: %d pings sent, %d pongs received", c.Profile, c.PingsSent, c.PongsReceived)
		}
		if c.Harness.TrueErrorMS.Max == 0 {
			t.Errorf("%s: no harness result", c.Profile)
		}
	}
	if s.Server.Accepted != 3 || s.Server.Tick <= 0 {
		t.Errorf("server: %+v", s.Server)
	}
}

// TestFlags checks the flag errors that need no network.
func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-profiles", "no-such-profile"},
		{"-profiles", ","},
		{"-duration", "0s"},
		{"extra"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) succeeded", args)
		}
	}
	o, err := parseFlags([]string{"-duration", "4s", "-profiles", "lan, wifi"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.profiles) != 2 || o.profiles[1].Name != "wifi" || o.warmup != 2*time.Second {
		t.Errorf("options %+v", o)
	}
}

// TestPrintedSummary prints a summary with and without the comparison: the
// tables have the same columns in every row, and the text reads as a
// result (no "expects").
func TestPrintedSummary(t *testing.T) {
	h := &harnessSummary{TrueErrorMS: percentiles{P50: 0.05, P99: 0.1, Max: 0.2}, Seeds: 8,
		P50Range: [2]float64{0.02, 0.1}, P99Range: [2]float64{0.05, 0.3}, ConvergeS: ptr(0.2)}
	s := summary{DurationS: 20, WarmupS: 5, Seed: 1, SampleHz: 60, Clients: []clientSummary{
		{Profile: "fiber", Synced: true, SyncS: ptr(0.26), Samples: 900, SameTickPct: 100, InBoundPct: 100,
			BoundMS: 1.5, TrueErrorMS: percentiles{P50: 0.05, P99: 0.2, Max: 0.25}, PingsSent: 200, Harness: h,
			RatioP50: ptr(1.0), RatioP99: ptr(2.0), Streams: &streamSummary{InputsOnTimePct: 99.5, InputsLate: 4,
				TicksWithoutInput: 6, Frames: 900, StarvedPct: 0.25, ServerBufferMS: 9.5, ClientBufferMS: 17.3}},
		{Profile: "a-longer-name", Synced: false, Harness: h},
	}}
	var out bytes.Buffer
	printSummary(&out, s)
	printComparison(&out, s)
	text := out.String()
	t.Log("\n" + text)
	if strings.Contains(text, "expect") || strings.Contains(text, "issue") {
		t.Errorf("the summary reads as a test:\n%s", text)
	}
	// The streams: a line for the client that has them, none for the other.
	want := "  fiber      inputs on time  99.50% (4 late, 6 ticks without input), starved frames  0.25% of 900; buffers: server 9.5ms, client 17.3ms\n"
	if !strings.Contains(text, want) || strings.Count(text, "inputs on time") != 1 {
		t.Errorf("the streams are not one line %q", want)
	}
	for _, table := range [][]string{lines(text, "client", "synced after"), lines(text, "client", "quickstart p50")} {
		if len(table) != 3 {
			t.Fatalf("table %q: %d lines, want a header and 2 rows", table, len(table))
		}
		// Right-aligned: every row ends at the header's width.
		for _, l := range table[1:] {
			if len(l) != len(table[0]) {
				t.Errorf("row %q is %d wide, the header %d", l, len(l), len(table[0]))
			}
		}
	}
}

// lines returns the line of text starting with prefix and holding header,
// and the lines after it up to a blank or unindented one.
func lines(text, prefix, header string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		switch {
		case out == nil && strings.HasPrefix(strings.TrimSpace(l), prefix) && strings.Contains(l, header):
			out = append(out, l)
		case out != nil && strings.HasPrefix(l, "  "):
			out = append(out, l)
		case out != nil:
			return out
		}
	}
	return out
}

// The summary a run ends with, here from made-up figures: one client
// synced, one that never did.
func Example() {
	s := summary{DurationS: 20, WarmupS: 5, SampleHz: 60, Clients: []clientSummary{
		{Profile: "fiber", Synced: true, SyncS: ptr(0.25), Samples: 901, SameTickPct: 99.3, InBoundPct: 100,
			BoundMS: 0.717, TrueErrorMS: percentiles{P50: 0.082, P99: 0.228, Max: 0.232}, PingsSent: 206},
		{Profile: "ue-bad"},
	}}
	printSummary(os.Stdout, s)
	// Output:
	// Summary: 20.0s; after the first 5s, sampled at 60 Hz
	//   client  synced after  same tick  |true error| ms p50    p99    max  bound ms  in bound  resets  pings lost
	//   fiber          0.25s      99.3%                0.082  0.228  0.232     0.717    100.0%       0    0 of 206
	//   ue-bad         never          -                0.000  0.000  0.000     0.000         -       0      0 of 0
	//
	// same tick: how often the client's current tick (of its SharedTime) was the server's; it can
	//   differ only within the true error of a tick boundary. in bound: how often |true error| was
	//   within the error bound the client published. predicted / server time (live table): where
	//   the client's timelines run against the server's tick: its inputs are stamped for the
	//   predicted tick, and the remote state it shows is from the server-time tick.
}
