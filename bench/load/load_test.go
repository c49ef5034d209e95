package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runInProcess runs a compare-like flow at tiny scale in this process: a
// server (netclock or echo) in a goroutine and n clients against it.
func runInProcess(t *testing.T, echo bool, n int) (*ServerReport, *ClientReport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	cert := filepath.Join(t.TempDir(), "cert.pem")
	addrCh := make(chan string, 1)
	start := make(chan struct{})
	type result struct {
		rep *ServerReport
		err error
	}
	srvDone := make(chan result, 1)
	go func() {
		rep, err := runServer(ctx, serverOpts{
			echo: echo, addr: "127.0.0.1:0", certOut: cert,
			// The server's window outlasts the clients' by half a second,
			// and the clients stay connected a second after theirs: the
			// two windows, timed by different goroutines, may start apart
			// by up to that much without a client seeing the server go.
			expect: n, start: start, expectTimeout: 10 * time.Second,
			warmup: 200 * time.Millisecond, duration: 1500 * time.Millisecond,
			residence: true, idle: 200 * time.Millisecond,
			ready: func(a string) { addrCh <- a },
		})
		srvDone <- result{rep, err}
	}()
	var addr string
	select {
	case addr = <-addrCh:
	case r := <-srvDone:
		t.Fatalf("server ended before listening: %v", r.err)
	}
	pem, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	crep, err := runClients(ctx, clientOpts{
		echo: echo, n: n, addr: addr, pinPEM: pem, ping: 50 * time.Millisecond,
		warmup: 200 * time.Millisecond, duration: time.Second, hold: time.Second,
		dialConcurrency: 2, dialAttempts: 3, dialTimeout: 5 * time.Second,
		backoff: 10 * time.Millisecond, maxBackoff: 100 * time.Millisecond,
		dialed: func(int) { close(start) },
	})
	if err != nil {
		t.Fatalf("clients: %v", err)
	}
	r := <-srvDone
	if r.err != nil {
		t.Fatalf("server: %v", r.err)
	}
	return r.rep, crep
}

func checkDist(t *testing.T, what string, d Dist) {
	t.Helper()
	if d.Count == 0 {
		t.Errorf("%s: no samples", what)
		return
	}
	qs := []float64{d.MinUS, d.P50US, d.P90US, d.P99US, d.P999US, d.MaxUS}
	for i := 1; i < len(qs); i++ {
		if qs[i] < qs[i-1] {
			t.Errorf("%s: quantiles out of order: %+v", what, d)
		}
	}
	if d.MinUS <= 0 || d.MeanUS < d.MinUS || d.MeanUS > d.MaxUS {
		t.Errorf("%s: implausible: %+v", what, d)
	}
}

// near reports whether a and b agree within slack plus frac of the larger.
func near(a, b int64, slack int64, frac float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return float64(d) <= float64(slack)+frac*math.Max(float64(a), float64(b))
}

func TestFlowsInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("load flows take wall time")
	}
	const n = 3
	var runs [2]*Run
	for i, echo := range []bool{false, true} {
		name := map[bool]string{false: "netclock", true: "echo"}[echo]
		t.Run(name, func(t *testing.T) {
			s, c := runInProcess(t, echo, n)
			runs[i] = &Run{Part: "a", Rep: 1, Server: s, Clients: c}

			// The clients.
			if c.Mode != name || c.N != n || c.Connected != n || c.RefusedForGood != 0 || c.FailedForGood != 0 {
				t.Errorf("clients: %+v", c)
			}
			if c.DialAttempts != c.Connected+c.RefusedRetried+c.FailedRetried+c.RefusedForGood+c.FailedForGood {
				t.Errorf("dial attempts %d don't add up: %+v", c.DialAttempts, c)
			}
			// Only invariants: rates and windows measured on the wall clock
			// move with the machine's load, so they are checked for sense,
			// not for values.
			if !c.WindowStarted || c.WindowS < 0.9 {
				t.Errorf("client window: started %v, %.3f s", c.WindowStarted, c.WindowS)
			}
			if c.PingsSent <= 0 || c.PongsReceived <= 0 || c.PongsReceived > c.PingsSent+n || c.Lost < 0 || c.Disconnected != 0 {
				t.Errorf("client counts: sent %d, received %d, lost %d, disconnected %d",
					c.PingsSent, c.PongsReceived, c.Lost, c.Disconnected)
			}
			// Clients ping at 20 Hz at most: a slow machine lowers the
			// rate, nothing raises it.
			if c.PingRateHz <= 0 || c.PingRateHz > 25 {
				t.Errorf("ping rate per client %.1f Hz, want at most about 20", c.PingRateHz)
			}
			checkDist(t, "client RTT", c.RTT)
			if !near(int64(c.RTT.Count), c.PongsReceived, n, 0.05) {
				t.Errorf("%d RTT samples for %d pongs (source %q)", c.RTT.Count, c.PongsReceived, c.RTTSource)
			}
			if !echo && (c.Synced != n || c.QUICSmoothedRTTUS <= 0 || c.EstimateRTTUS <= 0) {
				t.Errorf("netclock client state: synced %d, QUIC RTT %.1f µs, estimate RTT %.1f µs",
					c.Synced, c.QUICSmoothedRTTUS, c.EstimateRTTUS)
			}

			// The server.
			if s.Mode != name || !s.WindowStarted || s.WindowS < 0.9 || s.ExpectTimedOut {
				t.Errorf("server window: %+v", s)
			}
			if s.Start.Clients != n || s.End.Clients != n || s.End.Accepted != n || s.End.Refused != 0 || s.End.Failed != 0 {
				t.Errorf("server counts: start %+v, end %+v", s.Start, s.End)
			}
			if s.Pings <= 0 || s.Pings != s.End.Pings-s.Start.Pings {
				t.Errorf("server pings %d, counts %+v → %+v", s.Pings, s.Start, s.End)
			}
			if !echo && (s.NetclockStats == nil || s.NetclockStats.Pings != s.End.Pings) {
				t.Errorf("netclock stats %+v vs end counts %+v", s.NetclockStats, s.End)
			}
			// The server's and the clients' windows start on the same
			// signal but are timed by different goroutines: their counts
			// agree only as far as the scheduler lets them, so they are
			// not compared.
			if s.CPU.TotalS <= 0 || math.IsNaN(s.PerPingUS) || s.PerPingUS <= 0 ||
				math.Abs(s.PerPingUS-s.CPU.TotalS*1e6/float64(s.Pings)) > 1e-6*s.PerPingUS {
				t.Errorf("server CPU: %+v, %.1f µs per ping", s.CPU, s.PerPingUS)
			}
			if s.IdleCPU < 0 || s.PerPingNetUS > s.PerPingUS {
				t.Errorf("server idle CPU %.3f, net CPU per ping %.1f µs > %.1f µs", s.IdleCPU, s.PerPingNetUS, s.PerPingUS)
			}
			m := s.Mem
			if m.Conns != n || m.Before.HeapInuse == 0 || m.With.HeapInuse == 0 || m.Before.RSS <= 0 || m.With.RSS <= 0 ||
				m.With.Goroutines <= m.Before.Goroutines {
				t.Errorf("server memory: %+v", m)
			}
			if r := s.Residence; r == nil {
				t.Error("no residence report")
			} else {
				checkDist(t, "server residence", r.Dist)
				if int64(r.Count) > s.Pings+n || !near(int64(r.Count), s.Pings, n, 0.05) {
					t.Errorf("%d residence samples for %d pings (sizes read %v, written %v)",
						r.Count, s.Pings, r.ReadSizes, r.WriteSizes)
				}
			}
		})
	}
	if runs[0] == nil || runs[1] == nil {
		return
	}
	// The compare table renders from such reports.
	var buf bytes.Buffer
	f, err := parseFlags([]string{"-mode", "compare"})
	if err != nil {
		t.Fatal(err)
	}
	pair := [][2]*Run{{runs[0], runs[1]}}
	printTable(&buf, f, pair, pair, []cGroup{{n: n, mode: "netclock", runs: []*Run{runs[0]}}, {n: n, mode: "echo", runs: []*Run{runs[1]}}})
	out := buf.String()
	for _, want := range []string{"(a) one client", "overhead of netclock p50", "(b) 100 clients",
		"ratio netclock/echo", "(c) netclock", "(c) echo", "server receive-to-send", "server memory per connection"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "NaN") {
		t.Errorf("table has NaN:\n%s", out)
	}
}

func TestHist(t *testing.T) {
	h := newHist()
	for i := 1; i <= 100000; i++ {
		h.record(time.Duration(i) * time.Microsecond / 10) // 0.1 µs .. 10 ms
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := q * 1e7 // ns
		if got := h.quantile(q); math.Abs(got-want) > 0.008*want+100 {
			t.Errorf("q%.3f = %.0f ns, want %.0f", q, got, want)
		}
	}
	d := h.dist()
	if d.Count != 100000 || d.MinUS != 0.1 || d.MaxUS != 10000 || math.Abs(d.MeanUS-5000.05) > 0.01 {
		t.Errorf("dist %+v", d)
	}
	for _, v := range []uint64{0, 1, 63, 64, 65, 127, 128, 1 << 40, math.MaxUint64} {
		i := histIndex(v)
		if i < 0 || i >= histBuckets {
			t.Fatalf("index of %d: %d out of range", v, i)
		}
		if mid := histMid(i); v < 1<<50 && math.Abs(mid-float64(v)) > float64(v)/128+0.5 {
			t.Errorf("bucket of %d has midpoint %.1f", v, mid)
		}
	}
	if q := newHist().quantile(0.5); q != 0 {
		t.Errorf("empty quantile %v", q)
	}
}

func TestStatOf(t *testing.T) {
	if s := statOf([]float64{3, 1, 2}); s != (stat{2, 1, 3}) {
		t.Errorf("odd: %+v", s)
	}
	if s := statOf([]float64{4, 1, 2, 3}); s != (stat{2.5, 1, 4}) {
		t.Errorf("even: %+v", s)
	}
}

// BenchmarkClockHook is what the clock hook adds to each T1 and T4 read
// (runtime.Callers and the cached caller lookup).
func BenchmarkClockHook(b *testing.B) {
	k := &clockHook{rec: newRecorder()}
	for b.Loop() {
		k.now()
	}
}

// BenchmarkMono is the bare clock read, for comparison.
func BenchmarkMono(b *testing.B) {
	for b.Loop() {
		mono()
	}
}
