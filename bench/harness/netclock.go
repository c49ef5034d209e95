package harness

import (
	"fmt"
	"time"

	"github.com/netclock/netclock/internal/pingspread"
	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/provider/clocksync"
	"github.com/netclock/netclock/ticksys"
)

// Ping schedule of netclock in the harness (and the transport's defaults).
const (
	BurstPings    = 10                     // pings at connect
	BurstInterval = 20 * time.Millisecond  // between the connect burst's pings
	PingInterval  = 100 * time.Millisecond // steady state: 10 Hz
	TickRate      = 60
	kindPing      = 1
	kindPong      = 2
	netclockName  = "netclock"
)

// Netclock returns netclock's own system: the clocksync estimator feeding
// provider.Steered, driving a ticksys.System, over the harness's network,
// pinging as the transport does: BurstPings pings BurstInterval apart at
// connect, then every PingInterval, each interval spread by up to a tenth
// of it either way (the transport's default PingSpread), on a timer of
// true time (see Pacer).
func Netclock() System { return system(netclockName, KindNetclock, PingInterval, newNetclock) }

// NetclockEvery is Netclock with another steady ping interval, named
// "netclock@interval", for choosing the default.
func NetclockEvery(interval time.Duration) System {
	s := Netclock().WithPing(interval)
	if interval != PingInterval {
		s.Name = fmt.Sprintf("%s@%v", netclockName, interval)
	}
	return s
}

func newNetclock(interval time.Duration, toServer, toClient Link) (Client, Server) {
	c := &ncClient{toServer: toServer, interval: interval}
	c.est, _ = clocksync.New(clocksync.Config{})
	// Fixed buffers: the clock's figures, and the netclock-fixed buffer
	// model, are of netclock's fixed defaults; the adaptive buffers are
	// measured as a buffer model of their own (see BufferModels).
	c.prov, _ = provider.NewSteered(provider.SteeredConfig{Clock: func() time.Duration { return c.now },
		Buffers: provider.FixedBuffers{}})
	return c, &echoServer{toClient: toClient}
}

// echoServer answers each ping at once, stamped on arrival and departure
// (the transport stamps per datagram, never per tick).
type echoServer struct{ toClient Link }

func (s *echoServer) Frame(time.Duration) {}

func (s *echoServer) Receive(m Msg, now time.Duration) {
	if m.Kind != kindPing {
		return
	}
	s.toClient.Send(Msg{Kind: kindPong, Seq: m.Seq, T1: m.T1, T2: now, T3: now})
}

type ncClient struct {
	toServer Link
	interval time.Duration
	est      *clocksync.Estimator
	prov     *provider.Steered
	sys      *ticksys.System

	now    time.Duration // the client clock, for the provider
	seq    uint64
	resets int

	firstPong time.Duration
	srtt      time.Duration // smoothed RTT (1/8 gain), for the buffer models
	// samples are the accepted samples since the buffer models' last
	// frame, kept only if collect (a run with Buffers).
	samples []provider.Sample
	collect bool
}

// Ping implements Pacer: the connect burst, then the steady interval.
func (c *ncClient) Ping(now time.Duration) time.Duration {
	c.now = now
	c.seq++
	c.toServer.Send(Msg{Kind: kindPing, Seq: c.seq, T1: now})
	if c.seq < BurstPings {
		return BurstInterval
	}
	return c.interval + pingspread.Offset(c.seq, c.interval/pingSpreadDiv)
}

// pingSpreadDiv: the steady pings spread by a tenth of their interval, as
// the transport's do by default (ClientConfig.PingSpread).
const pingSpreadDiv = 10

func (c *ncClient) Frame(now, dt time.Duration) {
	c.now = now
	if c.sys != nil {
		c.sys.Advance(dt)
	}
}

func (c *ncClient) Receive(m Msg, now time.Duration) {
	c.now = now
	if m.Kind != kindPong {
		return
	}
	if c.firstPong == 0 {
		c.firstPong = now
	}
	s := provider.Sample{ClientSend: m.T1, ServerReceive: m.T2, ServerSend: m.T3, ClientReceive: now}
	if rtt := now - m.T1 - (m.T3 - m.T2); c.srtt == 0 {
		c.srtt = rtt
	} else {
		c.srtt += (rtt - c.srtt) / 8
	}
	if c.est.Observe(s) != nil {
		return
	}
	if c.collect {
		c.samples = append(c.samples, s)
	}
	c.prov.SetEstimate(c.est.Estimate())
	// Start the tick system once the connect burst has been observed (or
	// a second has passed), so it starts from a settled estimate instead
	// of slewing away from the first sample's error.
	if c.sys == nil && (c.est.Stats().Samples >= BurstPings || now-c.firstPong >= time.Second) {
		// Start the tick system once there is an estimate to start from.
		c.sys, _ = ticksys.New(ticksys.Config{TickRate: TickRate, Provider: c.prov})
		c.sys.OnReset(func(ev ticksys.ResetEvent) {
			if ev.Reason == ticksys.ReasonHardReset {
				c.resets++
			}
		})
	}
}

// Timeline is the predicted timeline, whose rate is the tick rate the game
// sees.
func (c *ncClient) Timeline(now time.Duration) time.Duration {
	if c.sys == nil {
		return now
	}
	return c.sys.PredictedTime().Duration()
}

// Shared is netclock's shared time: the estimate's server clock now, what
// the transport answers "how long ago was this stamp" with. The tick
// timelines are slewed toward targets derived from it; their smoothness is
// measured through Timeline.
func (c *ncClient) Shared(now time.Duration) time.Duration {
	if c.sys == nil {
		return now
	}
	return c.prov.Estimate().ServerTime(now)
}

// Bound is the estimator's error bound.
func (c *ncClient) Bound(now time.Duration) (time.Duration, bool) {
	if c.sys == nil {
		return 0, false
	}
	return c.prov.Estimate().BoundAt(now), true
}

// Resets implements Resetter.
func (c *ncClient) Resets() int { return c.resets }

// Resetter is implemented by clients that count hard resets (snaps).
type Resetter interface {
	// Resets returns the hard resets so far.
	Resets() int
}

// Timeliner is implemented by clients whose ticks follow a timeline other
// than Shared (netclock's predicted time runs a lead ahead of it). The
// delivered rate is measured on it; without it, on Shared.
type Timeliner interface {
	// Timeline returns the timeline's reading at the client clock
	// reading now, as Shared does.
	Timeline(now time.Duration) time.Duration
}
