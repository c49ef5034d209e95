package netsim

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func nanF() float64 { return math.NaN() }

var requiredProfiles = []string{
	"lan", "fiber", "broadband", "congested", "mobile-4g", "mobile-3g", "leo-satellite",
	"ue-average", "ue-bad", "ue-bad-both", "asymmetric-jitter", "fixed-asymmetry",
	"latency-step", "uplink-step", "outage-10s", "clock-jump", "drift-500ppm",
}

func TestNamedProfiles(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Profiles() {
		if seen[p.Name] {
			t.Errorf("duplicate profile %q", p.Name)
		}
		seen[p.Name] = true
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if p.Description == "" {
			t.Errorf("%s: no description", p.Name)
		}
		if p.Client.Offset == 0 || p.Client.DriftPPM == 0 {
			t.Errorf("%s: client clock %+v, want nonzero offset and drift", p.Name, p.Client)
		}
		if abs := math.Abs(p.Client.DriftPPM); p.Name != "drift-500ppm" && (abs < 20 || abs > 80) {
			t.Errorf("%s: client drift %v ppm, want 20-80", p.Name, p.Client.DriftPPM)
		}
		if !reflect.DeepEqual(p.Server, ClockSpec{}) {
			t.Errorf("%s: server clock %+v, want true time", p.Name, p.Server)
		}
		if _, _, err := p.NewLinks(1); err != nil {
			t.Errorf("%s: NewLinks: %v", p.Name, err)
		}
		if _, _, err := p.NewClocks(); err != nil {
			t.Errorf("%s: NewClocks: %v", p.Name, err)
		}
		if _, err := p.NewFrames(1); err != nil {
			t.Errorf("%s: NewFrames: %v", p.Name, err)
		}
		q, ok := ProfileByName(p.Name)
		if !ok || !reflect.DeepEqual(p, q) {
			t.Errorf("ProfileByName(%q) = %+v, %v", p.Name, q, ok)
		}
	}
	for _, name := range requiredProfiles {
		if !seen[name] {
			t.Errorf("profile %q missing", name)
		}
	}
	if _, ok := ProfileByName("nope"); ok {
		t.Error("ProfileByName(nope) found something")
	}
	if got := ProfileNames(); len(got) != len(seen) {
		t.Errorf("ProfileNames() = %v", got)
	}
	// Profiles returns fresh copies.
	a := Profiles()
	a[0].Up.Base = time.Hour
	if a[4].Up.Burst != nil {
		a[4].Up.Burst.LossInBad = 0.123
	}
	if b := Profiles(); b[0].Up.Base == time.Hour {
		t.Error("Profiles shares state between calls")
	}
}

