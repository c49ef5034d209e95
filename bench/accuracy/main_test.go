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
	if rep.Profile != "fiber" || rep.Seed != 3 || rep.DurationS != 30 || len(rep.Results) != 8 || rep.Results[0].System != "netclock" {
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
	for _, want := range []string{"profile my-lan", "netclock", "ngo", "p99 ms"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
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
	for _, args := range [][]string{
		{"-profile", "no-such-profile"},
		{"-profile", "missing.json"},
		{"-duration", "1s", "-warmup", "2s"},
		{"-bogus"},
	} {
		if err := run(args, &bytes.Buffer{}); err == nil {
			t.Errorf("run(%q) = nil, want an error", args)
		}
	}
}
