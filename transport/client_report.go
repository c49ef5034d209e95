package transport

import (
	"fmt"
	"time"

	"github.com/netclock/netclock/internal/debugpage"
	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/provider/clocksync"
)

// reportEvery is how often a client attaches its sync report to a ping
// and adds a sample to its own history.
const reportEvery = time.Second

// seenCounts are the values a client's events were last computed from.
type seenCounts struct {
	synced                          bool
	state                           clocksync.State
	resets, jumps, paths, reconnect int64
	epochs                          int64
}

// observe grades the connection before a ping, notes the client's events,
// and once a second records a history sample and returns the report the
// ping carries (nil otherwise). It runs on the ping goroutine and calls
// ClientConfig.OnQualityChange there, outside the lock.
func (c *Client) observe(l *link) *wire.Report {
	now := c.clock()
	var resets int64
	if sys := c.sys.Load(); sys != nil {
		resets = sys.Stats().Resets
	}
	ps := c.pc.Status()
	var lead, interp time.Duration
	if tp, ts, ok := c.pc.Targets(c.rate); ok {
		shared := c.pc.Estimate().ServerTime(now)
		lead = tp - ps.PredictedError - shared
		interp = shared - (ts - ps.ServerError)
	}

	c.mu.Lock()
	e := c.est.Estimate()
	es := c.est.Stats()
	synced := l.conn.Context().Err() == nil && e.Valid && now-c.heardAt <= c.silentAfter()
	// Graded from sync on (Synced: the start burst observed), when the
	// first estimates' wide bounds have narrowed.
	graded := e.Valid && c.sys.Load() != nil && !c.resyncing
	in := qualityInput{at: now, valid: graded, synced: synced, bound: e.ErrorBound, jitter: e.Jitter,
		loss: c.seq.recentLoss()}
	q, changed := c.meter.update(in)
	from := c.quality
	c.quality = q
	r := SyncReport{Synchronized: synced, State: c.est.State(), Quality: q, Loss: in.loss,
		ErrorBound: e.ErrorBound, Jitter: e.Jitter, Uplink: e.Uplink, Downlink: e.Downlink,
		Lead: lead, InterpolationDelay: interp, Offset: e.Offset, DriftPPM: e.DriftPPM,
		PredictedScale: ps.PredictedScale, ServerScale: ps.ServerScale, Resets: resets}
	seen := seenCounts{synced: synced, state: r.State, resets: resets, jumps: es.Jumps, paths: es.PathChanges,
		reconnect: c.reconnects, epochs: c.epochs}
	c.noteEventsLocked(seen, now)
	if changed {
		c.events.Add(debugpage.Event{T: now.Seconds(), What: fmt.Sprintf("quality %s → %s (bound %v, jitter %v, loss %.1f%%)",
			from, q, e.ErrorBound, e.Jitter, in.loss*100)})
	}
	var out *wire.Report
	if !c.reported || now >= c.nextReport { // the client clock may start below 0
		c.reported, c.nextReport = true, now+reportEvery
		w := r.wireReport()
		out = &w
		c.history.Add(r.sample(now.Milliseconds()))
	}
	c.mu.Unlock()

	if changed && c.cfg.OnQualityChange != nil {
		c.cfg.OnQualityChange(QualityChange{From: from, To: q, At: now, ErrorBound: in.bound, Jitter: in.jitter,
			Loss: in.loss, Synchronized: synced})
	}
	return out
}

// noteEventsLocked adds the events of what changed since the last call.
func (c *Client) noteEventsLocked(now seenCounts, at time.Duration) {
	was := c.seen
	c.seen = now
	add := func(format string, a ...any) {
		c.events.Add(debugpage.Event{T: at.Seconds(), What: fmt.Sprintf(format, a...)})
	}
	if now.synced != was.synced {
		if now.synced {
			add("synchronized")
		} else {
			add("not synchronized")
		}
	}
	if now.state != was.state {
		add("estimator %s → %s", was.state, now.state)
	}
	if d := now.resets - was.resets; d > 0 {
		add("%d reset(s) (%d in all)", d, now.resets)
	}
	if d := now.jumps - was.jumps; d > 0 {
		add("clock jump detected: estimator restarted")
	}
	if d := now.paths - was.paths; d > 0 {
		add("network path changed: offset held")
	}
	if d := now.reconnect - was.reconnect; d > 0 {
		add("reconnected")
	}
	if d := now.epochs - was.epochs; d > 0 {
		add("the server restarted (new epoch)")
	}
}

// connectionLost grades the connection Poor (Unknown if it was not synced)
// while the client reconnects or after it stopped: no ping runs then to
// grade it. It runs on the supervising goroutine, after the link's
// goroutines ended, so OnQualityChange is never called concurrently.
func (c *Client) connectionLost() {
	now := c.clock()
	c.mu.Lock()
	e := c.est.Estimate()
	in := qualityInput{at: now, valid: e.Valid && c.sys.Load() != nil && !c.resyncing, bound: e.ErrorBound,
		jitter: e.Jitter, loss: c.seq.recentLoss()}
	from := c.quality
	q, changed := c.meter.update(in)
	c.quality = q
	if changed {
		c.events.Add(debugpage.Event{T: now.Seconds(), What: fmt.Sprintf("quality %s → %s: connection lost", from, q)})
	}
	c.mu.Unlock()
	if changed && c.cfg.OnQualityChange != nil {
		c.cfg.OnQualityChange(QualityChange{From: from, To: q, At: now, ErrorBound: in.bound, Jitter: in.jitter,
			Loss: in.loss})
	}
}
