package netsim

import (
	"math"
	"slices"
	"testing"
	"time"
)

// helpers

func mustLink(t testing.TB, spec LinkSpec, dir Direction, changes []Change, seed uint64) *Link {
	t.Helper()
	l, err := NewLink(spec, dir, changes, seed)
	if err != nil {
		t.Fatalf("NewLink: %v", err)
	}
	return l
}

// delays sends n packets spaced by gap and returns the delay of each
// delivered copy.
func delays(l *Link, n int, gap time.Duration) []time.Duration {
	out := make([]time.Duration, 0, n)
	var buf []time.Duration
	for i := range n {
		now := time.Duration(i) * gap
		buf = l.SendAppend(buf[:0], now)
		for _, a := range buf {
			out = append(out, a-now)
		}
	}
	return out
}

func meanDur(ds []time.Duration) float64 {
	var s float64
	for _, d := range ds {
		s += float64(d)
	}
	return s / float64(len(ds))
}

func stdDur(ds []time.Duration) float64 {
	m := meanDur(ds)
	var s float64
	for _, d := range ds {
		s += (float64(d) - m) * (float64(d) - m)
	}
	return math.Sqrt(s / float64(len(ds)))
}

// quantile returns the q-quantile of sorted ds.
func quantile(sorted []time.Duration, q float64) float64 {
	return float64(sorted[int(q*float64(len(sorted)-1))])
}

func near(got, want, relTol, absTol float64) bool {
	return math.Abs(got-want) <= max(relTol*math.Abs(want), absTol)
}

func TestLinkDeterminism(t *testing.T) {
	spec := LinkSpec{
		Base:         10 * ms,
		Jitter:       JitterSpec{Kind: JitterNormal, Mean: 2 * ms, StdDev: 3 * ms},
		Queue:        &QueueSpec{Mean: 5 * ms, StdDev: 3 * ms, Tau: time.Second},
		Steps:        &StepSpec{Interval: 15 * time.Second, Max: 8 * ms},
		Loss:         0.05,
		Burst:        &GilbertElliott{PGoodToBad: 0.01, PBadToGood: 0.3, LossInBad: 0.8},
		Reorder:      0.05,
		ReorderDelay: 7 * ms,
		Duplicate:    0.05,
	}
	changes := []Change{{At: 3 * time.Second, Direction: DirBoth, Loss: ptr(0.1)}, {At: 4 * time.Second, Direction: DirUp, Outage: time.Second}}
	run := func(seed uint64) [][]time.Duration {
		l := mustLink(t, spec, DirUp, changes, seed)
		var out [][]time.Duration
		for i := range 10000 {
			out = append(out, l.Send(time.Duration(i)*time.Millisecond))
		}
		return out
	}
	a, b, c := run(7), run(7), run(8)
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Fatalf("packet %d: same seed gave %v and %v", i, a[i], b[i])
		}
	}
	same, delivered := 0, 0
	for i := range a {
		if len(a[i]) == 0 && len(c[i]) == 0 {
			continue // lost in both (the outage, for one)
		}
		delivered++
		if slices.Equal(a[i], c[i]) {
			same++
		}
	}
	if same > delivered/100 {
		t.Errorf("seeds 7 and 8 agree on %d of %d delivered packets", same, delivered)
	}
}

func TestLinkStreamsAreIndependent(t *testing.T) {
	// Turning on loss must not change the delays of the packets that are
	// still delivered: every feature has its own random stream.
	base := LinkSpec{Base: 5 * ms, Jitter: JitterSpec{Kind: JitterExponential, Mean: 4 * ms}}
	lossy := base
	lossy.Loss = 0.3
	l1 := mustLink(t, base, DirDown, nil, 99)
	l2 := mustLink(t, lossy, DirDown, nil, 99)
	delivered := 0
	for i := range 5000 {
		now := time.Duration(i) * ms
		a, b := l1.Send(now), l2.Send(now)
		if len(b) == 0 {
			continue
		}
		delivered++
		if !slices.Equal(a, b) {
			t.Fatalf("packet %d: %v without loss, %v with loss", i, a, b)
		}
	}
	if delivered < 3000 {
		t.Fatalf("only %d delivered", delivered)
	}
}

