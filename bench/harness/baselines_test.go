package harness

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

//lint:ignore ST1011 a unit, short for the tables below
const blMS = time.Millisecond

// ---------------------------------------------------------------------------
// A tiny synchronous fake network for the baselines' tests. Virtual (true)
// time steps by 1 ms; the server clock is true time, the client clock is
// true time + offset; both sides run 60 Hz frames (the client's phase-shifted
// by 5 ms unless a test says otherwise); a message arrives after its link's delay and is delivered at the
// first step at or after its arrival (delays are whole milliseconds, so
// exactly at it).

// blDelay returns a message's one-way delay and whether it is delivered; n
// counts the messages sent on that link, from 0.
type blDelay func(send time.Duration, n int) (time.Duration, bool)

func blFixed(d time.Duration) blDelay {
	return func(time.Duration, int) (time.Duration, bool) { return d, true }
}

type blInflight struct {
	at       time.Duration
	order    int
	toServer bool
	m        Msg
}

type blFrameRec struct {
	T, Now, Dt, Shared, Err time.Duration
}

type blFakeNet struct {
	t        time.Duration
	offset   time.Duration
	up, down blDelay
	inflight []blInflight
	order    int
	sentUp   []Msg
	sentDown []Msg
	client   Client
	server   Server
}

type blFakeLink struct {
	n        *blFakeNet
	toServer bool
}

func (l blFakeLink) Send(m Msg) {
	n := l.n
	var d time.Duration
	var ok bool
	if l.toServer {
		d, ok = n.up(n.t, len(n.sentUp))
		n.sentUp = append(n.sentUp, m)
	} else {
		d, ok = n.down(n.t, len(n.sentDown))
		n.sentDown = append(n.sentDown, m)
	}
	if !ok {
		return
	}
	n.order++
	n.inflight = append(n.inflight, blInflight{at: n.t + d, order: n.order, toServer: l.toServer, m: m})
}

// deliver hands over every message due by now, in arrival order.
func (n *blFakeNet) deliver() {
	for {
		best := -1
		for i, f := range n.inflight {
			if f.at > n.t {
				continue
			}
			if best < 0 || f.at < n.inflight[best].at || (f.at == n.inflight[best].at && f.order < n.inflight[best].order) {
				best = i
			}
		}
		if best < 0 {
			return
		}
		f := n.inflight[best]
		n.inflight = append(n.inflight[:best], n.inflight[best+1:]...)
		if f.toServer {
			n.server.Receive(f.m, f.at)
		} else {
			n.client.Receive(f.m, f.at+n.offset)
		}
	}
}

// blRun runs sys for dur of true time and returns every client frame.
func blRun(t *testing.T, sys System, offset time.Duration, up, down blDelay, dur time.Duration) ([]blFrameRec, *blFakeNet) {
	return blRunPhase(t, sys, offset, 5*blMS, up, down, dur)
}

// blRunPhase is blRun with the client's first frame at true time phase.
func blRunPhase(t *testing.T, sys System, offset, phase time.Duration, up, down blDelay, dur time.Duration) ([]blFrameRec, *blFakeNet) {
	t.Helper()
	n := &blFakeNet{offset: offset, up: up, down: down}
	n.client, n.server = sys.New(blFakeLink{n, true}, blFakeLink{n, false})
	var recs []blFrameRec
	nextS, nextC := time.Duration(0), phase
	prev, first := time.Duration(0), true
	for n.t = 0; n.t <= dur; n.t += blMS {
		n.deliver()
		if n.t >= nextS {
			n.server.Frame(n.t)
			nextS += ServerFrame
		}
		n.deliver()
		if n.t >= nextC {
			now := n.t + offset
			dt := now - prev
			if first {
				dt, first = ServerFrame, false
			}
			prev = now
			n.client.Frame(now, dt)
			sh := n.client.Shared(now)
			if b, ok := n.client.Bound(now); ok || b != 0 {
				t.Fatalf("%s: Bound = %v, %v; want 0, false", sys.Name, b, ok)
			}
			recs = append(recs, blFrameRec{T: n.t, Now: now, Dt: dt, Shared: sh, Err: sh - n.t})
			nextC += ServerFrame
		}
	}
	return recs, n
}

func blSystem(t *testing.T, name string) System {
	t.Helper()
	for _, s := range Baselines() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no baseline %q", name)
	return System{}
}

func blKinds(msgs []Msg, kind uint8) int {
	n := 0
	for _, m := range msgs {
		if m.Kind == kind {
			n++
		}
	}
	return n
}

// ---------------------------------------------------------------------------

