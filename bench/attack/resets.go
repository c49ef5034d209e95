package main

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/netclock/netclock/ticksys"
	"github.com/netclock/netclock/transport"
)

// resetTally counts a good client's reset events by reason, and the
// largest jump of its predicted time, so a report tells a hard reset (the
// provider stepped time) from a stall (the client's own loop was not
// scheduled for more than the catch-up cap) or a reinitialization (a
// restarted server).
type resetTally struct {
	mu       sync.Mutex
	byReason map[ticksys.Reason]int64
	maxJump  time.Duration // |NewPredicted − OldPredicted| of hard resets
	maxStall time.Duration // predicted time covered by a stall's Advance
}

// tallies holds the tally of every good client, by client.
var tallies sync.Map // *transport.Client → *resetTally

// tallyResets subscribes to c's reset events; c must be synced. With log
// set, each event is logged there with the client's estimate after it.
func tallyResets(c *transport.Client, i int, log *slog.Logger) {
	t := &resetTally{byReason: map[ticksys.Reason]int64{}}
	tallies.Store(c, t)
	c.System().OnReset(func(ev ticksys.ResetEvent) {
		jump := ev.NewPredicted.Sub(ev.OldPredicted)
		t.mu.Lock()
		t.byReason[ev.Reason]++
		switch ev.Reason {
		case ticksys.ReasonHardReset:
			t.maxJump = max(t.maxJump, jump, -jump)
		case ticksys.ReasonStall:
			t.maxStall = max(t.maxStall, jump)
		}
		t.mu.Unlock()
		if log != nil {
			e, st := c.Estimate(), c.Stats()
			log.Warn("good client reset", "client", i, "reason", ev.Reason.String(), "skipped", ev.Skipped,
				"predicted_jump", jump, "server_jump", ev.NewServer.Sub(ev.OldServer),
				"offset", e.Offset, "uplink", e.Uplink, "downlink", e.Downlink, "error_bound", e.ErrorBound,
				"path_changes", st.PathChanges, "clock_jumps", st.ClockJumps, "rejected", st.Rejected)
		}
	})
}

// resetSummary sums the tallies of cs: "hard H (max jump J), stall S (max
// P), reinit R".
func resetSummary(cs []*transport.Client) string {
	var hard, stall, reinit int64
	var jump, stallLen time.Duration
	for _, c := range cs {
		v, ok := tallies.Load(c)
		if !ok {
			continue
		}
		t := v.(*resetTally)
		t.mu.Lock()
		hard += t.byReason[ticksys.ReasonHardReset]
		stall += t.byReason[ticksys.ReasonStall]
		reinit += t.byReason[ticksys.ReasonReinitialize]
		jump, stallLen = max(jump, t.maxJump), max(stallLen, t.maxStall)
		t.mu.Unlock()
	}
	return fmt.Sprintf("hard %d (max jump %v), stall %d (max %v), reinit %d",
		hard, jump.Round(time.Millisecond), stall, stallLen.Round(time.Millisecond), reinit)
}