func TestJitterDistributions(t *testing.T) {
	t.Parallel()
	const base = 10 * ms
	const n = 100_000
	lomax := func(s, a, p float64) float64 { return s * (math.Pow(1-p, -1/a) - 1) }
	cases := []struct {
		name           string
		jitter         JitterSpec
		mean, p50, p90 float64 // of the extra delay, ns
		max            time.Duration
	}{
		{"none", JitterSpec{}, 0, 0, 0, 0},
		{"explicit-none", JitterSpec{Kind: JitterNone}, 0, 0, 0, 0},
		{"uniform", JitterSpec{Kind: JitterUniform, Spread: 24 * ms}, 12e6, 12e6, 21.6e6, 24 * ms},
		{"triangular", JitterSpec{Kind: JitterTriangular, Spread: 200 * ms}, 100e6, 100e6, 200e6 * (1 - math.Sqrt(0.05)), 200 * ms},
		{"half-normal", JitterSpec{Kind: JitterNormal, StdDev: 4 * ms}, 4e6 * math.Sqrt(2/math.Pi), 4e6 * 0.6744898, 4e6 * 1.6448536, MaxDelay},
		// N(8ms, 4ms) truncated at 0 (2.3% mass cut).
		{"normal", JitterSpec{Kind: JitterNormal, Mean: 8 * ms, StdDev: 4 * ms}, 8e6 + 4e6*0.0539910/0.9772499, 8.11e6, 13.17e6, MaxDelay},
		{"normal-sd0", JitterSpec{Kind: JitterNormal, Mean: 3 * ms}, 3e6, 3e6, 3e6, 3 * ms},
		{"exponential", JitterSpec{Kind: JitterExponential, Mean: 15 * ms}, 15e6, 15e6 * math.Ln2, 15e6 * math.Ln10, MaxDelay},
		{"pareto", JitterSpec{Kind: JitterPareto, Scale: 10 * ms, Shape: 3}, 5e6, lomax(10e6, 3, 0.5), lomax(10e6, 3, 0.9), MaxDelay},
		{"pareto-capped", JitterSpec{Kind: JitterPareto, Scale: 10 * ms, Shape: 1.2, Cap: 30 * ms}, math.NaN(), lomax(10e6, 1.2, 0.5), 30e6, 30 * ms},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := mustLink(t, LinkSpec{Base: base, Jitter: tc.jitter}, DirUp, nil, 1)
			ds := delays(l, n, ms)
			if len(ds) != n {
				t.Fatalf("delivered %d of %d", len(ds), n)
			}
			extra := make([]time.Duration, n)
			for i, d := range ds {
				extra[i] = d - base
			}
			slices.Sort(extra)
			if extra[0] < 0 {
				t.Fatalf("delay %v below base %v", extra[0]+base, base)
			}
			if tc.max == 0 && extra[n-1] != 0 {
				t.Fatalf("max extra %v, want 0", extra[n-1])
			}
			if tc.max > 0 && extra[n-1] > tc.max {
				t.Errorf("max extra %v above %v", extra[n-1], tc.max)
			}
			if !math.IsNaN(tc.mean) {
				if got := meanDur(extra); !near(got, tc.mean, 0.02, 10e3) {
					t.Errorf("mean extra %.3fms, want %.3fms", got/1e6, tc.mean/1e6)
				}
			}
			if got := quantile(extra, 0.5); !near(got, tc.p50, 0.02, 10e3) {
				t.Errorf("median extra %.3fms, want %.3fms", got/1e6, tc.p50/1e6)
			}
			if got := quantile(extra, 0.9); !near(got, tc.p90, 0.02, 10e3) {
				t.Errorf("p90 extra %.3fms, want %.3fms", got/1e6, tc.p90/1e6)
			}
		})
	}
}