// TestProfileFacts checks that the named profiles produce the traffic their
// descriptions promise.
func TestProfileFacts(t *testing.T) {
	t.Parallel()
	const n = 100_000
	cases := []struct {
		profile        string
		dir            Direction
		min, max       time.Duration // delay range
		mean, meanTol  time.Duration
		loss, lossTol  float64
		describeFields string
	}{
		{"lan", DirUp, 150 * time.Microsecond, 250 * time.Microsecond, 200 * time.Microsecond, 2 * time.Microsecond, 0, 0, ""},
		{"fiber", DirDown, 9 * ms, 11 * ms, 10 * ms, 50 * time.Microsecond, 0, 0, ""},
		{"broadband", DirUp, 20 * ms, 44 * ms, 32 * ms, 200 * time.Microsecond, 0.02, 0.003, ""},
		{"congested", DirDown, 5 * ms, 200 * ms, 51 * ms, 3 * ms, 0.01, 0.002, ""},
		{"mobile-4g", DirUp, 80 * ms, 120 * ms, 100 * ms, 500 * time.Microsecond, 0.04, 0.005, ""},
		{"mobile-3g", DirDown, 330 * ms, 390 * ms, 360 * ms, 500 * time.Microsecond, 0.07, 0.005, ""},
		{"leo-satellite", DirUp, 90 * ms, 118 * ms, 104 * ms, 3 * ms, 0, 0, ""},
		{"ue-average", DirUp, 30 * ms, 60 * ms, 45 * ms, 300 * time.Microsecond, 0.01, 0.002, ""},
		{"ue-bad", DirDown, 100 * ms, 200 * ms, 150 * ms, 500 * time.Microsecond, 0.05, 0.004, ""},
		{"ue-bad-both", DirUp, 200 * ms, 400 * ms, 300 * ms, 1 * ms, 0.0975, 0.005, ""},
		{"ue-bad-both", DirDown, 200 * ms, 400 * ms, 300 * ms, 1 * ms, 0.0975, 0.005, ""},
		{"asymmetric-jitter", DirUp, 20 * ms, time.Second, 35 * ms, 300 * time.Microsecond, 0, 0, ""},
		{"asymmetric-jitter", DirDown, 20 * ms, 20*ms + 200*time.Microsecond, 20*ms + 100*time.Microsecond, 5 * time.Microsecond, 0, 0, ""},
		{"fixed-asymmetry", DirUp, 40 * ms, 40*ms + 500*time.Microsecond, 40*ms + 250*time.Microsecond, 10 * time.Microsecond, 0, 0, ""},
		{"fixed-asymmetry", DirDown, 10 * ms, 10*ms + 500*time.Microsecond, 10*ms + 250*time.Microsecond, 10 * time.Microsecond, 0, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.profile+"/"+string(tc.dir), func(t *testing.T) {
			p, ok := ProfileByName(tc.profile)
			if !ok {
				t.Fatal("missing")
			}
			up, down, err := p.NewLinks(5)
			if err != nil {
				t.Fatal(err)
			}
			l := up
			if tc.dir == DirDown {
				l = down
			}
			// 20ms spacing: the queue's 2s correlation time needs a long run.
			ds := delays(l, n, 20*ms)
			var lo, hi time.Duration = math.MaxInt64, 0
			for _, d := range ds {
				lo, hi = min(lo, d), max(hi, d)
			}
			if lo < tc.min || hi > tc.max {
				t.Errorf("delays in [%v, %v], want within [%v, %v]", lo, hi, tc.min, tc.max)
			}
			if m := time.Duration(meanDur(ds)); absDur(m-tc.mean) > tc.meanTol {
				t.Errorf("mean delay %v, want %v ± %v", m, tc.mean, tc.meanTol)
			}
			st := l.Stats()
			if loss := float64(st.Lost) / float64(st.Sent); math.Abs(loss-tc.loss) > tc.lossTol {
				t.Errorf("loss %.4f, want %v ± %v", loss, tc.loss, tc.lossTol)
			}
		})
	}
}

func TestScenarioProfiles(t *testing.T) {
	const sec = time.Second
	at := func(name string, dir Direction, now time.Duration) time.Duration {
		p, _ := ProfileByName(name)
		up, down, err := p.NewLinks(1)
		if err != nil {
			t.Fatal(err)
		}
		if dir == DirUp {
			return up.MinDelay(now)
		}
		return down.MinDelay(now)
	}
	checks := []struct {
		name string
		dir  Direction
		now  time.Duration
		want time.Duration
	}{
		{"latency-step", DirUp, 60*sec - 1, 20 * ms},
		{"latency-step", DirUp, 60 * sec, 60 * ms},
		{"latency-step", DirDown, 60 * sec, 60 * ms},
		{"uplink-step", DirUp, 60 * sec, 50 * ms},
		{"uplink-step", DirDown, 60 * sec, 20 * ms},
	}
	for _, c := range checks {
		if got := at(c.name, c.dir, c.now); got != c.want {
			t.Errorf("%s %s at %v: base %v, want %v", c.name, c.dir, c.now, got, c.want)
		}
	}
	p, _ := ProfileByName("outage-10s")
	up, down, _ := p.NewLinks(1)
	for _, l := range []*Link{up, down} {
		if l.InOutage(60*sec-1) || !l.InOutage(60*sec) || !l.InOutage(70*sec-1) || l.InOutage(70*sec) {
			t.Errorf("outage-10s %s: outage window wrong", l.Direction())
		}
	}
	client, server, _ := p.NewClocks()
	if got := client.Offset(10*sec) - client.Offset(0); got != 500*time.Microsecond {
		t.Errorf("outage-10s: client drifts %v per 10s, want 0.5ms", got)
	}
	if server.Offset(1000*sec) != 0 {
		t.Error("server clock is not true time")
	}
	p, _ = ProfileByName("clock-jump")
	client, _, _ = p.NewClocks()
	if got := client.Read(60*sec) - client.Read(60*sec-1); got < 2*sec || got > 2*sec+2 {
		t.Errorf("clock-jump: reading steps by %v at 60s, want 2s", got)
	}
	p, _ = ProfileByName("drift-500ppm")
	client, _, _ = p.NewClocks()
	if got := client.Offset(60*sec) - client.Offset(0); got != 30*ms {
		t.Errorf("drift-500ppm: %v per minute, want 30ms", got)
	}
}