func TestBaselineNames(t *testing.T) {
	var got []string
	seen := map[string]bool{}
	for _, s := range Baselines() {
		if seen[s.Name] {
			t.Errorf("duplicate name %q", s.Name)
		}
		seen[s.Name] = true
		if s.New == nil {
			t.Errorf("%s: New is nil", s.Name)
		}
		got = append(got, s.Name)
	}
	want := []string{"ue-vanilla", "sutphin-rtt2", "vorixo-min-rtt", "vorixo-window", "median11", "simpson", "ngo"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Baselines() names (-want +got):\n%s", d)
	}
}

// TestBaselineAccuracy runs every baseline on a jitter-free fake network and
// checks its error (Shared − true server time) against hand-computed bounds.
//
// Frame stamping: with 60 Hz frames at 1 ms resolution a stamp or an action
// waits up to 17 ms for a frame, whatever the client's frame phase. For the Unreal RTT/2 schemes the request
// waits a ∈ [up, up+17] ms for the server frame and the reply b ∈ [down,
// down+17] ms for the client frame; the error is (a − b)/2, within
// [(up−down)/2 − 8.5, (up−down)/2 + 8.5] ms. ue-vanilla's error is −b. The
// engine-agnostic median11 and simpson stamp exactly, so their error is
// exactly (up − down)/2. NGO's target error is
// rtt/2 − down − q + w with tick quantization q ∈ [0, 17.7) ms, the wait for
// the frame w ∈ (0, 17] ms, and the measured RTT up to 17 ms long: within
// [(up−down)/2 − 18, (up−down)/2 + 26] ms once its 1 % slew has converged.
func TestBaselineAccuracy(t *testing.T) {
	type want struct {
		from   time.Duration // check frames at or after this true time
		lo, hi time.Duration // error bounds, inclusive
	}
	tests := []struct {
		name     string
		up, down time.Duration
		offset   time.Duration
		want     map[string]want
	}{
		{
			name: "symmetric 50/50, client ahead", up: 50 * blMS, down: 50 * blMS, offset: 1234567891 * time.Microsecond,
			want: map[string]want{
				"ue-vanilla":     {200 * blMS, -67 * blMS, -50 * blMS},
				"sutphin-rtt2":   {500 * blMS, -8500 * time.Microsecond, 8500 * time.Microsecond},
				"vorixo-min-rtt": {500 * blMS, -8500 * time.Microsecond, 8500 * time.Microsecond},
				"vorixo-window":  {500 * blMS, -8500 * time.Microsecond, 8500 * time.Microsecond},
				"median11":       {200 * blMS, 0, 0},
				"simpson":        {200 * blMS, 0, 0},
				"ngo":            {15 * time.Second, -18 * blMS, 26 * blMS},
			},
		},
		{
			name: "asymmetric 10 up/90 down, client behind", up: 10 * blMS, down: 90 * blMS, offset: -987654321 * time.Microsecond,
			want: map[string]want{
				"ue-vanilla":     {200 * blMS, -107 * blMS, -90 * blMS},
				"sutphin-rtt2":   {500 * blMS, -48500 * time.Microsecond, -31500 * time.Microsecond},
				"vorixo-min-rtt": {500 * blMS, -48500 * time.Microsecond, -31500 * time.Microsecond},
				"vorixo-window":  {500 * blMS, -48500 * time.Microsecond, -31500 * time.Microsecond},
				"median11":       {200 * blMS, -40 * blMS, -40 * blMS},
				"simpson":        {200 * blMS, -40 * blMS, -40 * blMS},
				"ngo":            {15 * time.Second, -58 * blMS, -14 * blMS},
			},
		},
	}
	for _, tt := range tests {
		for _, phase := range []time.Duration{0, 5 * blMS, 11 * blMS, 16 * blMS} {
			for _, sys := range Baselines() {
				t.Run(fmt.Sprintf("%s/phase %v/%s", tt.name, phase, sys.Name), func(t *testing.T) {
					w, ok := tt.want[sys.Name]
					if !ok {
						t.Fatalf("no expectation for %s", sys.Name)
					}
					recs, _ := blRunPhase(t, sys, tt.offset, phase, blFixed(tt.up), blFixed(tt.down), 30*time.Second)
					checked := 0
					for _, r := range recs {
						if r.T < w.from {
							continue
						}
						checked++
						if r.Err < w.lo || r.Err > w.hi {
							t.Fatalf("at %v: error %v, want within [%v, %v]", r.T, r.Err, w.lo, w.hi)
						}
					}
					if checked < 100 {
						t.Fatalf("only %d frames checked", checked)
					}
				})
			}
		}
	}
}

