package transport

import (
	"strings"
	"testing"
	"time"

	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/provider/clocksync"
)

func TestSeqTracker(t *testing.T) {
	var tr seqTracker
	for i := range 10 {
		if s := tr.send(time.Duration(i)); s != uint32(i) {
			t.Fatalf("seq %d, want %d", s, i)
		}
	}
	steps := []struct {
		seq  uint32
		t1   time.Duration
		want pongVerdict
		lost int64
	}{
		{0, 0, pongNew, 0},
		{3, 3, pongNew, 2},       // 1 and 2 missing
		{2, 2, pongNew, 1},       // reordered: 2 arrives late
		{2, 2, pongDuplicate, 1}, // and again
		{4, 99, pongMismatch, 1}, // T1 echo wrong: not our ping
		{4, 4, pongNew, 1},
		{10, 10, pongStale, 1}, // never sent
		{1 << 31, 0, pongStale, 1},
		{9, 9, pongNew, 5}, // 1, 5, 6, 7, 8
	}
	for i, s := range steps {
		if got := tr.answer(s.seq, s.t1); got != s.want {
			t.Errorf("step %d: answer(%d) = %d, want %d", i, s.seq, got, s.want)
		}
		if l := tr.lost(); l != s.lost {
			t.Errorf("step %d: lost %d, want %d", i, l, s.lost)
		}
	}
	// Pings older than the window are forgotten.
	for i := range seqWindow {
		tr.send(time.Duration(100 + i))
	}
	if got := tr.answer(5, 5); got != pongStale {
		t.Errorf("answer for a ping %d pings ago = %d, want stale", seqWindow, got)
	}
	newest := uint32(10 + seqWindow - 1)
	if got := tr.answer(newest, time.Duration(100+seqWindow-1)); got != pongNew {
		t.Errorf("answer for the newest ping = %d, want new", got)
	}
}

func TestSeqTrackerWraps(t *testing.T) {
	// As if 2³²−2 pings had been sent and answered.
	tr := seqTracker{next: 1<<32 - 2, highest: 1<<32 - 2, answered: 1<<32 - 2}
	a := tr.send(1) // 2³²−2
	b := tr.send(2) // 2³²−1
	c := tr.send(3) // 2³², 0 on the wire
	if c != 0 {
		t.Fatalf("wire seq %d, want 0", c)
	}
	for _, x := range []struct {
		seq uint32
		t1  time.Duration
	}{{c, 3}, {a, 1}, {b, 2}} {
		if got := tr.answer(x.seq, x.t1); got != pongNew {
			t.Errorf("answer(%d) = %d across the wrap", x.seq, got)
		}
	}
	if l := tr.lost(); l != 0 {
		t.Errorf("lost %d", l)
	}
}

// newBareClient is a Client without a connection, for feeding pongs to
// handlePong directly.
func newBareClient(t *testing.T, logs *logBuffer, clock func() time.Duration) *Client {
	t.Helper()
	cfg, err := ClientConfig{Logger: logs.logger(), Provider: provider.SteeredConfig{Clock: clock}}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	pc, err := provider.NewSteered(cfg.Provider)
	if err != nil {
		t.Fatal(err)
	}
	est, err := clocksync.New(cfg.Estimator)
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{cfg: cfg, log: cfg.Logger, clock: clock, pc: &restartable{Steered: pc, log: cfg.Logger}, est: est, rate: 60,
		synced: make(chan struct{}), msgs: make(chan Message, cfg.MessageBuffer)}
	c.link.Store(&link{session: Session{TickRate: 60, Mode: ModeDatagram, Epoch: 7}})
	return c
}