func TestProfileJSONRoundTrip(t *testing.T) {
	for _, p := range Profiles() {
		data, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		q, err := ParseProfile(data)
		if err != nil {
			t.Fatalf("%s: %v\n%s", p.Name, err, data)
		}
		if !reflect.DeepEqual(p, q) {
			t.Errorf("%s: round trip changed the profile:\n%+v\n%+v\n%s", p.Name, p, q, data)
		}
		if strings.Contains(string(data), "µ") {
			t.Errorf("%s: JSON not ASCII: %s", p.Name, data)
		}
		// Through UnmarshalJSON too, and a file.
		var r Profile
		if err := json.Unmarshal(data, &r); err != nil || !reflect.DeepEqual(p, r) {
			t.Errorf("%s: json.Unmarshal: %v", p.Name, err)
		}
	}
	// Component types encode the same way on their own.
	p, _ := ProfileByName("wifi")
	for _, v := range []any{&p.Up, &p.Client, &p.Frames, p.Up.Burst, &p.Up.Jitter} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		back := reflect.New(reflect.TypeOf(v).Elem())
		if err := json.Unmarshal(data, back.Interface()); err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		if !reflect.DeepEqual(back.Interface(), v) {
			t.Errorf("%T: round trip %s gave %+v", v, data, back.Elem())
		}
	}
	p, _ = ProfileByName("clock-slew")
	data, _ := json.Marshal(p.Client.Slews[0])
	if string(data) != `{"from":"1m0s","to":"3m0s","ppm":500}` {
		t.Errorf("slew JSON %s", data)
	}
	p, _ = ProfileByName("latency-step")
	data, _ = json.Marshal(p.Changes[0])
	if string(data) != `{"at":"1m0s","direction":"both","base":"60ms"}` {
		t.Errorf("change JSON %s", data)
	}
	data, _ = json.Marshal(Profile{Name: "lan", Up: LinkSpec{Base: 200 * time.Microsecond}})
	if string(data) != `{"name":"lan","up":{"base":"200us"},"down":{"base":"0s"}}` {
		t.Errorf("minimal JSON %s", data)
	}
}

