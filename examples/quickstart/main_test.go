package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"testing"
	"time"
)

// TestQuickstartJSON runs the demo for 4 s and checks its summary. The run
// is in wall time on loopback behind emulated links, so accuracy is not
// asserted beyond "finite": only that every client synced and was
// measured.
func TestQuickstartJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 4 s of wall time")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, []string{"-duration", "4s", "-json"}, &out, io.Discard); err != nil {
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
		t.Logf("%s: synced after %s, %d samples, |true error| p50 %.3f p99 %.3f max %.3f ms (harness p50 %.3f p99 %.3f)",
			c.Profile, secs(c.SyncS), c.Samples, c.TrueErrorMS.P50, c.TrueErrorMS.P99, c.TrueErrorMS.Max,
			c.Harness.TrueErrorMS.P50, c.Harness.TrueErrorMS.P99)
		if c.Profile != want {
			t.Errorf("client %d is %q, want %q", i, c.Profile, want)
		}
		if !c.Synced || c.SyncS == nil {
			t.Errorf("%s: not synced", c.Profile)
		}
		if c.Samples == 0 {
			t.Errorf("%s: no samples after the warm-up", c.Profile)
		}
		for _, v := range []float64{c.TrueErrorMS.P50, c.TrueErrorMS.P99, c.TrueErrorMS.Max, c.ErrorBoundMS} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Errorf("%s: error statistic %v", c.Profile, v)
			}
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
