package netsim

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestPeriodicDelay(t *testing.T) {
	period := 102400 * time.Microsecond
	spec := LinkSpec{Base: 10 * ms, Periodic: &PeriodicSpec{Period: period, Phase: 7 * ms}}
	off := []Change{{At: 60 * time.Second, Direction: DirDown, Periodic: &PeriodicSpec{}}}
	l := mustLink(t, spec, DirDown, off, 1)
	var maxWait time.Duration
	for i := range 2000 {
		now := time.Duration(i) * 37 * ms
		a := l.Send(now)
		if len(a) != 1 {
			t.Fatalf("%v: %d copies", now, len(a))
		}
		wait := a[0] - now - 10*ms
		if now >= 60*time.Second {
			if wait != 0 {
				t.Fatalf("%v: power save switched off but wait %v", now, wait)
			}
			continue
		}
		if wait < 0 || wait >= period || (now+wait-7*ms)%period != 0 {
			t.Fatalf("%v: wait %v not up to a beacon", now, wait)
		}
		maxWait = max(maxWait, wait)
	}
	if maxWait < period*9/10 {
		t.Errorf("largest wait %v, want close to the period %v", maxWait, period)
	}
}

func TestBloatBuildsAndDrains(t *testing.T) {
	spec := LinkSpec{Base: 5 * ms, Bloat: &BloatSpec{Max: 200 * ms, Rise: 5 * time.Second, Drain: 10 * time.Second,
		Busy: 30 * time.Second, Idle: 30 * time.Second}}
	// The queue is a function of time: the same at 100 Hz and at 1 Hz.
	fast := mustLink(t, spec, DirUp, nil, 3)
	slow := mustLink(t, spec, DirUp, nil, 3)
	var peak time.Duration
	var prev time.Duration
	maxRise := time.Duration(0)
	for i := range 100 * 1800 {
		now := time.Duration(i) * 10 * ms
		d := fast.Send(now)[0] - now - 5*ms
		if i%100 == 0 {
			if e := slow.Send(now)[0] - now - 5*ms; e != d {
				t.Fatalf("%v: queue %v at 100 Hz, %v at 1 Hz", now, d, e)
			}
		}
		if d < 0 || d > 200*ms {
			t.Fatalf("%v: queue %v outside [0, max]", now, d)
		}
		peak = max(peak, d)
		maxRise = max(maxRise, d-prev)
		prev = d
	}
	if peak < 100*ms {
		t.Errorf("peak %v over 30 min of 30 s busy periods, want > 100ms", peak)
	}
	// Built over seconds, not per packet: at most Max*10ms/Rise per 10 ms.
	if maxRise > 200*ms*10/5000+time.Microsecond {
		t.Errorf("queue rose %v in 10ms", maxRise)
	}
}

func TestFlapAlternates(t *testing.T) {
	spec := LinkSpec{Base: 20 * ms, Flap: &FlapSpec{Extra: 15 * ms, MinHold: 30 * time.Second, MaxHold: 60 * time.Second}}
	l := mustLink(t, spec, DirUp, nil, 9)
	var switches []time.Duration
	last := l.MinDelay(0)
	if last != 20*ms {
		t.Fatalf("starts at %v, want the base", last)
	}
	for now := time.Duration(0); now < time.Hour; now += 100 * ms {
		d := l.MinDelay(now)
		if d != 20*ms && d != 35*ms {
			t.Fatalf("%v: floor %v", now, d)
		}
		if a := l.Send(now)[0] - now; a != d {
			t.Fatalf("%v: delay %v, floor %v", now, a, d)
		}
		if d != last {
			switches = append(switches, now)
			last = d
		}
	}
	if len(switches) < 55 || len(switches) > 125 {
		t.Errorf("%d switches in an hour with 30-60 s holds", len(switches))
	}
	for i := 1; i < len(switches); i++ {
		if h := switches[i] - switches[i-1]; h < 30*time.Second-100*ms || h > 60*time.Second+100*ms {
			t.Errorf("hold %v outside [30s, 60s]", h)
		}
	}
}