func TestBaselineDeterministic(t *testing.T) {
	jittery := func(base time.Duration) blDelay {
		return func(send time.Duration, n int) (time.Duration, bool) {
			return base + time.Duration((n*37)%23)*blMS, n%7 != 3
		}
	}
	for _, sys := range Baselines() {
		t.Run(sys.Name, func(t *testing.T) {
			a, _ := blRun(t, sys, 3*time.Second, jittery(40*blMS), jittery(60*blMS), 20*time.Second)
			b, _ := blRun(t, sys, 3*time.Second, jittery(40*blMS), jittery(60*blMS), 20*time.Second)
			if d := cmp.Diff(a, b); d != "" {
				t.Errorf("two identical runs differ (-first +second):\n%s", d)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Direct drive: the halves fed by hand through recording links.

type blRecLink struct{ sent []Msg }

func (l *blRecLink) Send(m Msg) { l.sent = append(l.sent, m) }

func blNew(t *testing.T, name string) (Client, Server, *blRecLink, *blRecLink) {
	t.Helper()
	up, down := &blRecLink{}, &blRecLink{}
	c, s := blSystem(t, name).New(up, down)
	return c, s, up, down
}

func TestBaselineUEVanilla(t *testing.T) {
	c, s, up, down := blNew(t, "ue-vanilla")

	// Server: one-way, stamped with its frame time, at its first frame and
	// then at the first frame at or after every 5 s.
	for _, now := range []time.Duration{0, 16 * blMS, 4999 * blMS, 5010 * blMS, 9990 * blMS, 10 * time.Second, 21 * time.Second} {
		s.Frame(now)
	}
	var got []time.Duration
	for _, m := range down.sent {
		got = append(got, m.Value)
	}
	if d := cmp.Diff([]time.Duration{0, 5010 * blMS, 10 * time.Second, 21 * time.Second}, got); d != "" {
		t.Errorf("replicated values (-want +got):\n%s", d)
	}

	// Client: applied at the next frame, with that frame's time; no request.
	c.Frame(100*blMS, 16*blMS)
	if got := c.Shared(100 * blMS); got != 100*blMS {
		t.Errorf("before any update: Shared = %v, want the client clock 100ms", got)
	}
	c.Receive(down.sent[1], 105*blMS) // Value 5.01 s
	if got := c.Shared(100 * blMS); got != 100*blMS {
		t.Errorf("after Receive, before Frame: Shared = %v, want unchanged 100ms", got)
	}
	c.Frame(116*blMS, 16*blMS)
	if got := c.Shared(116 * blMS); got != 5010*blMS {
		t.Errorf("Shared at the applying frame = %v, want 5.01s (no latency compensation)", got)
	}
	c.Frame(132*blMS, 16*blMS)
	if got := c.Shared(132 * blMS); got != 5026*blMS {
		t.Errorf("Shared a frame later = %v, want 5.026s", got)
	}
	c.Receive(down.sent[0], 140*blMS) // stale (older Seq): dropped
	c.Frame(148*blMS, 16*blMS)
	if got := c.Shared(148 * blMS); got != 5042*blMS {
		t.Errorf("after a stale update: Shared = %v, want 5.042s", got)
	}
	if len(up.sent) != 0 {
		t.Errorf("client sent %d messages, want none", len(up.sent))
	}
}

func TestBaselineFrameStampedServer(t *testing.T) {
	for _, name := range []string{"sutphin-rtt2", "vorixo-min-rtt", "vorixo-window"} {
		t.Run(name, func(t *testing.T) {
			_, s, _, down := blNew(t, name)
			s.Receive(Msg{Kind: blKindTimeRequest, Seq: 1, T1: 7 * blMS}, 10*blMS)
			s.Receive(Msg{Kind: blKindTimeRequest, Seq: 1, T1: 7 * blMS}, 11*blMS) // duplicate
			if len(down.sent) != 0 {
				t.Fatalf("server replied in Receive; Unreal replies in its frame")
			}
			s.Frame(16 * blMS)
			s.Frame(33 * blMS)
			want := []Msg{{Kind: blKindTimeReply, Seq: 1, T1: 7 * blMS, T2: 16 * blMS, T3: 16 * blMS, Value: 16 * blMS}}
			if d := cmp.Diff(want, down.sent); d != "" {
				t.Errorf("replies (-want +got):\n%s", d)
			}
		})
	}
}

func TestBaselineSutphinOneShotWithRetry(t *testing.T) {
	sys := blSystem(t, "sutphin-rtt2")
	// The first request is lost; after sync the downlink slows to 300 ms,
	// which a one-shot sync never notices.
	up := func(send time.Duration, n int) (time.Duration, bool) { return 50 * blMS, n != 0 }
	down := func(send time.Duration, n int) (time.Duration, bool) {
		if send > 5*time.Second {
			return 300 * blMS, true
		}
		return 50 * blMS, true
	}
	recs, n := blRun(t, sys, 42*time.Second, up, down, 30*time.Second)
	if got := blKinds(n.sentUp, blKindTimeRequest); got != 2 {
		t.Errorf("requests sent = %d, want 2 (one lost, one retry)", got)
	}
	if d := n.sentUp[1].T1 - n.sentUp[0].T1; d < time.Second || d > time.Second+17*blMS {
		t.Errorf("retry %v after the first request, want at the first frame ≥ 1s", d)
	}
	var synced *blFrameRec
	for i := range recs {
		r := &recs[i]
		if r.T < 1300*blMS {
			continue
		}
		if synced == nil {
			synced = r
		}
		if r.Err < -8500*time.Microsecond || r.Err > 8500*time.Microsecond {
			t.Fatalf("at %v: error %v, want within ±8.5ms", r.T, r.Err)
		}
		if off, want := r.Shared-r.Now, synced.Shared-synced.Now; off != want {
			t.Fatalf("at %v: offset changed to %v from %v; sutphin syncs once", r.T, off, want)
		}
	}
}

// blReply is a frame-stamped reply whose sample has the given RTT and whose
// server stamp is ahead of the client's send stamp by ahead.
func blReply(seq uint64, now, rtt, ahead time.Duration) Msg {
	return Msg{Kind: blKindTimeReply, Seq: seq, T1: now - rtt, Value: now - rtt + ahead}
}

func TestBaselineVorixo(t *testing.T) {
	const offset = time.Second
	type sample struct {
		rtt   time.Duration
		ahead time.Duration // server stamp − client send stamp
	}
	// sym is a sample from a symmetric path with the true offset: the
	// server stamped it rtt/2 after the send.
	sym := func(rtt time.Duration) sample { return sample{rtt, offset + rtt/2} }
	window := []sample{sym(100 * blMS), sym(20 * blMS), sym(110 * blMS), sym(120 * blMS), sym(900 * blMS),
		sym(130 * blMS), sym(140 * blMS), sym(150 * blMS), sym(160 * blMS), sym(170 * blMS), sym(180 * blMS)}
	tests := []struct {
		name    string
		newFunc func(toServer, toClient Link) (Client, Server)
		samples []sample
		want    []time.Duration // delta = ServerTimestamp − ClientTimestamp − RTT'/2 after each
	}{
		{
			name:    "min-rtt keeps the shortest",
			newFunc: blSystem(t, "vorixo-min-rtt").New,
			samples: []sample{sym(200 * blMS), sym(100 * blMS), {150 * blMS, 5 * time.Second}, {80 * blMS, 2*time.Second + 40*blMS}},
			want:    []time.Duration{offset, offset, offset, 2 * time.Second},
		},
		{
			// Until 10 samples: the current RTT, so the exact offset. The 10th:
			// sorted [20 100 110 ... 170 900], drop 20 and 900, mean of the
			// other 8 = 135 ms: delta = 1s + 170/2 − 135/2 = 1.0175 s. The 11th
			// evicts 100: mean of 110..180 = 145 ms: 1s + 90 − 72.5.
			name:    "window drops min and max of the last 10",
			newFunc: blSystem(t, "vorixo-window").New,
			samples: window,
			want:    []time.Duration{offset, offset, offset, offset, offset, offset, offset, offset, offset, 1017500 * blMS / 1000, 1017500 * blMS / 1000},
		},
		{
			// The seed's C++ as written: at the 10th sample it removes the
			// oldest (100), sorts the other 9 and averages indices 1..8: drops
			// 20, keeps 900: mean 235 ms: 1s + 85 − 117.5. The 11th removes
			// 20: window [110 120 900 130 ... 180], drops 110, keeps 900:
			// mean 243.75 ms: 1s + 90 − 121.875.
			name: "window as the seed code computes it",
			newFunc: func(toServer, toClient Link) (Client, Server) {
				return newVorixo(toServer, toClient, vorixoWindowPeriod, vorixoWindowSeedCode)
			},
			samples: window,
			want:    []time.Duration{offset, offset, offset, offset, offset, offset, offset, offset, offset, 967500 * blMS / 1000, 968125 * blMS / 1000},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, down := &blRecLink{}, &blRecLink{}
			c, _ := tt.newFunc(up, down)
			now := 10 * time.Second
			c.Frame(now, 16*blMS)
			var got []time.Duration
			for i, s := range tt.samples {
				now += 16 * blMS
				c.Receive(blReply(uint64(i+1), now-3*blMS, s.rtt-3*blMS, s.ahead), now-3*blMS)
				c.Frame(now, 16*blMS)
				got = append(got, c.Shared(now)-now)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("deltas (-want +got):\n%s", d)
			}
		})
	}
}

func TestBaselineVorixoPeriods(t *testing.T) {
	for _, tt := range []struct {
		name   string
		period time.Duration
	}{{"vorixo-min-rtt", 5 * time.Second}, {"vorixo-window", time.Second}} {
		t.Run(tt.name, func(t *testing.T) {
			c, _, up, _ := blNew(t, tt.name)
			for now := 3 * time.Second; now < 3*time.Second+3*tt.period+16*blMS; now += 16 * blMS {
				c.Frame(now, 16*blMS)
			}
			var got []time.Duration
			for _, m := range up.sent {
				got = append(got, m.T1-3*time.Second)
			}
			// At connect, then at the first frame at or after each period.
			ceil := func(d time.Duration) time.Duration { return (d + 15*blMS) / (16 * blMS) * (16 * blMS) }
			want := []time.Duration{0, ceil(tt.period), ceil(2 * tt.period), ceil(3 * tt.period)}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("request stamps after connect (-want +got):\n%s", d)
			}
		})
	}
}

// blPong is an immediately echoed pong whose sample has the given RTT and
// offset (server − client): T2 + rtt/2 − now = off.
func blPong(seq uint64, now, rtt, off time.Duration) Msg {
	return Msg{Kind: blKindPong, Seq: seq, T1: now - rtt, T2: now - rtt/2 + off, T3: now - rtt/2 + off}
}

func TestBaselineMedian11(t *testing.T) {
	c, s, up, down := blNew(t, "median11")

	// The server replies at once, stamped at receipt.
	s.Receive(Msg{Kind: blKindPing, Seq: 1, T1: 3 * blMS}, 51*blMS)
	if d := cmp.Diff([]Msg{{Kind: blKindPong, Seq: 1, T1: 3 * blMS, T2: 51 * blMS, T3: 51 * blMS, Value: 51 * blMS}}, down.sent); d != "" {
		t.Errorf("pong (-want +got):\n%s", d)
	}

	now, seq := time.Duration(0), uint64(0)
	frame := func() time.Duration {
		now += 16 * blMS
		c.Frame(now, 16*blMS)
		return c.Shared(now) - now
	}
	sample := func(off time.Duration) {
		seq++
		c.Receive(blPong(seq, now+5*blMS, 100*blMS, off), now+5*blMS)
	}
	frame()
	if len(up.sent) != 1 || up.sent[0].Kind != blKindPing || up.sent[0].T1 != now {
		t.Fatalf("first frame sent %+v, want one ping stamped %v", up.sent, now)
	}

	// The first sample is applied at once.
	sample(100 * blMS)
	if got := frame(); got != 100*blMS {
		t.Fatalf("after the first sample: offset %v, want 100ms", got)
	}
	// Median of [100 130] = 115: 2 ms per frame, then the last 1 ms.
	sample(130 * blMS)
	var got []time.Duration
	for range 9 {
		got = append(got, frame())
	}
	want := []time.Duration{102 * blMS, 104 * blMS, 106 * blMS, 108 * blMS, 110 * blMS, 112 * blMS, 114 * blMS, 115 * blMS, 115 * blMS}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("slew toward 115ms (-want +got):\n%s", d)
	}
	// One 2 s sample: median of [100 130 2000] = 130: still a 2 ms step.
	sample(2 * time.Second)
	if got := frame(); got != 117*blMS {
		t.Errorf("after one 2s outlier: offset %v, want 117ms", got)
	}
	// A second: median of [100 130 2000 2000] = 1065 ms, 948 ms away: snap.
	sample(2 * time.Second)
	if got := frame(); got != 1065*blMS {
		t.Errorf("target 948ms away: offset %v, want a snap to 1065ms", got)
	}
	// Exactly 500 ms away does not snap: samples 0 and 1 s, median 500 ms,
	// displayed 0 (the first sample).
	c2, _, _, _ := blNew(t, "median11")
	c2.Frame(0, 16*blMS)
	c2.Receive(blPong(1, 1*blMS, 100*blMS, 0), 1*blMS)
	c2.Frame(16*blMS, 16*blMS)
	c2.Receive(blPong(2, 17*blMS, 100*blMS, time.Second), 17*blMS) // median 500 blMS
	c2.Frame(32*blMS, 16*blMS)
	if got := c2.Shared(32*blMS) - 32*blMS; got != 2*blMS {
		t.Errorf("target exactly 500ms away: offset %v, want a 2ms step (snap only above 500ms)", got)
	}

	// The window is the last 11: six 0s and five 100s → median 0; one more
	// 100 evicts the oldest 0 → median 100.
	c3, _, _, _ := blNew(t, "median11")
	m := c3.(*median11Client)
	for i, off := range []time.Duration{0, 0, 0, 0, 0, 0, 100 * blMS, 100 * blMS, 100 * blMS, 100 * blMS, 100 * blMS} {
		c3.Receive(blPong(uint64(i+1), time.Second, 100*blMS, off), time.Second)
	}
	if m.target != 0 {
		t.Errorf("median of six 0s and five 100ms = %v, want 0", m.target)
	}
	c3.Receive(blPong(12, time.Second, 100*blMS, 100*blMS), time.Second)
	if m.target != 100*blMS {
		t.Errorf("after the 12th sample: median %v, want 100ms (window of 11)", m.target)
	}
}

// TestBaselineMedian11Steps checks on the fake network that the displayed
// offset moves at most 2 ms per frame except at a snap (> 500 ms).
func TestBaselineMedian11Steps(t *testing.T) {
	// The downlink slows from 20 ms to 120 ms at 5 s (offset estimate −50
	// ms: slewed) and to 2.12 s at 20 s (−1 s: snapped once the median
	// moves).
	down := func(send time.Duration, n int) (time.Duration, bool) {
		switch {
		case send >= 20*time.Second:
			return 2120 * blMS, true
		case send >= 5*time.Second:
			return 120 * blMS, true
		}
		return 20 * blMS, true
	}
	recs, n := blRun(t, blSystem(t, "median11"), 0, blFixed(20*blMS), down, 40*time.Second)
	snaps, slews := 0, 0
	for i := 1; i < len(recs); i++ {
		step := (recs[i].Shared - recs[i-1].Shared) - recs[i].Dt
		switch {
		case step == 0:
		case blAbs(step) <= 2*blMS:
			slews++
		case recs[i].T > 20*time.Second && blAbs(step) > 500*blMS:
			snaps++
		default:
			if recs[i].T > 200*blMS { // the first sample snaps from 0
				t.Errorf("at %v: offset moved %v in one frame", recs[i].T, step)
			}
		}
	}
	if snaps != 1 || slews < 25 {
		t.Errorf("snaps = %d, slews = %d; want 1 snap and ≥ 25 slewed frames", snaps, slews)
	}
	if got := n.client.(interface{ Resets() int }).Resets(); got != 1 {
		t.Errorf("Resets() = %d, want 1 (the first sample is not a reset)", got)
	}
	if last := recs[len(recs)-1]; last.Err != -1050*blMS {
		t.Errorf("final error %v, want (20 − 2120)/2 = −1.05s", last.Err)
	}
}

func TestBaselineSimpson(t *testing.T) {
	c, _, up, _ := blNew(t, "simpson")
	now, seq := 10*time.Second, uint64(0)
	c.Frame(now, 16*blMS)
	steps := []struct {
		rtt, off time.Duration
		want     time.Duration // delta after the sample
	}{
		{100 * blMS, 10 * blMS, 10 * blMS}, // first: applied at once
		{100 * blMS, 20 * blMS, 10 * blMS}, // 2–4: collected, not applied
		{100 * blMS, 20 * blMS, 10 * blMS},
		{100 * blMS, 20 * blMS, 10 * blMS},
		// 5th: RTTs [100 100 100 100 400], median 100, population SD 120:
		// the 400 ms sample is discarded: mean(10 20 20 20) = 17.5 ms.
		{400 * blMS, 500 * blMS, 17500 * time.Microsecond},
		// RTTs [100×4 150 400]: median (upper middle) 100, SD ≈ 109.6:
		// 150 kept, 400 dropped: mean(10 20 20 20 30) = 20 ms.
		{150 * blMS, 30 * blMS, 20 * blMS},
		{100 * blMS, 20 * blMS, 20 * blMS},
		{100 * blMS, 20 * blMS, 20 * blMS},
		{100 * blMS, 20 * blMS, 20 * blMS}, // 9 held: 400 still the only one dropped
		// 10th: the window slides past the first (10 ms) sample:
		// mean(20 20 20 30 20 20 20 28) = 22.25 ms.
		{100 * blMS, 28 * blMS, 22250 * time.Microsecond},
	}
	for i, s := range steps {
		now += 2 * time.Second
		seq++
		c.Receive(blPong(seq, now, s.rtt, s.off), now)
		if got := c.Shared(now) - now; got != s.want {
			t.Errorf("after sample %d (rtt %v, offset %v): delta %v, want %v", i+1, s.rtt, s.off, got, s.want)
		}
	}
	// A ping at connect (10 s), then at frames every 2 s: frames resume at
	// 30 s, 20 s late, which fires once (missed periods are skipped).
	for f := now; f <= now+4*time.Second; f += 16 * blMS {
		c.Frame(f, 16*blMS)
	}
	var stamps []time.Duration
	for _, m := range up.sent {
		stamps = append(stamps, m.T1)
	}
	if d := cmp.Diff([]time.Duration{10 * time.Second, 30 * time.Second, 32 * time.Second, 34 * time.Second}, stamps); d != "" {
		t.Errorf("ping stamps (-want +got):\n%s", d)
	}
}

func TestBaselineNGOServer(t *testing.T) {
	tests := []struct {
		name   string
		frames []time.Duration
		want   []int64
	}{
		{
			name:   "from zero",
			frames: []time.Duration{0, 500 * blMS, 990 * blMS, 1000 * blMS, 1010 * blMS, 1999 * blMS, 2040 * blMS, 5000 * blMS, 5017 * blMS},
			// tick 0, then the first frame at or past ticks 30, 60, … (a
			// frame past several seconds sends once).
			want: []int64{0, 30, 61, 150},
		},
		{
			name:   "starting mid-second",
			frames: []time.Duration{500 * blMS, 999 * blMS, 1001 * blMS, 1500 * blMS},
			want:   []int64{30},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, s, _, down := blNew(t, "ngo")
			for _, f := range tt.frames {
				s.Frame(f)
			}
			var got []int64
			for _, m := range down.sent {
				if m.Kind != blKindNGOTick || m.T1 != 0 || m.T2 != 0 || m.T3 != 0 || m.Value != 0 {
					t.Errorf("sync message %+v: want the tick only, no timestamp", m)
				}
				got = append(got, m.Tick)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ticks sent (-want +got):\n%s", d)
			}
		})
	}
	// Transport pings are echoed at once.
	_, s, _, down := blNew(t, "ngo")
	s.Receive(Msg{Kind: blKindPing, Seq: 4, T1: 3 * blMS}, 70*blMS)
	if d := cmp.Diff([]Msg{{Kind: blKindPong, Seq: 4, T1: 3 * blMS, T2: 70 * blMS, T3: 70 * blMS}}, down.sent); d != "" {
		t.Errorf("pong (-want +got):\n%s", d)
	}
	if got := ngoTickOf(-1); got != -1 {
		t.Errorf("ngoTickOf(-1ns) = %d, want -1 (floor)", got)
	}
	if got := ngoTickTime(608); got != 20*time.Second+266666666 {
		t.Errorf("ngoTickTime(608) = %v, want 20.266666666s", got)
	}
}

func TestBaselineNGOClient(t *testing.T) {
	const dt = 16 * blMS
	c, _, up, _ := blNew(t, "ngo")
	now := time.Duration(0)
	var prev time.Duration
	step := func() time.Duration { // returns Shared − previous Shared − dt
		now += dt
		before := prev
		c.Frame(now, dt)
		prev = c.Shared(now)
		return prev - before - dt
	}

	c.Frame(now, dt) // connect: transport ping stamped 0
	prev = c.Shared(now)
	if prev != 0 || len(up.sent) != 1 || up.sent[0].Kind != blKindPing {
		t.Fatalf("unsynced Shared = %v (want the client clock 0), sent %+v", prev, up.sent)
	}
	// The pong (RTT 16 ms, measured at the frame) and tick 300 (10 s):
	// the connection reset. Then tick 600 (20 s) before the next frame:
	// 10 s off, a hard reset: Shared = tick/rate + dt + rtt/2 exactly.
	c.Receive(Msg{Kind: blKindPong, Seq: 1, T1: 0}, 10*blMS)
	c.Receive(Msg{Kind: blKindNGOTick, Seq: 1, Tick: 300}, 12*blMS)
	step()
	c.Receive(Msg{Kind: blKindNGOTick, Seq: 2, Tick: 600}, 20*blMS)
	step()
	if want := 20*time.Second + dt + 8*blMS; prev != want {
		t.Fatalf("after a hard reset: Shared = %v, want %v", prev, want)
	}
	// On target: bang-bang with no dead band — it oscillates at exactly
	// ±1 % (equal offsets count as "not below": −1 % first).
	var got []time.Duration
	for range 8 {
		got = append(got, step())
	}
	want := []time.Duration{-dt / 100, dt / 100, -dt / 100, dt / 100, -dt / 100, dt / 100, -dt / 100, dt / 100}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("steps on target (-want +got):\n%s", d)
	}
	if want := 20*time.Second + 9*dt + 8*blMS; prev != want {
		t.Fatalf("Shared = %v, want %v", prev, want)
	}
	// Tick 608 (20.2667 s) arrives: the target jumps ~123 ms ahead, under
	// the 0.2 s threshold: +1 % per frame until it is reached, then the
	// oscillation around target = 608/30 s + elapsed + rtt/2.
	base := now
	c.Receive(Msg{Kind: blKindNGOTick, Seq: 3, Tick: 608}, now+blMS)
	target := func() time.Duration { return ngoTickTime(608) + (now + dt - base) + 8*blMS }
	for i := range 760 {
		if s := step(); s != dt/100 {
			t.Fatalf("frame %d after the sync: step %v, want +dt/100 = %v", i, s, dt/100)
		}
	}
	for range 20 {
		step()
	}
	ups, downs := 0, 0
	for range 40 {
		switch s := step(); s {
		case dt / 100:
			ups++
		case -dt / 100:
			downs++
		default:
			t.Fatalf("step %v, want ±dt/100", s)
		}
		if e := prev - (target() - dt); blAbs(e) > dt/100 {
			t.Fatalf("Shared − target = %v, want within ±%v", e, dt/100)
		}
	}
	if ups == 0 || downs == 0 {
		t.Errorf("ups %d, downs %d: want a bang-bang oscillation", ups, downs)
	}
	// The first RTT is 0.15 s until a pong arrives.
	c2, _, _, _ := blNew(t, "ngo")
	c2.Frame(0, dt)
	c2.Receive(Msg{Kind: blKindNGOTick, Seq: 1, Tick: 30}, blMS)
	c2.Receive(Msg{Kind: blKindNGOTick, Seq: 2, Tick: 300}, 2*blMS)
	c2.Frame(dt, dt)
	if got, want := c2.Shared(dt), 10*time.Second+dt+75*blMS; got != want {
		t.Errorf("hard reset before any pong: Shared = %v, want %v (RTT 0.15s)", got, want)
	}
}

