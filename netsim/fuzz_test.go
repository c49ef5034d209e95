package netsim

import (
	"encoding/json"
	"reflect"
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
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(data)
		if err != nil {
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
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed the profile:\n%s", out)
		}
	})
}
