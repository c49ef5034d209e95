package transport

import (
	"fmt"
	"testing"
	"time"

	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/provider/clocksync"
	"github.com/netclock/netclock/ticksys"
)

// TestServerStallNoReset stops the server under a synced client, as
// SIGSTOP, a VM migration or a long GC would: the client keeps pinging
// into the silence, and on resume the server answers the queued pings at
// once, or over a while when it is busy catching up. Their round trips
// measure the stall, not the path: the estimate must not move and the
// System must not be reset. The bench (bench/attack -scenario pause) saw
// such a queue lift the uplink estimate by 480 ms and the predicted time
// jump by half a second.
func TestServerStallNoReset(t *testing.T) {
	for _, tc := range []struct {
		name     string
		baseline time.Duration // of steady pings before the stall
		pause    time.Duration
		drain    time.Duration // how long the server takes to answer the queue
	}{
		{"1.5s pause", 10 * time.Second, 1500 * time.Millisecond, 0},
		{"5s pause, busy drain", 10 * time.Second, 5 * time.Second, 1500 * time.Millisecond},
		{"10s pause", 10 * time.Second, 10 * time.Second, 0},
		{"10s pause after a minute", time.Minute, 10 * time.Second, 0},
		{"30s pause", 10 * time.Second, 30 * time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			var now time.Duration
			c := newBareClient(t, &logs, func() time.Duration { return now })
			const offset, up, down = 3 * time.Second, 400 * time.Microsecond, 300 * time.Microsecond
			const interval = 100 * time.Millisecond
			var hard []ticksys.ResetEvent
			advance := func() { // a game loop's frame, if synced
				if sys := c.System(); sys != nil {
					sys.Advance(0)
				}
			}
			ping := func() (seq uint32, t1 time.Duration) {
				c.mu.Lock()
				defer c.mu.Unlock()
				return c.notePingLocked(now), now
			}
			pong := func(seq uint32, t1, t2 time.Duration) { // answered at server time t2
				c.handlePong(wire.AppendPong(nil, wire.Pong{Seq: seq, ClientSend: t1, ServerReceive: t2,
					ServerSend: t2}), now)
			}
			steady := func(d time.Duration) { // exact round trips at 10 Hz
				for end := now + d; now < end; {
					seq, t1 := ping()
					now += up + down
					pong(seq, t1, t1+offset+up)
					advance()
					now = t1 + interval
					advance()
				}
			}
			steady(tc.baseline)
			if c.System() == nil {
				t.Fatal("not synced")
			}
			c.System().OnReset(func(ev ticksys.ResetEvent) {
				if ev.Reason == ticksys.ReasonHardReset {
					hard = append(hard, ev)
				}
			})
			before := c.Estimate()

			// The server stops: pings go out, nothing comes back.
			type queued struct {
				seq    uint32
				t1     time.Duration
				landed time.Duration // client clock when it reached the server
			}
			var queue []queued
			for end := now + tc.pause; now < end; now += interval {
				seq, t1 := ping()
				queue = append(queue, queued{seq, t1, t1 + up})
				advance()
			}
			// It resumes and answers the queue, in order, over tc.drain.
			resumed := now
			for i, q := range queue {
				answered := resumed + tc.drain*time.Duration(i)/time.Duration(len(queue))
				now = answered + down
				pong(q.seq, q.t1, answered+offset)
				advance()
			}
			steady(10 * time.Second)

			after, st := c.Estimate(), c.Stats()
			t.Logf("%d pings queued; uplink %v → %v, RTT %v → %v, offset %v → %v; %d hard resets; stats %+v",
				len(queue), before.Uplink, after.Uplink, before.RTT(), after.RTT(), before.Offset, after.Offset,
				len(hard), st)
			if len(hard) != 0 {
				t.Errorf("%d hard resets, want none: %s", len(hard), describe(hard))
			}
			if d := after.Uplink - up; abs(d) > time.Millisecond {
				t.Errorf("uplink estimate %v after the stall, want %v within 1ms", after.Uplink, up)
			}
			if d := after.Offset - offset; abs(d) > time.Millisecond {
				t.Errorf("offset estimate %v after the stall, want %v within 1ms", after.Offset, offset)
			}
			if st.Stalled+st.Stale != int64(len(queue)) || st.Rejected != 0 {
				t.Errorf("%d pongs counted stalled, %d stale, %d rejected; want the %d queued stalled or stale, none rejected",
					st.Stalled, st.Stale, st.Rejected, len(queue))
			}
		})
	}
}

// TestSlowerPathFollowed: a path that turns slow for good (a reroute
// adding 1.2 s one way) also goes silent for longer than a second, but
// only the pings in flight when its first pong comes are set aside: the
// estimate follows the path as an estimator fed every sample does.
func TestSlowerPathFollowed(t *testing.T) {
	var logs logBuffer
	var now time.Duration
	c := newBareClient(t, &logs, func() time.Duration { return now })
	ref, err := clocksync.New(clocksync.Config{}) // fed every sample
	if err != nil {
		t.Fatal(err)
	}
	const offset, down, interval = 3 * time.Second, 300 * time.Microsecond, 100 * time.Millisecond
	up := 400 * time.Microsecond
	type inFlight struct {
		seq        uint32
		t1, landed time.Duration
	}
	var flight []inFlight
	// Every interval a ping goes out; pongs come back as they land.
	run := func(d time.Duration) {
		for end := now + d; now < end; now += time.Millisecond {
			if now%interval == 0 {
				c.mu.Lock()
				seq := c.notePingLocked(now)
				c.mu.Unlock()
				flight = append(flight, inFlight{seq, now, now + up + down})
			}
			for len(flight) > 0 && flight[0].landed <= now {
				f := flight[0]
				flight = flight[1:]
				t2 := f.t1 + up + offset
				c.handlePong(wire.AppendPong(nil, wire.Pong{Seq: f.seq, ClientSend: f.t1, ServerReceive: t2,
					ServerSend: t2}), now)
				if err := ref.Observe(provider.Sample{ClientSend: f.t1, ServerReceive: t2, ServerSend: t2,
					ClientReceive: now}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	run(10 * time.Second)
	up += 1200 * time.Millisecond
	run(60 * time.Second)
	e, want, st := c.Estimate(), ref.Estimate(), c.Stats()
	t.Logf("RTT %v (every sample: %v, the path: %v), offset %v (%v); stats %+v", e.RTT(), want.RTT(), up+down,
		e.Offset, want.Offset, st)
	if abs(e.RTT()-want.RTT()) > time.Millisecond || abs(e.Offset-want.Offset) > time.Millisecond {
		t.Errorf("RTT %v, offset %v; want %v, %v (an estimator fed every sample) within 1ms",
			e.RTT(), e.Offset, want.RTT(), want.Offset)
	}
	if e.RTT() < time.Second { // it has followed the path, not stayed at 0.7 ms
		t.Errorf("RTT estimate %v, want the slower path's (%v)", e.RTT(), up+down)
	}
	if st.Stalled > 13 {
		t.Errorf("%d pongs set aside as stalled, want at most the 13 in flight when the first slow one came", st.Stalled)
	}
}

func describe(evs []ticksys.ResetEvent) string {
	s := ""
	for _, ev := range evs {
		s += fmt.Sprintf("[predicted %v → %v] ", ev.OldPredicted, ev.NewPredicted)
	}
	return s
}