func TestLossRate(t *testing.T) {
	t.Parallel()
	for _, p := range []float64{0, 0.01, 0.1, 0.5, 1} {
		l := mustLink(t, LinkSpec{Base: ms, Loss: p}, DirUp, nil, 3)
		const n = 100_000
		delays(l, n, ms)
		st := l.Stats()
		got := float64(st.Lost) / n
		if math.Abs(got-p) > 4*math.Sqrt(p*(1-p)/n)+1e-9 {
			t.Errorf("loss %v: measured %.4f", p, got)
		}
		if st.Sent != n || st.Lost+st.Delivered != n {
			t.Errorf("loss %v: stats %+v", p, st)
		}
	}
}

func TestGilbertElliottBursts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		ge GilbertElliott
	}{
		{GilbertElliott{PGoodToBad: 0.01, PBadToGood: 0.2, LossInBad: 1}},
		{GilbertElliott{PGoodToBad: 0.005, PBadToGood: 0.25, LossInBad: 1}},
		{GilbertElliott{PGoodToBad: 0.02, PBadToGood: 0.5, LossInBad: 1}},
	}
	for _, tc := range cases {
		l := mustLink(t, LinkSpec{Base: ms, Burst: &tc.ge}, DirUp, nil, 11)
		const n = 200_000
		var runs, lostTotal, cur int
		buf := make([]time.Duration, 0, 2)
		for i := range n {
			if buf = l.SendAppend(buf[:0], time.Duration(i)*ms); len(buf) == 0 {
				cur++
				lostTotal++
				continue
			}
			if cur > 0 {
				runs++
				cur = 0
			}
		}
		meanRun := float64(lostTotal) / float64(runs)
		if want := 1 / tc.ge.PBadToGood; !near(meanRun, want, 0.08, 0) {
			t.Errorf("%+v: mean loss burst %.2f packets, want %.2f", tc.ge, meanRun, want)
		}
		rate := float64(lostTotal) / n
		if want := tc.ge.PGoodToBad / (tc.ge.PGoodToBad + tc.ge.PBadToGood); !near(rate, want, 0.08, 0) {
			t.Errorf("%+v: loss rate %.4f, want %.4f", tc.ge, rate, want)
		}
	}
}

func TestDuplicateAndReorder(t *testing.T) {
	const n = 100_000
	t.Run("duplicate", func(t *testing.T) {
		l := mustLink(t, LinkSpec{Base: 10 * ms, Jitter: JitterSpec{Kind: JitterUniform, Spread: 5 * ms}, Duplicate: 0.1, Loss: 0.2}, DirUp, nil, 5)
		twos := 0
		for i := range n {
			now := time.Duration(i) * ms
			a := l.Send(now)
			if len(a) == 2 {
				twos++
				if a[0] == a[1] {
					t.Errorf("duplicate at the same instant %v: expected its own jitter", a)
				}
			}
			for _, x := range a {
				if x < now+10*ms || x >= now+15*ms {
					t.Fatalf("arrival %v outside [%v, %v)", x, now+10*ms, now+15*ms)
				}
			}
		}
		st := l.Stats()
		if st.Duplicated != uint64(twos) {
			t.Errorf("stats %+v, counted %d duplicates", st, twos)
		}
		// Duplicates are of delivered packets: 0.1 * 0.8 of those sent.
		if got := float64(twos) / n; !near(got, 0.08, 0.05, 0) {
			t.Errorf("duplicate rate %.4f of sent, want 0.08", got)
		}
	})
	t.Run("reorder", func(t *testing.T) {
		l := mustLink(t, LinkSpec{Base: 10 * ms, Reorder: 0.05, ReorderDelay: 50 * ms}, DirUp, nil, 6)
		var arrivals []time.Duration
		held := 0
		for i := range n {
			now := time.Duration(i) * ms
			a := l.Send(now)
			switch d := a[0] - now; d {
			case 10 * ms:
			case 60 * ms:
				held++
			default:
				t.Fatalf("delay %v, want 10ms or 60ms", d)
			}
			arrivals = append(arrivals, a[0])
		}
		if got := float64(held) / n; !near(got, 0.05, 0.05, 0) {
			t.Errorf("reorder rate %.4f, want 0.05", got)
		}
		if l.Stats().Reordered != uint64(held) {
			t.Errorf("stats %+v, counted %d", l.Stats(), held)
		}
		// Every held packet is overtaken by the 49 sent after it.
		overtaken := 0
		for i := range arrivals {
			if i+1 < len(arrivals) && arrivals[i+1] < arrivals[i] {
				overtaken++
			}
		}
		if overtaken < held*9/10 {
			t.Errorf("%d of %d held packets overtaken", overtaken, held)
		}
	})
	t.Run("jitter reorders naturally", func(t *testing.T) {
		l := mustLink(t, LinkSpec{Base: 10 * ms, Jitter: JitterSpec{Kind: JitterUniform, Spread: 10 * ms}}, DirUp, nil, 7)
		prev, inversions := time.Duration(-1), 0
		for i := range 10_000 {
			a := l.Send(time.Duration(i) * ms)[0]
			if a < prev {
				inversions++
			}
			prev = a
		}
		if inversions == 0 {
			t.Error("no reordering with 10ms jitter at 1ms spacing: delivery must not be FIFO")
		}
	})
}