func TestChangeRampsAndSets(t *testing.T) {
	changes := []Change{
		{At: 10 * time.Second, Direction: DirBoth, Base: ptr(50 * ms), Ramp: 10 * time.Second},
		{At: 30 * time.Second, Direction: DirUp, Duplicate: ptr(1.0)},
		{At: 40 * time.Second, Direction: DirUp, Queue: &QueueSpec{Mean: 30 * ms, Tau: 5 * time.Second}},
		{At: 50 * time.Second, Direction: DirUp, Reorder: ptr(1.0), ReorderDelay: ptr(7 * ms)},
	}
	l := mustLink(t, LinkSpec{Base: 10 * ms}, DirUp, changes, 1)
	for _, tc := range []struct {
		at   time.Duration
		want time.Duration
	}{{5 * time.Second, 10 * ms}, {10 * time.Second, 10 * ms}, {15 * time.Second, 30 * ms}, {20 * time.Second, 50 * ms}} {
		if got := l.MinDelay(tc.at); got != tc.want {
			t.Errorf("ramp: floor at %v is %v, want %v", tc.at, got, tc.want)
		}
	}
	if a := l.Send(35 * time.Second); len(a) != 2 {
		t.Errorf("duplicate 1 from 30s: %d copies", len(a))
	}
	// The queue relaxes from 0 toward 30ms with tau 5s.
	q41 := l.Send(41 * time.Second)[0] - 41*time.Second - 50*ms
	q49 := l.Send(49 * time.Second)[0] - 49*time.Second - 50*ms
	if !(q41 > 0 && q41 < q49 && q49 < 30*ms) {
		t.Errorf("queue set at 40s: %v at 41s, %v at 49s, want rising toward 30ms", q41, q49)
	}
	a := l.Send(55 * time.Second)
	if len(a) != 2 || a[0]-55*time.Second < 50*ms+7*ms {
		t.Errorf("reorder 1 from 50s: %v", a)
	}
	if s := l.Spec(55 * time.Second); s.Reorder != 1 || s.ReorderDelay != 7*ms || s.Duplicate != 1 || s.Queue == nil {
		t.Errorf("Spec at 55s: %+v", s)
	}
	// A change that turns reordering on needs a delay.
	if _, err := NewLink(LinkSpec{}, DirUp, []Change{{At: 0, Direction: DirUp, Reorder: ptr(0.5)}}, 1); err == nil {
		t.Error("reorder without a delay accepted")
	}
}

func TestClockSuspend(t *testing.T) {
	c := mustClock(t, ClockSpec{Offset: time.Second, DriftPPM: 100, Suspends: []Suspend{{At: 10 * time.Second, For: 5 * time.Second}}})
	free := mustClock(t, ClockSpec{Offset: time.Second, DriftPPM: 100})
	at := c.Read(10 * time.Second)
	for _, tt := range []time.Duration{10 * time.Second, 12 * time.Second, 15*time.Second - 1} {
		if got := c.Read(tt); got != at {
			t.Errorf("suspended at %v: reads %v, want it stopped at %v", tt, got, at)
		}
		if !c.Suspended(tt) {
			t.Errorf("Suspended(%v) = false", tt)
		}
	}
	if c.Suspended(15*time.Second) || c.Suspended(10*time.Second-1) {
		t.Error("suspended outside the window")
	}
	// After resuming it has lost the 5 s (and their drift).
	lost := free.Read(20*time.Second) - c.Read(20*time.Second)
	if want := 5*time.Second + 500*time.Microsecond; absDur(lost-want) > 1 {
		t.Errorf("lost %v over the suspend, want %v", lost, want)
	}
	for _, local := range []time.Duration{at - ms, at + 1, at + time.Second} {
		tt := c.TrueTime(local)
		if c.Read(tt) < local || (tt > 0 && c.Read(tt-1) >= local) {
			t.Errorf("TrueTime(%v) = %v does not invert Read", local, tt)
		}
	}
	if err := (ClockSpec{Suspends: []Suspend{{At: 0, For: 2 * time.Second}, {At: time.Second, For: time.Second}}}).Validate(); err == nil {
		t.Error("overlapping suspends accepted")
	}
	if err := (Profile{Name: "x", Server: ClockSpec{Suspends: []Suspend{{At: 0, For: time.Second}}}}).Validate(); err == nil {
		t.Error("server suspend accepted")
	}
}