// TestBaselineNGOScale checks on the fake network that NGO's shared clock
// always advances at exactly 0.99 or 1.01 of the frame time, and hard-resets
// when the path changes by more than 0.2 s. The downlink slows by 600 ms at
// 20 s: the tick sent at 20 s arrives at 20.65 s, 600 ms late, with the old
// RTT: the server offset is 0.6 s off, a reset (step −0.6 s). The pong of
// the 20 s ping arrives at 20.705 s: RTT 0.7 s, but NGO only uses it at the
// next sync, the tick arriving at 21.65 s: RTT/2 grew by 0.3 s, so the local
// offset is 0.3 s off: a second reset (step +0.3 s). Both at the first
// client frame after the arrival (frames at 5 ms + k/60 s).
func TestBaselineNGOScale(t *testing.T) {
	down := func(send time.Duration, n int) (time.Duration, bool) {
		if send >= 20*time.Second {
			return 650 * blMS, true
		}
		return 50 * blMS, true
	}
	recs, n := blRun(t, blSystem(t, "ngo"), 5*time.Second, blFixed(50*blMS), down, 40*time.Second)
	var resets []time.Duration
	for i := 1; i < len(recs); i++ {
		r := recs[i]
		if r.T < 500*blMS {
			continue
		}
		step := recs[i].Shared - recs[i-1].Shared - r.Dt
		if step == r.Dt/100 || step == -r.Dt/100 {
			continue
		}
		if blAbs(step) < 200*blMS {
			t.Fatalf("at %v: step %v, want ±%v or a hard reset", r.T, step, r.Dt/100)
		}
		resets = append(resets, r.T)
	}
	if d := cmp.Diff([]time.Duration{20655 * blMS, 21655 * blMS}, resets); d != "" {
		t.Errorf("hard resets at (-want +got):\n%s", d)
	}
	if got := n.client.(interface{ Resets() int }).Resets(); got != 2 {
		t.Errorf("Resets() = %d, want 2 (the connection reset is not counted)", got)
	}
	// After the change: (50 − 650)/2 = −300 ms of asymmetry, within the
	// same [−18, +26] ms frame-stamping band.
	if last := recs[len(recs)-1]; last.Err < -318*blMS || last.Err > -274*blMS {
		t.Errorf("final error %v, want within [−318ms, −274ms]", last.Err)
	}
}