func TestQueue(t *testing.T) {
	t.Parallel()
	q := QueueSpec{Mean: 20 * ms, StdDev: 5 * ms, Tau: time.Second}
	for _, gap := range []time.Duration{10 * ms, 100 * ms} {
		l := mustLink(t, LinkSpec{Base: 5 * ms, Queue: &q}, DirDown, nil, 21)
		n := int(4000 * time.Second / gap)
		ds := delays(l, n, gap)
		extra := make([]float64, len(ds))
		for i, d := range ds {
			extra[i] = float64(d - 5*ms)
			if extra[i] < 0 {
				t.Fatalf("negative queue delay %v", extra[i])
			}
		}
		var m, v float64
		for _, x := range extra {
			m += x
		}
		m /= float64(len(extra))
		for _, x := range extra {
			v += (x - m) * (x - m)
		}
		v /= float64(len(extra))
		if !near(m, 20e6, 0.03, 0) || !near(math.Sqrt(v), 5e6, 0.06, 0) {
			t.Errorf("gap %v: queue mean %.2fms sd %.2fms, want 20ms, 5ms", gap, m/1e6, math.Sqrt(v)/1e6)
		}
		// Autocorrelation at lag 1s is exp(-1) whatever the send rate.
		lag := int(time.Second / gap)
		var c float64
		for i := 0; i+lag < len(extra); i++ {
			c += (extra[i] - m) * (extra[i+lag] - m)
		}
		c /= float64(len(extra)-lag) * v
		if math.Abs(c-math.Exp(-1)) > 0.06 {
			t.Errorf("gap %v: correlation at 1s %.3f, want %.3f", gap, c, math.Exp(-1))
		}
	}
	// Tau 0: independent per packet.
	l := mustLink(t, LinkSpec{Queue: &QueueSpec{Mean: 20 * ms, StdDev: 5 * ms}}, DirDown, nil, 2)
	ds := delays(l, 50_000, ms)
	var c float64
	m := meanDur(ds)
	for i := 0; i+1 < len(ds); i++ {
		c += (float64(ds[i]) - m) * (float64(ds[i+1]) - m)
	}
	c /= float64(len(ds)-1) * stdDur(ds) * stdDur(ds)
	if math.Abs(c) > 0.03 {
		t.Errorf("tau 0: lag-1 correlation %.3f, want 0", c)
	}
}

