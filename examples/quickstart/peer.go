package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync/atomic"
	"time"

	"github.com/netclock/netclock/bench/jitnet"
	"github.com/netclock/netclock/netsim"
	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/ticksys"
	"github.com/netclock/netclock/transport"
)

// peer is one emulated client.
type peer struct {
	profile netsim.Profile
	conn    *netsim.Conn
	clock   func() time.Duration // the client clock: the profile's offset, drift, jumps
	start   time.Time            // the profile's true time 0
	jit     *jitnet.Client       // the game streams

	client   atomic.Pointer[transport.Client] // nil until dialed
	syncedAt atomic.Int64                     // since start, ns; -1 until synced
	resets   atomic.Int64
	err      error // why the client failed; read after run returns

	// Written by the monitor goroutine only.
	last     time.Duration // the latest true error
	lastBnd  time.Duration // the bound at the latest sample
	live     agreement     // since sync
	steady   agreement     // after the warm-up
	errs     []float64     // |true error| ms after the warm-up
	bounds   []float64     // the bound, ms, after the warm-up
	lastBad  time.Duration // the latest sample with |true error| > convergeWithin
	lastT    time.Duration // the latest sample
	everBad  bool
	sampled  bool
	hasFinal bool
	final    transport.ClientStats // taken when the run ends, before Close
}

// agreement counts samples: those where the client's current tick (of its
// SharedTime) was the server's, and those where the true error was within
// the bound the client published.
type agreement struct {
	samples, sameTick, inBound int
}

func (a *agreement) add(same, in bool) {
	a.samples++
	if same {
		a.sameTick++
	}
	if in {
		a.inBound++
	}
}

// pct returns n as a percentage of the samples; NaN if there are none.
func (a agreement) pct(n int) float64 {
	if a.samples == 0 {
		return nan
	}
	return 100 * float64(n) / float64(a.samples)
}

// newPeer opens the client's socket behind the profile's links and builds
// its clock on the same time line, so clock jumps and link changes happen
// when the profile says.
func newPeer(p netsim.Profile, seed uint64) (*peer, error) {
	s := p.Server
	if s.Offset != 0 || s.DriftPPM != 0 || len(s.Jumps) > 0 || len(s.Slews) > 0 {
		return nil, fmt.Errorf("profile %s: a server clock model is not supported (the server clock is the real one)", p.Name)
	}
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	conn, err := netsim.NewConn(udp, p, seed)
	if err != nil {
		udp.Close()
		return nil, err
	}
	clock, err := netsim.NewWallClockAt(p.Client, conn.Start())
	if err != nil {
		conn.Close()
		return nil, err
	}
	pr := &peer{profile: p, conn: conn, clock: clock, start: conn.Start(), jit: jitnet.NewClient()}
	pr.syncedAt.Store(-1)
	return pr, nil
}

// run dials, waits for sync and runs the client's tick system until ctx
// ends.
func (p *peer) run(ctx context.Context, addr net.Addr, dev transport.DevCert, log *slog.Logger) {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	c, err := transport.DialConn(dctx, p.conn, addr, transport.ClientConfig{
		TLSConfig: dev.ClientTLS(), // trusts exactly the server's certificate
		Provider:  provider.SteeredConfig{Clock: p.clock},
		Logger:    log,
		OnMessage: p.jit.OnMessage,
	})
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			p.err = err
		}
		return
	}
	p.client.Store(c)
	sys, err := c.WaitSynced(ctx)
	if err != nil {
		if ctx.Err() == nil {
			p.err = err // the client stopped
		}
		return
	}
	p.syncedAt.Store(int64(time.Since(p.start)))
	// Subscribed before Run advances the System, so no reset is missed.
	sys.OnReset(func(ev ticksys.ResetEvent) {
		p.resets.Add(1)
		log.Warn("reset", "reason", ev.Reason.String(), "skipped", ev.Skipped)
	})
	if err := p.jit.Start(c, sys); err != nil {
		p.err = err
		return
	}
	if err := c.Run(ctx); err != nil && ctx.Err() == nil {
		p.err = err
	}
}

// trueError reads the client's estimate of the server clock and the server
// clock back to back, and returns the error and the server clock. The
// server clock is read before and after and the midpoint used, so the
// reads' own cost cancels; a read pair split by a preemption is retried,
// since its truth is uncertain by the gap.
func trueError(c *transport.Client, srv *transport.Server) (e, server time.Duration, ok bool) {
	for try := 0; ; try++ {
		before := srv.SharedTime()
		shared, ok := c.SharedTime()
		after := srv.SharedTime()
		if !ok {
			return 0, 0, false
		}
		if gap := after - before; gap < 50*time.Microsecond || try == 2 {
			server = before + gap/2
			return shared - server, server, true
		}
	}
}

// sample records one sample, counting an unsynced client as far off (as
// the harness does) for the convergence time.
func (p *peer) sample(srv *transport.Server, warmup time.Duration) {
	t := time.Since(p.start)
	p.sampled, p.lastT = true, t
	c := p.client.Load()
	var e, server time.Duration
	ok := c != nil && p.syncedAt.Load() >= 0
	if ok {
		e, server, ok = trueError(c, srv)
	}
	if !ok {
		p.lastBad, p.everBad = t, true
		return
	}
	// The bound of the client's SharedTime now: the estimate's, widened
	// for the time since its last sample.
	bound := c.Estimate().BoundAt(c.Clock())
	rate := srv.TickRate()
	same := nettime.New(rate, server+e).Tick() == nettime.New(rate, server).Tick()
	in := e.Abs() <= bound
	p.last, p.lastBnd = e, bound
	p.live.add(same, in)
	abs := e.Abs()
	if abs > convergeWithin {
		p.lastBad, p.everBad = t, true
	}
	if t >= warmup {
		p.errs = append(p.errs, ms(abs))
		p.bounds = append(p.bounds, ms(bound))
		p.steady.add(same, in)
	}
}

// monitor samples every client 60 times a second on average and, unless
// -json, prints the live table once a second, until ctx ends. The samples
// are spaced at random (uniformly within ±50%), so they fall anywhere in a
// tick: at a fixed 60 Hz they would lock to one phase of the 60 Hz ticks,
// and how often the client names the server's tick would depend on how
// close to a tick boundary that phase is.
func monitor(ctx context.Context, srv *transport.Server, peers []*peer, opt options, w io.Writer) {
	start := time.Now()
	rng := rand.New(rand.NewPCG(opt.seed, 1))
	next := func() time.Duration { return sampleEvery/2 + time.Duration(rng.Int64N(int64(sampleEvery))) }
	samples := time.NewTimer(next())
	defer samples.Stop()
	table := time.NewTicker(time.Second)
	defer table.Stop()
	for {
		select {
		case <-ctx.Done():
			// The final state, before the clients close.
			for _, p := range peers {
				if c := p.client.Load(); c != nil {
					p.final, p.hasFinal = c.Stats(), true
				}
			}
			return
		case <-samples.C:
			for _, p := range peers {
				p.sample(srv, opt.warmup)
			}
			samples.Reset(next())
		case <-table.C:
			if !opt.json {
				printTable(w, time.Since(start), srv, peers)
			}
		}
	}
}
