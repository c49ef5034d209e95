package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/netclock/netclock/ticksys"
	"github.com/netclock/netclock/transport"
)

// pendingCall is a call waiting for the tick it was stamped for.
type pendingCall struct {
	from  transport.ClientID
	call  call
	stamp int64 // the tick it was stamped for
}

// server is the authority: it simulates the elevator at each tick,
// applies each call in the tick it was stamped for (or the next one to
// simulate, if it came late), and sends every client the elevator after
// each tick and each projectile it fires.
type server struct {
	srv *transport.Server
	out io.Writer

	mu      sync.Mutex
	pending []pendingCall
	lift    elevator
	last    int64 // the last tick simulated
	started bool
	shots   uint32
}

func runServer(ctx context.Context, o options, stdout io.Writer) error {
	dev, err := transport.DevCertificate()
	if err != nil {
		return err
	}
	// The client, another process, pins this certificate.
	if err := os.WriteFile(o.cert, dev.CertPEM, 0o600); err != nil {
		return err
	}
	srv, err := transport.Listen(o.addr, transport.ServerConfig{TickRate: tickRate, TLSConfig: dev.ServerTLS()})
	if err != nil {
		return err
	}
	defer srv.Close()
	s := &server{srv: srv, out: stdout}
	srv.OnMessage(s.receive)
	srv.System().OnNetworkTick(s.tick)
	fmt.Fprintf(stdout, "listening on %s (%d Hz); certificate in %s\n", srv.Addr(), srv.TickRate(), o.cert)
	if err := srv.Serve(ctx); !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// receive takes a client's call; it runs on the server's goroutines.
func (s *server) receive(id transport.ClientID, m transport.Message) {
	c, err := parseCall(m.Payload)
	if err != nil {
		fmt.Fprintf(s.out, "client %d: %v\n", id, err)
		return
	}
	stamp := m.Stamp.Tick()      // the client's predicted tick: when to apply it
	age, _ := s.srv.Age(m.Stamp) // negative: how long before its tick it came
	fmt.Fprintf(s.out, "call %d to floor %d from client %d for tick %d arrived %.1f ms before it\n",
		c.Seq, c.Floor, id, stamp, ms(-age))
	s.mu.Lock()
	s.pending = append(s.pending, pendingCall{from: id, call: c, stamp: stamp})
	s.mu.Unlock()
}

// tick simulates the ticks up to k (tick k, and any a stall skipped: the
// game steps every tick once): the calls due, one step each; then it sends
// the snapshot and, every shotEvery ticks, a projectile.
func (s *server) tick(ev ticksys.TickEvent) {
	k := ev.Server.Tick()
	s.mu.Lock()
	if !s.started {
		s.last, s.started = k-1, true
	}
	var acks []ack
	var to []transport.ClientID
	for t := s.last + 1; t <= k; t++ {
		keep := s.pending[:0]
		for _, p := range s.pending {
			if p.stamp > t {
				keep = append(keep, p)
				continue
			}
			s.lift.call(p.call.Floor)
			acks = append(acks, ack{Seq: p.call.Seq, Stamped: p.stamp, Applied: t})
			to = append(to, p.from)
		}
		s.pending = keep
		s.lift.step(t)
	}
	s.last = k
	lift := s.lift
	var sh *shot
	if k%shotEvery == 0 {
		s.shots++
		speed := int32(shotSpeedM)
		if s.shots%2 == 0 {
			speed = -speed
		}
		sh = &shot{ID: s.shots, OriginMM: lift.Pos, Speed: speed}
	}
	s.mu.Unlock()

	for i, a := range acks {
		if err := s.srv.Send(to[i], transport.Message{Payload: a.append(nil), Reliable: true}); err != nil {
			fmt.Fprintf(s.out, "ack to client %d: %v\n", to[i], err)
		}
	}
	// A zero Stamp is the tick's time: the snapshot is the elevator after it.
	if err := s.srv.Broadcast(transport.Message{Payload: lift.append(nil)}); err != nil {
		fmt.Fprintf(s.out, "snapshot: %v\n", err)
	}
	if sh != nil {
		if err := s.srv.Broadcast(transport.Message{Payload: sh.append(nil), Reliable: true}); err != nil {
			fmt.Fprintf(s.out, "projectile: %v\n", err)
		}
		fmt.Fprintf(s.out, "tick %d: elevator at %.2f m, going to floor %d; fired projectile %d at %d m/s\n",
			k, float64(lift.Pos)/1000, lift.Target, sh.ID, sh.Speed)
	}
}