func TestLoadProfile(t *testing.T) {
	dir := t.TempDir()
	p, _ := ProfileByName("ue-bad-both")
	data, _ := json.Marshal(p)
	path := filepath.Join(dir, "p.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	q, err := LoadProfile(path)
	if err != nil || !reflect.DeepEqual(p, q) {
		t.Errorf("LoadProfile: %v", err)
	}
	if _, err := LoadProfile(filepath.Join(dir, "missing.json")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"name":"x","up":{"loss":3}}`), 0o644)
	if _, err := LoadProfile(bad); err == nil || !contains(err.Error(), "bad.json") || !contains(err.Error(), "up.loss") {
		t.Errorf("invalid file: %v", err)
	}
}

// TestDocExample parses the JSON example of the package documentation.
func TestDocExample(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	in := false
	for _, line := range strings.Split(string(src), "\n") {
		switch {
		case line == "//\t{":
			in = true
		case !in:
			continue
		}
		b.WriteString(strings.TrimPrefix(line, "//\t") + "\n")
		if line == "//\t}" {
			break
		}
	}
	p, err := ParseProfile([]byte(b.String()))
	if err != nil {
		t.Fatalf("doc example: %v\n%s", err, b.String())
	}
	if p.Name != "my-dsl" || p.Up.Queue == nil || p.Down.Jitter.Kind != JitterPareto || len(p.Changes) != 3 ||
		len(p.Client.Jumps) != 1 || p.Client.Slews[0].PPM != -500 || p.Frames.HitchDuration != 100*ms {
		t.Errorf("doc example decoded as %+v", p)
	}
	if _, _, err := p.NewLinks(1); err != nil {
		t.Error(err)
	}
}

func TestParseProfileErrors(t *testing.T) {
	cases := []struct {
		name, json string
		want       []string
	}{
		{"empty", ``, []string{"empty input"}},
		{"not object", `[1]`, []string{"top level: want a JSON object, got an array"}},
		{"syntax", "{\"name\": \"x\",\n  \"up\": {\"base\": 10ms}}", []string{"invalid JSON at line 2, column 20"}},
		{"truncated", `{"name": "x", "up": {`, []string{"unexpected end of input"}},
		{"trailing", `{"name": "x"} {}`, []string{"unexpected data after the JSON value"}},
		{"unknown top", `{"name": "x", "uplink": {}}`, []string{`top level: unknown field "uplink"`, "known fields: name, description, up, down"}},
		{"unknown nested", `{"name": "x", "up": {"jitter": {"kind": "uniform", "sprd": "1ms"}}}`, []string{`up.jitter: unknown field "sprd"`, "spread"}},
		{"unknown in array", `{"name": "x", "changes": [{"at": "1s", "direction": "up", "outage": "1s"}, {"at": "2s", "dir": "up"}]}`, []string{`changes[1]: unknown field "dir"`}},
		{"bad duration", `{"name": "x", "up": {"base": "10 ms"}}`, []string{`up.base: invalid duration "10 ms"`}},
		{"fractional ns", `{"name": "x", "up": {"base": 1.5}}`, []string{"up.base", "whole number"}},
		{"duration bool", `{"name": "x", "up": {"base": true}}`, []string{`up.base: want a duration string such as "10ms", got true`}},
		{"number as string", `{"name": "x", "up": {"loss": "2%"}}`, []string{`up.loss: want a number, got the string "2%"`}},
		{"missing name", `{"up": {"base": "1ms"}}`, []string{"invalid profile (unnamed)", "name: is required"}},
		{"negative delay", `{"name": "x", "up": {"base": "-1ms"}}`, []string{"up.base: must not be negative, got -1ms"}},
		{"probability", `{"name": "x", "down": {"loss": 1.5}}`, []string{"down.loss: must be a probability in [0, 1], got 1.5"}},
		{"unknown kind", `{"name": "x", "up": {"jitter": {"kind": "gaussian"}}}`, []string{`up.jitter.kind: unknown jitter kind "gaussian"`}},
		{"pareto shape", `{"name": "x", "up": {"jitter": {"kind": "pareto", "scale": "1ms", "shape": 1}}}`, []string{"up.jitter.shape: pareto shape must be a finite number greater than 1"}},
		{"wrong parameter", `{"name": "x", "up": {"jitter": {"kind": "exponential", "spread": "1ms"}}}`, []string{`up.jitter.spread: is not a parameter of jitter kind "exponential"`}},
		{"reorder delay", `{"name": "x", "up": {"reorder": 0.1}}`, []string{"up.reorderDelay: must be positive when reorder is set"}},
		{"burst stuck", `{"name": "x", "up": {"burst": {"pGoodToBad": 0.1, "pBadToGood": 0, "lossInBad": 1}}}`, []string{"up.burst.pBadToGood: must be positive"}},
		{"change direction", `{"name": "x", "changes": [{"at": "1s", "direction": "left", "outage": "1s"}]}`, []string{`changes[0].direction: must be "up", "down" or "both", got "left"`}},
		{"change nothing", `{"name": "x", "changes": [{"at": "1s", "direction": "up"}]}`, []string{"changes[0]: changes nothing"}},
		{"change negative", `{"name": "x", "changes": [{"at": "-1s", "direction": "up", "loss": 0.5}]}`, []string{"changes[0].at: must not be negative"}},
		{"several", `{"name": "x", "up": {"loss": -1}, "down": {"base": "-1s"}}`, []string{"up.loss", "down.base"}},
		{"space in name", `{"name": "my profile"}`, []string{"must not contain spaces"}},
		{"duplicate key", `{"name": "x", "up": {"base": "1ms", "loss": 0, "base": "2ms"}}`, []string{`up: duplicate key "base"`}},
		{"duplicate key case", `{"name": "x", "Name": "y"}`, []string{`top level: duplicate key "Name"`}},
		{"duplicate in array", `{"name": "x", "changes": [{"at": "1s", "direction": "up", "outage": "1s"}, {"at": "1s", "at": "2s"}]}`, []string{`changes[1]: duplicate key "at"`}},
		{"frame interval", `{"name": "x", "frames": {"interval": "1ns"}}`, []string{"frames.interval: must be at least 1ms (or 0 for 60 Hz), got 1ns"}},
		{"number out of range", `{"name": "x", "up": {"loss": 1e400}}`, []string{"up.loss: number 1e400 is out of range"}},
		{"negative seed", `{"name": "x", "client": {"wander": {"ppmPerMinute": 1, "seed": -1}}}`, []string{"client.wander.seed: want a whole number in [0, 2^64), got -1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseProfile([]byte(tc.json))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, leak := range []string{"Go ", "netsim.", "JSON.", "struct", "int64", "float64"} {
				if contains(err.Error(), leak) {
					t.Errorf("error %q names Go internals (%q)", err, leak)
				}
			}
		})
	}
	// Validation errors are ValidationErrors.
	err := Profile{Name: "x", Up: LinkSpec{Loss: 2}}.Validate()
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Path != "up.loss" {
		t.Errorf("errors.As: %v, %+v", err, ve)
	}
}

func TestDurationJSON(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{`"10ms"`, 10 * ms, false},
		{`"1.5ms"`, 1500 * time.Microsecond, false},
		{`"250us"`, 250 * time.Microsecond, false},
		{`"250µs"`, 250 * time.Microsecond, false},
		{`"-3.2s"`, -3200 * ms, false},
		{`"0"`, 0, false},
		{`1500000`, 1500 * time.Microsecond, false},
		{`1e6`, ms, false},
		{`-5`, -5, false},
		{`null`, 77, false}, // unchanged
		{`1.5`, 0, true},
		{`1e30`, 0, true},
		{`"10"`, 0, true},
		{`"ten ms"`, 0, true},
		{`true`, 0, true},
	}
	for _, tc := range cases {
		d := Duration(77)
		err := json.Unmarshal([]byte(tc.in), &d)
		if (err != nil) != tc.err || (!tc.err && time.Duration(d) != tc.want) {
			t.Errorf("%s: got %v, %v; want %v (error %v)", tc.in, time.Duration(d), err, tc.want, tc.err)
		}
	}
	for _, d := range []time.Duration{0, 1, 999, 1500 * time.Microsecond, 16_666_667, -3 * time.Second, 90 * time.Minute} {
		data, err := json.Marshal(Duration(d))
		if err != nil {
			t.Fatal(err)
		}
		var back Duration
		if err := json.Unmarshal(data, &back); err != nil || time.Duration(back) != d {
			t.Errorf("%v: %s -> %v, %v", d, data, time.Duration(back), err)
		}
	}
}

func TestValidateGoValues(t *testing.T) {
	// Values JSON cannot express.
	cases := []struct {
		p    Profile
		want string
	}{
		{Profile{Name: "x", Up: LinkSpec{Loss: math.NaN()}}, "up.loss"},
		{Profile{Name: "x", Up: LinkSpec{Jitter: JitterSpec{Kind: JitterPareto, Scale: ms, Shape: math.Inf(1)}}}, "up.jitter.shape"},
		{Profile{Name: "x", Down: LinkSpec{Base: 2 * time.Hour}}, "down.base: must be at most 1h0m0s"},
		{Profile{Name: "x", Up: LinkSpec{Steps: &StepSpec{Max: ms}}}, "up.steps.interval: must be positive"},
		{Profile{Name: "x", Up: LinkSpec{Queue: &QueueSpec{Mean: -1}}}, "up.queue.mean"},
		{Profile{Name: "x", Client: ClockSpec{DriftPPM: math.Inf(-1)}}, "client.driftPPM"},
		{Profile{Name: "x", Changes: []Change{{At: 1, Direction: DirUp, Jitter: &JitterSpec{Kind: "bogus"}}}}, "changes[0].jitter.kind"},
	}
	for _, tc := range cases {
		err := tc.p.Validate()
		if err == nil || !contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want %q", err, tc.want)
		}
	}
	for _, err := range []error{
		JitterSpec{Kind: JitterUniform, Spread: -1}.Validate(),
		LinkSpec{Duplicate: 2}.Validate(),
		Change{Direction: DirUp}.Validate(),
	} {
		if err == nil {
			t.Error("accepted")
		}
	}
	if s := (JitterSpec{Kind: JitterPareto, Scale: ms, Shape: 1.5, Cap: time.Second}).String(); s != "pareto(scale=1ms, shape=1.5, cap=1s)" {
		t.Errorf("String() = %q", s)
	}
}