func TestSteps(t *testing.T) {
	st := StepSpec{Interval: 15 * time.Second, Max: 8 * ms}
	l := mustLink(t, LinkSpec{Base: 90 * ms, Steps: &st}, DirUp, nil, 4)
	values := map[int64]time.Duration{}
	for i := range 3000 {
		now := time.Duration(i) * 100 * ms
		d := l.Send(now)[0] - now
		if d < 90*ms || d >= 98*ms {
			t.Fatalf("delay %v outside [90ms, 98ms)", d)
		}
		if d != l.MinDelay(now) {
			t.Fatalf("delay %v != MinDelay %v without jitter", d, l.MinDelay(now))
		}
		k := int64(now / st.Interval)
		if v, ok := values[k]; ok && v != d {
			t.Fatalf("delay changed within interval %d: %v then %v", k, v, d)
		}
		values[k] = d
	}
	distinct := map[time.Duration]bool{}
	for _, v := range values {
		distinct[v] = true
	}
	if len(distinct) < len(values)-1 {
		t.Errorf("%d distinct step values over %d intervals", len(distinct), len(values))
	}
}

func TestChanges(t *testing.T) {
	const sec = time.Second
	spec := LinkSpec{Base: 20 * ms}
	changes := []Change{
		{At: 90 * sec, Direction: DirBoth, Jitter: &JitterSpec{Kind: JitterUniform, Spread: ms}},
		{At: 60 * sec, Direction: DirUp, Base: ptr(50 * ms)},
		{At: 80 * sec, Direction: DirDown, Loss: ptr(1.0)},
		{At: 100 * sec, Direction: DirBoth, Base: ptr(5 * ms), Loss: ptr(0.0)},
	}
	up := mustLink(t, spec, DirUp, changes, 1)
	down := mustLink(t, spec, DirDown, changes, 1)
	type want struct {
		lo, hi time.Duration // delay in [lo, hi]; hi < 0 means lost
	}
	cases := []struct {
		at       time.Duration
		up, down want
	}{
		{0, want{20 * ms, 20 * ms}, want{20 * ms, 20 * ms}},
		{60*sec - 1, want{20 * ms, 20 * ms}, want{20 * ms, 20 * ms}},
		{60 * sec, want{50 * ms, 50 * ms}, want{20 * ms, 20 * ms}},
		{80*sec - 1, want{50 * ms, 50 * ms}, want{20 * ms, 20 * ms}},
		{80 * sec, want{50 * ms, 50 * ms}, want{0, -1}},
		{90 * sec, want{50 * ms, 51 * ms}, want{0, -1}},
		{100 * sec, want{5 * ms, 6 * ms}, want{5 * ms, 6 * ms}},
		{500 * sec, want{5 * ms, 6 * ms}, want{5 * ms, 6 * ms}},
		// Going back in time still applies the changes by send time.
		{10 * sec, want{20 * ms, 20 * ms}, want{20 * ms, 20 * ms}},
	}
	check := func(name string, l *Link, at time.Duration, w want) {
		t.Helper()
		a := l.Send(at)
		if w.hi < 0 {
			if len(a) != 0 {
				t.Errorf("%s at %v: delivered %v, want lost", name, at, a)
			}
			return
		}
		if len(a) != 1 || a[0]-at < w.lo || a[0]-at > w.hi {
			t.Errorf("%s at %v: arrivals %v, want one with delay in [%v, %v]", name, at, a, w.lo, w.hi)
		}
	}
	for _, tc := range cases {
		check("up", up, tc.at, tc.up)
		check("down", down, tc.at, tc.down)
	}
	if got := up.Spec(70 * sec).Base; got != 50*ms {
		t.Errorf("up.Spec(70s).Base = %v", got)
	}
	if got := down.Spec(85 * sec).Loss; got != 1 {
		t.Errorf("down.Spec(85s).Loss = %v", got)
	}
}

