package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/netclock/netclock/transport"
)

// serverOpts configure a load server (netclock or bare echo).
type serverOpts struct {
	echo    bool
	addr    string
	certOut string // write the dev certificate here (PEM), if set
	// expect starts the measurement window once that many clients are
	// connected (0: at once); start (if not nil) starts it too, and so
	// does expectTimeout passing.
	expect        int
	start         <-chan struct{}
	expectTimeout time.Duration
	// warmup is waited between the trigger and the window; duration is
	// the window (0: until ctx ends).
	warmup, duration time.Duration
	maxClients       int
	// residence wraps the socket to time pings through the server.
	residence        bool
	pingMin, pongMin int
	// idle is how long the server's CPU use without clients is measured
	// before it reports ready.
	idle time.Duration
	// ready is called once the server listens and its idle memory is
	// measured, with its address.
	ready func(addr string)
}

// ServerCounts are a server's running counts.
type ServerCounts struct {
	Clients  int   `json:"clients"`  // connected now
	Accepted int64 `json:"accepted"` // handshakes that succeeded
	Refused  int64 `json:"refused"`  // handshakes refused
	Failed   int64 `json:"failed"`   // connections dropped before a valid hello
	Pings    int64 `json:"pings"`    // pings answered
}

// MemReport is the memory at idle (no client) and with the window's
// clients connected (pinging at their steady rate), and the difference
// per connection. Every snapshot follows a forced GC and scavenge.
type MemReport struct {
	Before MemSnapshot `json:"before"`       // idle, no client
	With   MemSnapshot `json:"with_clients"` // the window's clients connected
	Conns  int         `json:"conns"`        // connections in With
	// Per connection: (With − Before) / Conns.
	PerConnHeapBytes      float64 `json:"per_conn_heap_bytes"`
	PerConnHeapStackBytes float64 `json:"per_conn_heap_stack_bytes"`
	PerConnRSSBytes       float64 `json:"per_conn_rss_bytes"`
	PerConnGoroutines     float64 `json:"per_conn_goroutines"`
}

// ServerReport is what a server mode prints.
type ServerReport struct {
	Mode string `json:"mode"` // "netclock" or "echo"
	Addr string `json:"addr"` // the address it listened on
	// Expect is the client count that starts the window; ExpectTimedOut
	// whether it started without them.
	Expect         int  `json:"expect"`
	ExpectTimedOut bool `json:"expect_timed_out,omitempty"`
	// WindowStarted is false if the run ended before the window.
	WindowStarted bool    `json:"window_started"`
	WindowS       float64 `json:"window_s"`
	// Start and End are the counts at the window's edges (Stats for
	// netclock, the echo server's own counts otherwise).
	Start ServerCounts `json:"at_window_start"`
	End   ServerCounts `json:"at_window_end"`
	// Pings is the pings answered in the window, PingRate per second; CPU
	// the server's CPU time in the window, PerPingUS per ping.
	Pings     int64     `json:"pings"`
	PingRate  float64   `json:"ping_rate_hz"`
	CPU       CPUReport `json:"cpu"`
	PerPingUS float64   `json:"cpu_per_ping_us"`
	// IdleCPU is the CPU use with no client (the tick loop, the runtime),
	// measured for -idle before the clients; PerPingNetUS is PerPingUS
	// without it.
	IdleCPU      float64   `json:"idle_cpu_utilization"`
	PerPingNetUS float64   `json:"cpu_per_ping_net_of_idle_us"`
	Mem          MemReport `json:"mem"`
	// In the window: the server's GC, and the whole machine's CPU.
	GC      GCReport   `json:"gc"`
	Machine MachineCPU `json:"machine_cpu"`
	// Residence is set with -residence.
	Residence *ResidenceReport `json:"residence,omitempty"`
	// NetclockStats is transport's ServerStats at the window's end.
	NetclockStats *transport.ServerStats `json:"netclock_stats,omitempty"`
	// Notes say what the numbers do not.
	Notes []string `json:"notes,omitempty"`
}

// loadServer is the part of a netclock or echo server the load run uses.
type loadServer interface {
	Serve(ctx context.Context) error
	Close() error
	counts() ServerCounts
	// started reports whether Serve is serving.
	started() bool
}

type netclockServer struct{ *transport.Server }

func (s netclockServer) counts() ServerCounts {
	st := s.Stats()
	return ServerCounts{Clients: st.Clients, Accepted: st.Accepted, Refused: st.Refused,
		Failed: st.Failed + st.ALPNMismatches, Pings: st.Pings}
}

// started: the server clock starts (Now leaves Start, 0) when Serve runs.
func (s netclockServer) started() bool { return s.SharedTime() > 0 }