// TestClientEvents feeds a Client exact samples: it syncs after the burst,
// then reports a clock jump and a path change in its log and stats.
func TestClientEvents(t *testing.T) {
	var logs logBuffer
	var now time.Duration
	c := newBareClient(t, &logs, func() time.Duration { return now })
	offset, up, down := 3*time.Second, 10*time.Millisecond, 10*time.Millisecond
	exchange := func() {
		t1 := now
		c.mu.Lock()
		seq := c.notePingLocked(t1)
		c.mu.Unlock()
		t2 := t1 + offset + up
		now = t1 + up + down
		c.handlePong(wire.AppendPong(nil, wire.Pong{Seq: seq, ClientSend: t1, ServerReceive: t2, ServerSend: t2}), now)
		now = t1 + 100*time.Millisecond
	}
	for i := range defaultBurstPings {
		select {
		case <-c.Synced():
			t.Fatalf("synced after %d samples, want %d", i, defaultBurstPings)
		default:
		}
		exchange()
	}
	select {
	case <-c.Synced():
	default:
		t.Fatal("not synced after the burst")
	}
	if c.System() == nil || c.System().TickRate() != 60 {
		t.Fatal("no 60 Hz System after sync")
	}
	for range 50 {
		exchange()
	}
	if e := c.Estimate(); e.Offset != offset {
		t.Fatalf("offset %v, want %v", e.Offset, offset)
	}

	offset += 500 * time.Millisecond // the server clock steps
	for range 10 {
		exchange()
	}
	if !strings.Contains(logs.String(), "clock jump detected") {
		t.Errorf("no clock jump logged:\n%s", logs.String())
	}
	if e := c.Estimate(); e.Offset != offset {
		t.Errorf("offset %v after the jump, want %v", e.Offset, offset)
	}

	for range 50 {
		exchange()
	}
	up -= 5 * time.Millisecond // a shorter route, one way
	for range 10 {
		exchange()
	}
	if !strings.Contains(logs.String(), "network path changed") {
		t.Errorf("no path change logged:\n%s", logs.String())
	}
	if st := c.Stats(); st.ClockJumps != 1 || st.PathChanges != 1 || st.Lost != 0 || st.Rejected != 0 {
		t.Errorf("stats %+v, want one jump and one path change", st)
	}
	// The estimator holds the offset across a path change.
	if e := c.Estimate(); abs(e.Offset-offset) > time.Millisecond {
		t.Errorf("offset %v after the path change, want %v", e.Offset, offset)
	}

	// Garbage and unknown pongs are counted, not observed.
	c.handlePong([]byte{1, 2, 3}, now)
	c.handlePong(wire.AppendPong(nil, wire.Pong{Seq: 1 << 30}), now)
	if st := c.Stats(); st.Malformed != 1 || st.Stale != 1 {
		t.Errorf("stats %+v, want one malformed, one stale", st)
	}
}

// TestClientDriftAlarm feeds a client exact samples of a server clock
// running 1000 ppm fast: the estimator finds the drift, and the alarm
// fires once, with the session's epoch.
func TestClientDriftAlarm(t *testing.T) {
	var logs logBuffer
	var now time.Duration
	c := newBareClient(t, &logs, func() time.Duration { return now })
	const ppm = 1000
	for range 600 { // a minute at 10 Hz
		t1 := now
		c.mu.Lock()
		seq := c.notePingLocked(t1)
		c.mu.Unlock()
		t2 := t1 + t1/1e6*ppm + 3*time.Second + 10*time.Millisecond
		now = t1 + 20*time.Millisecond
		c.handlePong(wire.AppendPong(nil, wire.Pong{Seq: seq, ClientSend: t1, ServerReceive: t2, ServerSend: t2}), now)
		now = t1 + 100*time.Millisecond
	}
	st := c.Stats()
	t.Logf("drift %.1f ppm, alarm %v, alarms %d", st.DriftPPM, st.DriftAlarm, st.DriftAlarms)
	if !st.DriftAlarm || st.DriftAlarms != 1 || st.DriftPPM < 900 || st.DriftPPM > 1100 {
		t.Errorf("drift %.1f ppm, alarm %v, %d alarms; want about %d ppm and one alarm", st.DriftPPM,
			st.DriftAlarm, st.DriftAlarms, ppm)
	}
	if n := strings.Count(logs.String(), "drift alarm"); n != 1 || !strings.Contains(logs.String(), "epoch=7") {
		t.Errorf("%d drift alarms logged, want 1 with epoch=7:\n%s", n, logs.String())
	}
}