func TestOutage(t *testing.T) {
	t.Parallel()
	const sec = time.Second
	changes := []Change{
		{At: 60 * sec, Direction: DirBoth, Outage: 10 * sec},
		{At: 65 * sec, Direction: DirUp, Outage: 10 * sec}, // overlaps: up is out until 75s
		{At: 200 * sec, Direction: DirDown, Outage: sec},
	}
	spec := LinkSpec{Base: 10 * ms, Jitter: JitterSpec{Kind: JitterUniform, Spread: 2 * ms}}
	windows := map[Direction][][2]time.Duration{
		DirUp:   {{60 * sec, 75 * sec}},
		DirDown: {{60 * sec, 70 * sec}, {200 * sec, 201 * sec}},
	}
	for _, dir := range []Direction{DirUp, DirDown} {
		l := mustLink(t, spec, dir, changes, 9)
		inWindow := func(now time.Duration) bool {
			for _, w := range windows[dir] {
				if now >= w[0] && now < w[1] {
					return true
				}
			}
			return false
		}
		var dropped uint64
		// Every millisecond, plus the nanoseconds around each edge.
		var times []time.Duration
		for i := range 30_000 {
			times = append(times, time.Duration(i)*10*ms)
		}
		for _, w := range windows[dir] {
			times = append(times, w[0]-1, w[0], w[0]+1, w[1]-1, w[1], w[1]+1)
		}
		for _, now := range times {
			a := l.Send(now)
			out := inWindow(now)
			if out != l.InOutage(now) {
				t.Fatalf("%s: InOutage(%v) = %v", dir, now, !out)
			}
			if out {
				dropped++
				if len(a) != 0 {
					t.Fatalf("%s: packet sent at %v in an outage delivered at %v", dir, now, a)
				}
			} else if len(a) != 1 {
				t.Fatalf("%s: packet sent at %v outside outages lost", dir, now)
			}
		}
		if st := l.Stats(); st.OutageDropped != dropped || st.Lost != 0 {
			t.Errorf("%s: stats %+v, want %d outage drops", dir, st, dropped)
		}
	}
}

func TestNamedProfilesNeverNegative(t *testing.T) {
	t.Parallel()
	for _, p := range Profiles() {
		up, down, err := p.NewLinks(1)
		if err != nil {
			t.Fatal(err)
		}
		var buf []time.Duration
		for _, l := range []*Link{up, down} {
			for i := range 5_000 {
				now := time.Duration(i) * 29 * ms
				buf = l.SendAppend(buf[:0], now)
				for _, a := range buf {
					if a-now < l.MinDelay(now) || a < now {
						t.Fatalf("%s %s: delay %v below MinDelay %v", p.Name, l.Direction(), a-now, l.MinDelay(now))
					}
				}
			}
		}
	}
}

func TestSendAppendDoesNotAllocate(t *testing.T) {
	p, _ := ProfileByName("wifi")
	p.Up.Queue = &QueueSpec{Mean: 10 * ms, StdDev: 5 * ms, Tau: time.Second}
	p.Up.Steps = &StepSpec{Interval: time.Second, Max: ms}
	up, _, err := p.NewLinks(1)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]time.Duration, 0, 2)
	now := time.Duration(0)
	allocs := testing.AllocsPerRun(10_000, func() {
		now += ms
		buf = up.SendAppend(buf[:0], now)
	})
	if allocs != 0 {
		t.Errorf("SendAppend allocates %v times per call", allocs)
	}
}

func TestNewLinkErrors(t *testing.T) {
	if _, err := NewLink(LinkSpec{}, DirBoth, nil, 1); err == nil {
		t.Error("direction both accepted")
	}
	if _, err := NewLink(LinkSpec{Loss: 2}, DirUp, nil, 1); err == nil {
		t.Error("loss 2 accepted")
	}
	if _, err := NewLink(LinkSpec{}, DirUp, []Change{{At: time.Second, Direction: "sideways", Outage: time.Second}}, 1); err == nil {
		t.Error("bad change direction accepted")
	}
}
