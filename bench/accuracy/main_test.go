package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netclock/netclock/bench/harness"
	"github.com/netclock/netclock/netsim"
)

func TestJSONOutput(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-profile", "fiber", "-duration", "30s", "-seed", "3", "-json"}, &out); err != nil {
		t.Fatal(err)
	}
	var rep harness.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if rep.Profile != "fiber" || rep.Seed != 3 || rep.DurationS != 30 || len(rep.Results) != 13 || rep.Results[0].System != "netclock" ||
		rep.Results[1].Kind != harness.KindSeed || rep.Results[12].Kind != harness.KindReference {
		t.Errorf("report %+v", rep)
	}
}

func TestTableAndProfileFile(t *testing.T) {
	p, _ := netsim.ProfileByName("lan")
	p.Name = "my-lan"
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "my-lan.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"-profile", file, "-duration", "20s"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"profile my-lan", "netclock", "ngo", "p99 ms", "kind", "reference", "ref-chrony"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestProfileDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"lan", "fiber"} {
		p, _ := netsim.ProfileByName(name)
		p.Name = "my-" + name
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p.Name+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a profile"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"-profile", dir, "-seeds", "2", "-duration", "20s", "-systems", "netclock,simpson"}, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"every profile in " + dir, "run seeds 1..2", "my-fiber ", "my-lan "} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "my-fiber ") > strings.Index(got, "my-lan ") {
		t.Errorf("rows not in file name order:\n%s", got)
	}
	if err := run([]string{"-profile", t.TempDir()}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no .json profiles") {
		t.Errorf("empty directory: %v, want an error naming it", err)
	}
}

func TestPlots(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-profile", "fiber", "-duration", "20s", "-plot", filepath.Join(dir, "one.png")},
	} {
		var out bytes.Buffer
		if err := run(args, &out); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "one.png")); err != nil || st.Size() < 1000 {
		t.Errorf("no chart written: %v", err)
	}
	reps := []harness.Report{}
	for _, name := range []string{"lan", "fiber"} {
		p, _ := netsim.ProfileByName(name)
		rep, err := harness.Run(harness.Options{Profile: p, Duration: 20e9})
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	if err := plotP99(filepath.Join(dir, "bars.png"), reps, 10e9); err != nil {
		t.Fatal(err)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-profile", "no-such-profile"}, "unknown profile"},
		{[]string{"-profile", "missing.json"}, "no such file"},
		{[]string{"-duration", "1s", "-warmup", "2s"}, "-warmup 2s must be in [0, -duration 1s)"},
		{[]string{"-bogus"}, "not defined"},
		{[]string{"-duration", "1000000h"}, "longer than the maximum 24h0m0s"},
		{[]string{"-duration", "0"}, "-duration must be positive"},
		{[]string{"-duration", "-5s"}, "-duration must be positive"},
		{[]string{"-seed", "0"}, "-seed must be at least 1"},
		{[]string{"-ping", "0s"}, "-ping must be positive"},
		{[]string{"-suite", "-1"}, "-suite must be a number of scenarios"},
		{[]string{"-suite", "2", "-seeds", "0"}, "-seeds must be in [1, 1000]"},
		{[]string{"-systems", "netclock,chronyd"}, `unknown system "chronyd"`},
		{[]string{"-pings", "simpson"}, "want name=period"},
		{[]string{"-systems", "refs", "-pings", "simpson=1s"}, `system "simpson" is not running`},
		{[]string{"-profile", "random:0"}, "scenario S >= 1"},
		{[]string{"-profile", "fiber", "extra"}, "unexpected arguments"},
	} {
		err := run(tc.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
	// A profile file with a 1ns frame interval, duplicate keys or a wrong
	// type is rejected with a message in JSON terms.
	dir := t.TempDir()
	for name, body := range map[string]string{
		"frames.json": `{"name": "x", "frames": {"interval": "1ns"}}`,
		"dup.json":    `{"name": "x", "up": {"base": "1ms", "base": "2ms"}}`,
		"type.json":   `{"name": "x", "client": {"wander": {"seed": "three"}}}`,
	} {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		err := run([]string{"-profile", file, "-duration", "1s", "-warmup", "0s"}, &bytes.Buffer{})
		if err == nil {
			t.Errorf("%s accepted", name)
			continue
		}
		for _, leak := range []string{"Go ", "netsim.", "JSON.", "struct", "uint64"} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%s: error %q names Go internals", name, err)
			}
		}
	}
}

func TestSystemsAndPings(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-profile", "lan", "-duration", "20s", "-json", "-systems", "refs", "-ping", "50ms", "-pings", "ref-ntp=1s"}, &out); err != nil {
		t.Fatal(err)
	}
	var rep harness.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 6 || rep.Results[0].Kind != harness.KindNetclock {
		t.Fatalf("results %+v", rep.Results)
	}
	for _, r := range rep.Results {
		want := 0.05
		if r.System == "ref-ntp" {
			want = 1
		}
		if r.Kind != harness.KindNetclock && r.Kind != harness.KindReference || r.PingS != want {
			t.Errorf("%s: kind %s, ping %v s, want %v", r.System, r.Kind, r.PingS, want)
		}
	}
	out.Reset()
	if err := run([]string{"-profile", "random:7", "-seed", "2", "-duration", "20s", "-systems", "netclock,simpson"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"profile random-7, seed 2", "scenario: rtt", "simpson"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSuite(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-suite", "3", "-seeds", "2", "-duration", "30s", "-worst", "2"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"suite: 3 scenarios (random:1..random:3), run seeds 1..2", "p99 / best seed's p99",
		"p99 / best reference's p99", "bound coverage, all scenarios: median", "worst scenarios", "-profile random:", "lowest bound coverage"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("suite output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run([]string{"-suite", "2", "-seeds", "1", "-duration", "30s", "-json", "-first", "5"}, &out); err != nil {
		t.Fatal(err)
	}
	var rep harness.SuiteReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if rep.Scenarios != 2 || rep.First != 5 || len(rep.Results) != 2 || rep.Results[1].Scenario != 6 || rep.VsRef == nil {
		t.Errorf("suite JSON %+v", rep)
	}
}
