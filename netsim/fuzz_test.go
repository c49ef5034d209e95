package netsim

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func FuzzParseProfile(f *testing.F) {
	for _, p := range Profiles() {
		data, _ := json.Marshal(p)
		f.Add(data)
	}
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `{"name":"x"}`, `{"name":"x","up":{"base":1e18}}`,
		`{"name":"x","up":{"jitter":{"kind":"pareto","scale":"1h","shape":1.0000001}}}`,
		`{"name":"x","client":{"jumps":[{"at":"1s","by":"-1000h"}]}}`,
		`{"name":"x","changes":[{"at":"1s","direction":"both","outage":"1h"},{"at":"2s","direction":"up","base":"1h"}]}`,
		`{"name":"x","up":{"queue":{"mean":"1h","stdDev":"1h","tau":"0s"}}}`,
		`{"name":"x","up":{"steps":{"interval":"1ns","max":"1h"}}}`,
		`{"name":"x","frames":{"interval":"1ns"}}`,
		`{"name":"x","up":{"base":"1ms","base":"2ms"}}`,
		`{"name":"x","up":{"loss":1e400},"client":{"wander":{"ppmPerMinute":1,"seed":-1}}}`,
		`{"name":"x","up":{"jitter":{"kind":"empirical","bins":[[1,2],[1.5,0.5],[3,0]]},"bloat":{"max":"1s","rise":"1s","drain":"1s","busy":"1s","idle":"1s"}}}`,
		`{"name":"x","down":{"periodic":{"period":"102.4ms"},"flap":{"extra":"5ms","minHold":"100ms","maxHold":"1s"}},"client":{"suspends":[{"at":"1s","for":"2s"}]}}`,
		`{"name":"x","changes":[{"at":"1s","direction":"up","queue":{"mean":"1ms","stdDev":"1ms","tau":"1s"},"ramp":"5s","reorder":0.5,"reorderDelay":"1ms"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(data)
		if err != nil {
			// Errors speak JSON, never Go.
			for _, leak := range []string{"Go ", "netsim.", "JSON.", "json:", "struct", "int64", "float64", "uint64"} {
				if strings.Contains(err.Error(), leak) {
					t.Fatalf("error names Go internals (%q): %v", leak, err)
				}
			}
			return
		}
		// A profile that parses validates, builds and runs.
		if err := p.Validate(); err != nil {
			t.Fatalf("parsed but invalid: %v", err)
		}
		up, down, err := p.NewLinks(1)
		if err != nil {
			t.Fatalf("NewLinks: %v", err)
		}
		client, _, err := p.NewClocks()
		if err != nil {
			t.Fatalf("NewClocks: %v", err)
		}
		frames, err := p.NewFrames(1)
		if err != nil {
			t.Fatalf("NewFrames: %v", err)
		}
		var buf []time.Duration
		for i := range 50 {
			now := time.Duration(i) * 397 * time.Millisecond
			for _, l := range []*Link{up, down} {
				buf = l.SendAppend(buf[:0], now)
				for _, a := range buf {
					if a < now {
						t.Fatalf("arrival %v before send %v", a, now)
					}
				}
			}
			x := client.Read(now)
			if u := client.TrueTime(x); client.Read(u) < x {
				t.Fatalf("TrueTime(%v) = %v reads %v", x, u, client.Read(u))
			}
			if d := frames.Next(); d <= 0 {
				t.Fatalf("frame %v", d)
			}
		}
		// It survives a round trip unchanged.
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := ParseProfile(out)
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, out)
		}
		// Compared through JSON: a histogram caches its table once used.
		if out2, _ := json.Marshal(q); !bytes.Equal(out, out2) || !reflect.DeepEqual(p.Up.Jitter.Kind, q.Up.Jitter.Kind) {
			t.Fatalf("round trip changed the profile:\n%s\n%s", out, out2)
		}
	})
}