func TestClockWander(t *testing.T) {
	spec := ClockSpec{DriftPPM: 20, Wander: &Wander{PPMPerMinute: 2, LimitPPM: 30, Seed: 5}}
	a, b := mustClock(t, spec), mustClock(t, spec)
	other := spec
	other.Wander = &Wander{PPMPerMinute: 2, LimitPPM: 30, Seed: 6}
	c := mustClock(t, other)
	var lo, hi float64 = math.Inf(1), math.Inf(-1)
	prev := a.Read(0)
	differs := false
	for tt := time.Duration(0); tt < 6*time.Hour; tt += 7 * time.Second {
		r := a.Read(tt)
		if r != b.Read(tt) {
			t.Fatalf("same seed, different readings at %v", tt)
		}
		if r != c.Read(tt) {
			differs = true
		}
		if r < prev {
			t.Fatalf("reading went back at %v", tt)
		}
		prev = r
		p := a.RatePPM(tt)
		lo, hi = min(lo, p), max(hi, p)
	}
	if !differs {
		t.Error("another seed gives the same walk")
	}
	if lo < 20-30 || hi > 20+30 {
		t.Errorf("rate in [%v, %v], want within 20±30 ppm", lo, hi)
	}
	if hi-lo < 10 {
		t.Errorf("rate only wandered over [%v, %v] in 6 hours at 2 ppm/min", lo, hi)
	}
	for _, local := range []time.Duration{time.Minute, time.Hour + 3} {
		tt := a.TrueTime(local)
		if a.Read(tt) < local || a.Read(tt-1) >= local {
			t.Errorf("TrueTime(%v) = %v does not invert Read", local, tt)
		}
	}
}

func TestEmpiricalJitter(t *testing.T) {
	for _, name := range HistogramNames() {
		h, ok := BuiltinHistogram(name)
		if !ok {
			t.Fatalf("%s missing", name)
		}
		var mean, total float64
		for i := range len(h.Bins) - 1 {
			mid := float64(h.Bins[i].Lower+h.Bins[i+1].Lower) / 2
			mean += h.Bins[i].Count * (mid - float64(h.Floor()))
			total += h.Bins[i].Count
		}
		mean /= total
		l := mustLink(t, LinkSpec{Base: 2 * ms, Jitter: JitterSpec{Kind: JitterEmpirical, Histogram: h}}, DirUp, nil, 1)
		ds := delays(l, 50_000, 10*ms)
		span := h.Bins[len(h.Bins)-1].Lower - h.Floor()
		for _, d := range ds {
			if d < 2*ms || d > 2*ms+span {
				t.Fatalf("%s: delay %v outside [2ms, 2ms+%v]", name, d, span)
			}
		}
		if got := meanDur(ds) - float64(2*ms); !near(got, mean, 0.03, 0) {
			t.Errorf("%s: mean jitter %.3fms, histogram's %.3fms", name, got/1e6, mean/1e6)
		}
	}
	if _, err := ParseHistogram(strings.NewReader("1\t5\n0.5\t3\n")); err == nil {
		t.Error("decreasing bounds accepted")
	}
	if _, err := ParseHistogram(strings.NewReader("1\t0\n2\t0\n")); err == nil {
		t.Error("all-zero histogram accepted")
	}
	h, err := ParseHistogram(strings.NewReader("# ms count\n1.0\t1\n2.0\t3\n4.0\t0\n"))
	if err != nil || len(h.Bins) != 3 || h.Floor() != ms {
		t.Fatalf("ParseHistogram: %v %+v", err, h)
	}
}

