package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestInputsJSON(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-profile", "fiber", "-duration", "30s", "-systems", "netclock,ngo", "-inputs", "-json"}, &out); err != nil {
		t.Fatal(err)
	}
	// The keys the issue names, on netclock's result only.
	var rep struct {
		Results []map[string]json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	nc, ngo := rep.Results[0], rep.Results[1]
	for _, k := range []string{"oracle_lead_ms", "oracle_tick_lead_ms", "oracle_interp_delay_ms", "buffers"} {
		if _, ok := nc[k]; !ok {
			t.Errorf("netclock's result lacks %q", k)
		}
		if _, ok := ngo[k]; ok {
			t.Errorf("ngo's result has %q: only netclock's clock carries the buffer models", k)
		}
	}
	var buffers []map[string]json.RawMessage
	if err := json.Unmarshal(nc["buffers"], &buffers); err != nil {
		t.Fatal(err)
	}
	for _, b := range buffers {
		for _, k := range []string{"model", "inputs_on_time", "input_lead_ms", "starved_frames", "interp_delay_ms"} {
			if _, ok := b[k]; !ok {
				t.Errorf("buffer result lacks %q: %v", k, b)
			}
		}
	}
	if len(buffers) != 5 {
		t.Errorf("%d buffer models, want 5", len(buffers))
	}
}

func TestInputsTable(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-profile", "lan", "-duration", "20s", "-systems", "netclock", "-inputs", "-snapshot-every", "2"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"netclock-adaptive", "netclock-fixed", "ngo", "n4e", "mirror", "oracle", "oracle-tick", "starved", "interp mean ms"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	for _, bad := range [][]string{{"-snapshot-every", "0"}, {"-snapshot-every", "601"}} {
		if err := run(append([]string{"-inputs"}, bad...), &out); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