// runServer runs a server until its window ends (or ctx ends) and returns
// its report.
func runServer(ctx context.Context, o serverOpts) (*ServerReport, error) {
	cert, err := transport.DevCertificate()
	if err != nil {
		return nil, err
	}
	if o.certOut != "" {
		if err := os.WriteFile(o.certOut, cert.CertPEM, 0o644); err != nil {
			return nil, err
		}
	}
	laddr, err := net.ResolveUDPAddr("udp", o.addr)
	if err != nil {
		return nil, err
	}
	udp, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return nil, err
	}
	defer udp.Close()
	var pc net.PacketConn = udp
	var rc *residenceConn
	if o.residence {
		pongMin := o.pongMin
		if pongMin == 0 {
			pongMin = 52 // a 30-byte pong in a 1-RTT packet: 54 bytes
			if o.echo {
				pongMin = 36 // the 14-byte echo: 38 bytes
			}
		}
		pingMin := o.pingMin
		if pingMin == 0 {
			pingMin = 36 // a 14-byte ping behind a 4-byte connection ID: 38 bytes
			if !o.echo {
				pingMin = 48 // netclock's server issues 16-byte connection IDs: 50 bytes
			}
		}
		rc = newResidenceConn(udp, pingMin, pongMin)
		pc = rc
	}

	rep := &ServerReport{Mode: "netclock", Addr: udp.LocalAddr().String(), Expect: o.expect}
	var srv loadServer
	if o.echo {
		rep.Mode = "echo"
		es, err := newEchoServer(pc, cert.ServerTLS())
		if err != nil {
			return nil, err
		}
		srv = es
	} else {
		ns, err := transport.NewServer(pc, transport.ServerConfig{TLSConfig: cert.ServerTLS(), MaxClients: o.maxClients,
			// Every load client dials from loopback, and the tool measures
			// the transport, not its admission control.
			MaxClientsPerSource: -1, HandshakeRate: -1})
		if err != nil {
			return nil, err
		}
		srv = netclockServer{ns}
	}
	defer srv.Close()
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(sctx) }()
	if !pollUntil(ctx, time.Millisecond, 10*time.Second, srv.started) {
		return nil, errors.New("server did not start serving")
	}
	if o.idle > 0 {
		idle := markCPU()
		if wait(ctx, o.idle) {
			r, _ := idle.since()
			rep.IdleCPU = r.Utilization
		}
	}
	rep.Mem.Before = memSnapshot()
	if o.ready != nil {
		o.ready(rep.Addr)
	}

	// The trigger: expect clients, the start signal, or the timeout.
	reached := func() bool { return o.expect <= 0 || srv.counts().Clients >= o.expect }
	trigger := make(chan struct{})
	go func() {
		defer close(trigger)
		tctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-o.start:
				cancel()
			case <-tctx.Done():
			}
		}()
		if !pollUntil(tctx, 5*time.Millisecond, o.expectTimeout, reached) && ctx.Err() == nil && tctx.Err() == nil {
			rep.ExpectTimedOut = true
		}
	}()
	<-trigger
	if ctx.Err() != nil || !wait(ctx, o.warmup) {
		rep.Notes = append(rep.Notes, "ended before the measurement window")
		return rep, nil
	}
	if rep.ExpectTimedOut {
		rep.Notes = append(rep.Notes, fmt.Sprintf("only %d of %d clients connected before -expect-timeout",
			srv.counts().Clients, o.expect))
	}

	// The window.
	rep.Mem.With = memSnapshot()
	rep.Start = srv.counts()
	if rc != nil {
		rc.on.Store(true)
	}
	gc0 := gcMark()
	stat0, _ := readStat()
	cpu := markCPU()
	if o.duration > 0 {
		wait(ctx, o.duration)
	} else {
		<-ctx.Done()
	}
	var wall time.Duration
	rep.CPU, wall = cpu.since()
	rep.Machine = stat0.since()
	rep.GC = gcSince(gc0)
	if rc != nil {
		rc.on.Store(false)
	}
	rep.End = srv.counts()
	rep.WindowStarted = true
	rep.WindowS = wall.Seconds()
	rep.Pings = rep.End.Pings - rep.Start.Pings
	if wall > 0 {
		rep.PingRate = float64(rep.Pings) / wall.Seconds()
	}
	if rep.Pings > 0 {
		rep.PerPingUS = rep.CPU.TotalS * 1e6 / float64(rep.Pings)
		rep.PerPingNetUS = (rep.CPU.TotalS - rep.IdleCPU*wall.Seconds()) * 1e6 / float64(rep.Pings)
	}
	m := &rep.Mem
	m.Conns = rep.Start.Clients
	if m.Conns > 0 {
		n := float64(m.Conns)
		m.PerConnHeapBytes = (float64(m.With.HeapInuse) - float64(m.Before.HeapInuse)) / n
		m.PerConnHeapStackBytes = (float64(m.With.HeapInuse+m.With.StackInuse) -
			float64(m.Before.HeapInuse+m.Before.StackInuse)) / n
		m.PerConnRSSBytes = float64(m.With.RSS-m.Before.RSS) / n
		m.PerConnGoroutines = float64(m.With.Goroutines-m.Before.Goroutines) / n
	}
	if ns, ok := srv.(netclockServer); ok {
		st := ns.Stats()
		rep.NetclockStats = &st
	}
	if rc != nil {
		rep.Residence = rc.report()
	}
	stop()
	select {
	case err := <-serveErr:
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, transport.ErrServerClosed) {
			rep.Notes = append(rep.Notes, "serve: "+err.Error())
		}
	case <-time.After(30 * time.Second):
		rep.Notes = append(rep.Notes, "serve did not return within 30 s of the end")
	}
	return rep, nil
}