func TestNewFeaturesJSON(t *testing.T) {
	in := `{"name": "everything",
	  "up": {"base": "20ms", "jitter": {"kind": "empirical", "histogram": "5g-midband-uplink"},
	         "bloat": {"max": "300ms", "rise": "5s", "drain": "20s", "busy": "40s", "idle": "60s"},
	         "flap": {"extra": "12ms", "minHold": "30s", "maxHold": "60s"}},
	  "down": {"base": "20ms", "jitter": {"kind": "empirical", "bins": [[1, 2], [1.5, 6], [3, 0]]},
	           "periodic": {"period": "102.4ms"}},
	  "client": {"offset": "1s", "driftPPM": 40, "suspends": [{"at": "5m", "for": "30s"}],
	             "wander": {"ppmPerMinute": 0.5, "seed": 3}},
	  "server": {"slews": [{"from": "2m", "to": "4m", "ppm": -200}]},
	  "changes": [
	    {"at": "1m", "direction": "up", "queue": {"mean": "20ms", "stdDev": "5ms", "tau": "10s"}, "ramp": "10s"},
	    {"at": "2m", "direction": "down", "periodic": {"period": "0s"}, "reorder": 0.01, "reorderDelay": "3ms", "duplicate": 0.01},
	    {"at": "3m", "direction": "both", "steps": {"interval": "15s", "max": "5ms"}}
	  ]}`
	p, err := ParseProfile([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if p.Up.Jitter.Histogram == nil || p.Up.Jitter.Histogram.Name != Histogram5GUplink || p.Down.Jitter.Histogram.Floor() != ms ||
		p.Up.Bloat.Drain != 20*time.Second || p.Up.Flap.Extra != 12*ms || p.Down.Periodic.Period != 102400*time.Microsecond ||
		p.Client.Suspends[0].For != 30*time.Second || p.Client.Wander.Seed != 3 || p.Changes[0].Ramp != 10*time.Second ||
		*p.Changes[1].Duplicate != 0.01 || p.Changes[2].Steps.Max != 5*ms {
		t.Fatalf("decoded %+v", p)
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParseProfile(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	data2, _ := json.Marshal(q)
	if string(data) != string(data2) {
		t.Errorf("round trip changed the JSON:\n%s\n%s", data, data2)
	}
	if profileFingerprint(t, p, 1) != profileFingerprint(t, q, 1) {
		t.Error("round trip changed the behaviour")
	}
	for _, tc := range []struct{ json, want string }{
		{`{"name": "x", "up": {"jitter": {"kind": "empirical", "histogram": "6g"}}}`, `up.jitter.histogram: unknown histogram "6g"`},
		{`{"name": "x", "up": {"jitter": {"kind": "empirical"}}}`, "up.jitter.histogram: is required"},
		{`{"name": "x", "up": {"jitter": {"kind": "uniform", "spread": "1ms", "histogram": "5g-midband-uplink"}}}`, "up.jitter.histogram: is not a parameter"},
		{`{"name": "x", "up": {"jitter": {"kind": "empirical", "bins": [[1, 2, 3], [2, 0]]}}}`, "up.jitter.histogram[0]"},
		{`{"name": "x", "up": {"flap": {"extra": "1ms", "minHold": "1ms", "maxHold": "1s"}}}`, "up.flap.minHold: must be at least 100ms"},
		{`{"name": "x", "up": {"bloat": {"max": "1ms", "rise": "1s", "drain": "1s", "busy": "1s"}}}`, "up.bloat.idle: must be at least 100ms"},
		{`{"name": "x", "changes": [{"at": "1s", "direction": "up", "ramp": "1s", "outage": "1s"}]}`, "changes[0].ramp: ramps nothing"},
		{`{"name": "x", "client": {"wander": {"ppmPerMinute": -1}}}`, "client.wander.ppmPerMinute"},
		{`{"name": "x", "client": {"suspends": [{"at": "1s", "for": "0s"}]}}`, "client.suspends[0].for: must be positive"},
	} {
		_, err := ParseProfile([]byte(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.json, err, tc.want)
		}
	}
}
