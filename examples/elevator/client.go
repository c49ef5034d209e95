package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/netclock/netclock/interp"
	"github.com/netclock/netclock/ticksys"
	"github.com/netclock/netclock/transport"
)

// callEvery is how often the client calls the elevator, in ticks.
const callEvery = 40

// client rides the elevator: its player lives in predicted time, so it
// predicts the elevator there (the server's last state, stepped forward
// with the client's own calls, which the server applies in the ticks they
// are stamped for); it shows the elevator as others see it, interpolated
// at server time; and it places each projectile where it is now, from its
// launch stamp (seed 000: position + velocity × lag).
type client struct {
	c   *transport.Client
	sys *ticksys.System
	out io.Writer

	mu        sync.Mutex
	snaps     map[int64]elevator // authoritative, by tick
	newest    int64              // the newest snapshot's tick; -1 before one
	shown     *interp.Buffer[elevator]
	calls     map[int64]int8     // own calls by the tick they apply in
	predicted map[int64]elevator // own predictions by tick, until the snapshot comes
	seq       uint32
	res       result
}

// result is what the client saw, printed at the end as one line that the
// test reads.
type result struct {
	Snapshots  int // received
	Compared   int // predictions a snapshot of the same tick came for
	Matched    int // ... equal to it, to the millimeter
	Calls      int // sent
	Acked      int
	Late       int // applied after the tick they were stamped for
	LastAck    uint32
	Unordered  int // acks out of order, or applied before their stamp
	Shots      int
	ShotsGap   int // projectiles not numbered one after the other
	LastShotID uint32
}

