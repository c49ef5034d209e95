package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// childEnv makes this test binary act as the elevator program, so that the
// demo's processes (started from os.Executable) are real processes.
const childEnv = "ELEVATOR_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestDemo runs the demo end to end: a server process and a client
// process on a free port, until the client saw 3 projectiles. It asserts
// what must hold however slow the machine: the projectiles arrive once
// each and in order, calls are acknowledged in order and never applied
// before the tick they were stamped for, and every prediction of the
// elevator in predicted time equals the server's state for that tick, to
// the millimeter, unless one of the client's calls came late (then the
// server applied it later, and the client could not know in time).
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes and runs for about 5 s")
	}
	t.Setenv(childEnv, "1")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errs bytes.Buffer
	if err := run(ctx, []string{"-projectiles", "3", "-duration", "90s"}, &out, &errs); err != nil {
		t.Fatalf("demo: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errs.String())
	}
	t.Logf("stdout:\n%s", out.String())
	var r result
	var found bool
	for l := range strings.Lines(out.String()) {
		if rest, ok := strings.CutPrefix(l, "client | result: "); ok {
			_, err := fmt.Sscanf(rest, "snapshots=%d compared=%d matched=%d calls=%d acked=%d late=%d unordered=%d shots=%d gaps=%d",
				&r.Snapshots, &r.Compared, &r.Matched, &r.Calls, &r.Acked, &r.Late, &r.Unordered, &r.Shots, &r.ShotsGap)
			if err != nil {
				t.Fatalf("result line %q: %v", l, err)
			}
			found = true
		}
	}
	if !found {
		t.Fatal("the client printed no result")
	}
	type ordering struct{ Shots, Gaps, Unordered int }
	if d := cmp.Diff(ordering{3, 0, 0}, ordering{r.Shots, r.ShotsGap, r.Unordered}); d != "" {
		t.Errorf("projectiles and acks (-want +got):\n%s", d)
	}
	if r.Compared == 0 {
		t.Error("no prediction was checked against the server's state")
	}
	if r.Acked > r.Calls {
		t.Errorf("%d acks for %d calls", r.Acked, r.Calls)
	}
	if r.Late == 0 && r.Matched != r.Compared {
		t.Errorf("%d of %d predictions differ from the server's state, with no call late", r.Compared-r.Matched, r.Compared)
	}
	if !strings.Contains(out.String(), "server | listening on 127.0.0.1:") {
		t.Error("the server did not say where it listens")
	}
}

// TestElevator steps the simulation through a call: it leaves at the next
// tick, moves a floor in 30 ticks, opens its doors for 30, and serves the
// queue in order; the building calls it when idle at a multiple of
// npcEvery.
func TestElevator(t *testing.T) {
	var e elevator
	if !e.call(2) || e.call(2) || e.call(0) || e.call(floors) {
		t.Fatalf("call: the first to floor 2 queues, a duplicate, the current floor and a missing one do not: %+v", e)
	}
	e.call(1)
	var trace []string
	for k := int64(1); k <= 200; k++ {
		before := e
		e.step(k)
		if e.Target != before.Target || (e.Doors > 0) != (before.Doors > 0) {
			trace = append(trace, fmt.Sprintf("%d: pos %d target %d doors %d queued %d", k, e.Pos, e.Target, e.Doors, e.N))
		}
	}
	want := []string{
		"1: pos 0 target 2 doors 0 queued 1",      // takes the first call
		"61: pos 6000 target 2 doors 30 queued 1", // two floors in 60 ticks, doors open
		"91: pos 6000 target 2 doors 0 queued 1",  // doors shut
		"92: pos 6000 target 1 doors 0 queued 0",  // takes the next call
		"122: pos 3000 target 1 doors 30 queued 0",
		"152: pos 3000 target 1 doors 0 queued 0",
	}
	if d := cmp.Diff(want, trace); d != "" {
		t.Errorf("trace (-want +got):\n%s", d)
	}
	// Idle at tick 180 (a multiple of npcEvery), it stays: the building's
	// call is to floor (180/90*3+1)%6 = 1, where it stands. At 270 it is
	// called to floor 4.
	e.step(270)
	e.step(271)
	if e.Target != 4 {
		t.Errorf("after tick 270: %+v, want called to floor 4", e)
	}
}