func runClient(ctx context.Context, o options, stdout io.Writer) error {
	pem, err := os.ReadFile(o.cert)
	if err != nil {
		return err
	}
	tlsConf, err := transport.PinnedClientTLS(pem)
	if err != nil {
		return err
	}
	c, err := transport.Dial(ctx, o.addr, transport.ClientConfig{TickRate: tickRate, TLSConfig: tlsConf})
	if err != nil {
		return err
	}
	defer c.Close()
	sys, err := c.WaitSynced(ctx)
	if err != nil {
		return err
	}
	shown, err := interp.New[elevator](interp.Config{})
	if err != nil {
		return err
	}
	cl := &client{c: c, sys: sys, out: stdout, snaps: map[int64]elevator{}, newest: -1, shown: shown,
		calls: map[int64]int8{}, predicted: map[int64]elevator{}}
	st := c.Stats()
	fmt.Fprintf(stdout, "synced: server tick %d, RTT %.2f ms, error bound %.2f ms\n",
		sys.ServerTime().Tick(), ms(st.RTT), ms(st.ErrorBound))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sys.OnNetworkTick(cl.tick)
	go func() {
		for m := range c.Messages() {
			if cl.receive(m) >= o.projectiles && o.projectiles > 0 {
				cancel()
			}
		}
	}()
	if err := c.Run(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	cl.mu.Lock()
	r := cl.res
	cl.mu.Unlock()
	fmt.Fprintf(stdout, "result: snapshots=%d compared=%d matched=%d calls=%d acked=%d late=%d unordered=%d shots=%d gaps=%d\n",
		r.Snapshots, r.Compared, r.Matched, r.Calls, r.Acked, r.Late, r.Unordered, r.Shots, r.ShotsGap)
	return nil
}

// tick runs at each predicted tick, on Run's goroutine: the player may
// call the elevator, then the elevator is predicted for the tick.
func (cl *client) tick(ev ticksys.TickEvent) {
	p := ev.Predicted.Tick()
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if p%callEvery == 0 {
		cl.seq++
		c := call{Seq: cl.seq, Floor: int8((p/callEvery*2 + 3) % floors)}
		// A zero Stamp is this tick's: the server applies the call in it.
		if err := cl.c.Send(transport.Message{Payload: c.append(nil), Reliable: true}); err != nil {
			fmt.Fprintf(cl.out, "call %d: %v\n", c.Seq, err)
		} else {
			cl.calls[p] = c.Floor
			cl.res.Calls++
		}
	}
	if cl.newest < 0 || cl.newest >= p {
		return
	}
	e := cl.snaps[cl.newest]
	for t := cl.newest + 1; t <= p; t++ {
		if f, ok := cl.calls[t]; ok {
			e.call(f)
		}
		e.step(t)
	}
	cl.predicted[p] = e
	if p%tickRate == 0 {
		s := cl.shown.At(cl.sys.ServerTime())
		var shownMM float64
		if s.Mode != interp.ModeEmpty {
			shownMM = float64(s.From.Pos) + s.Frac*float64(s.To.Pos-s.From.Pos)
		}
		fmt.Fprintf(cl.out, "tick %d: elevator predicted at %.2f m (where my player rides it), shown at %.2f m at server time %v (%s)\n",
			p, float64(e.Pos)/1000, shownMM/1000, cl.sys.ServerTime(), s.Mode)
	}
}

// receive handles a server message and returns the projectiles seen.
func (cl *client) receive(m transport.Message) int {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if len(m.Payload) == 0 {
		return cl.res.Shots
	}
	switch m.Payload[0] {
	case msgSnapshot:
		e, err := parseSnapshot(m.Payload)
		if err != nil {
			break
		}
		k := m.Stamp.Tick()
		cl.res.Snapshots++
		cl.snaps[k] = e
		cl.newest = max(cl.newest, k)
		cl.shown.Add(m.Stamp, e) // a duplicate or a too old one is dropped
		if p, ok := cl.predicted[k]; ok {
			cl.res.Compared++
			if p == e {
				cl.res.Matched++
			} else {
				fmt.Fprintf(cl.out, "tick %d: predicted %+v, the server's %+v\n", k, p, e)
			}
		}
		for t := range cl.predicted {
			if t <= k {
				delete(cl.predicted, t)
			}
		}
		for t := range cl.snaps {
			if t < cl.newest-2*tickRate {
				delete(cl.snaps, t)
			}
		}
		for t := range cl.calls {
			if t < cl.newest-2*tickRate {
				delete(cl.calls, t)
			}
		}
	case msgShot:
		s, err := parseShot(m.Payload)
		if err != nil {
			break
		}
		cl.res.Shots++
		if s.ID != cl.res.LastShotID+1 && cl.res.LastShotID != 0 {
			cl.res.ShotsGap++
		}
		cl.res.LastShotID = s.ID
		// Seed 000's projectile: it has flown since its launch stamp, so
		// it is placed where it is now, not where it was fired.
		lag, ok := cl.c.Age(m.Stamp)
		if !ok {
			fmt.Fprintf(cl.out, "projectile %d: not synchronized, placed at its launch\n", s.ID)
			break
		}
		fmt.Fprintf(cl.out, "projectile %d fired at tick %d from %.2f m at %d m/s: it flew %.1f ms before it got here, so it is %.3f m out\n",
			s.ID, m.Stamp.Tick(), float64(s.OriginMM)/1000, s.Speed, ms(lag), s.at(lag)/1000)
	case msgAck:
		a, err := parseAck(m.Payload)
		if err != nil {
			break
		}
		cl.res.Acked++
		if a.Seq <= cl.res.LastAck || a.Applied < a.Stamped {
			cl.res.Unordered++
		}
		cl.res.LastAck = a.Seq
		if a.Applied != a.Stamped {
			// Late: the server applied it in a later tick, so predict it there.
			cl.res.Late++
			if f, ok := cl.calls[a.Stamped]; ok {
				delete(cl.calls, a.Stamped)
				cl.calls[a.Applied] = f
			}
			fmt.Fprintf(cl.out, "call %d for tick %d came late: applied in tick %d\n", a.Seq, a.Stamped, a.Applied)
		}
	}
	return cl.res.Shots
}