// TestMessages round-trips every message and rejects malformed ones.
func TestMessages(t *testing.T) {
	e := elevator{Pos: 4200, Target: 3, Doors: 7, N: 2, Queue: [maxQueue]int8{5, 1}}
	if got, err := parseSnapshot(e.append(nil)); err != nil || got != e {
		t.Errorf("snapshot: %+v, %v; want %+v", got, err, e)
	}
	s := shot{ID: 9, OriginMM: -3, Speed: -20}
	if got, err := parseShot(s.append(nil)); err != nil || got != s {
		t.Errorf("shot: %+v, %v", got, err)
	}
	c := call{Seq: 4, Floor: 2}
	if got, err := parseCall(c.append(nil)); err != nil || got != c {
		t.Errorf("call: %+v, %v", got, err)
	}
	a := ack{Seq: 4, Stamped: 100, Applied: 101}
	if got, err := parseAck(a.append(nil)); err != nil || got != a {
		t.Errorf("ack: %+v, %v", got, err)
	}
	for _, b := range [][]byte{nil, {msgSnapshot}, append(e.append(nil), 0), {msgShot, 1}, {msgCall}, {msgAck, 0}} {
		_, err1 := parseSnapshot(b)
		_, err2 := parseShot(b)
		_, err3 := parseCall(b)
		_, err4 := parseAck(b)
		if err1 == nil || err2 == nil || err3 == nil || err4 == nil {
			t.Errorf("%x: parsed (%v %v %v %v)", b, err1, err2, err3, err4)
		}
	}
}

// FuzzParse feeds the decoders anything: they must not panic, and what they
// accept re-encodes to the same bytes.
func FuzzParse(f *testing.F) {
	f.Add(elevator{Pos: 1, N: 1, Queue: [maxQueue]int8{2}}.append(nil))
	f.Add(shot{ID: 1}.append(nil))
	f.Add(call{Seq: 1}.append(nil))
	f.Add(ack{Seq: 1}.append(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		if e, err := parseSnapshot(b); err == nil && !bytes.Equal(e.append(nil), b) {
			t.Errorf("snapshot %x → %+v → %x", b, e, e.append(nil))
		}
		if s, err := parseShot(b); err == nil && !bytes.Equal(s.append(nil), b) {
			t.Errorf("shot %x", b)
		}
		if c, err := parseCall(b); err == nil && !bytes.Equal(c.append(nil), b) {
			t.Errorf("call %x", b)
		}
		if a, err := parseAck(b); err == nil && !bytes.Equal(a.append(nil), b) {
			t.Errorf("ack %x", b)
		}
	})
}

// TestFlags checks the flag errors.
func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"-server", "-client"}, {"-duration", "0s"}, {"-projectiles", "-1"}, {"extra"}} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) succeeded", args)
		}
	}
}

// An elevator called to floor 1 from the ground: it leaves at once and
// opens its doors there 30 ticks (1 s) later.
func Example() {
	var e elevator
	e.call(1)
	for k := int64(1); k <= 32; k++ {
		e.step(k)
		if k == 1 || k == 31 || k == 32 {
			fmt.Printf("tick %d: %.1f m, doors open %d more ticks\n", k, float64(e.Pos)/1000, e.Doors)
		}
	}
	// Output:
	// tick 1: 0.0 m, doors open 0 more ticks
	// tick 31: 3.0 m, doors open 30 more ticks
	// tick 32: 3.0 m, doors open 29 more ticks
}
