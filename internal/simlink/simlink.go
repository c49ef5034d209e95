// Package simlink runs quic-go's simulated network (testutils/simnet)
// behind netsim's links, for tests of the real transport in virtual time:
// inside a testing/synctest bubble the router's timers are virtual, so a
// run behind a profile depends on no machine's speed.
package simlink

import (
	"net"
	"slices"
	"sync"
	"time"

	"github.com/quic-go/quic-go/testutils/simnet"

	"github.com/netclock/netclock/netsim"
)

// Router delays, drops and duplicates every packet as a netsim profile's
// links say: the uplink for the client's packets, the downlink for every
// other node's. Use it as a simnet.Simnet's Router.
type Router struct {
	simnet.PerfectRouter
	client   string
	start    time.Time
	mu       sync.Mutex
	up, down *netsim.Link
	buf      []time.Duration
}

// New returns a Router whose links' time starts now; client is the
// address of the client's endpoint.
func New(client net.Addr, up, down *netsim.Link) *Router {
	return &Router{client: client.String(), start: time.Now(), up: up, down: down}
}

// SendPacket delivers p after each of the delays its link gives it (none if
// the link drops it, two if it duplicates it).
func (r *Router) SendPacket(p simnet.Packet) error {
	r.mu.Lock()
	link := r.down
	if p.From.String() == r.client {
		link = r.up
	}
	now := time.Since(r.start)
	r.buf = link.SendAppend(r.buf[:0], now)
	arrivals := slices.Clone(r.buf)
	r.mu.Unlock()
	for _, at := range arrivals {
		pkt := p
		pkt.Data = slices.Clone(p.Data)
		time.AfterFunc(at-now, func() { _ = r.PerfectRouter.SendPacket(pkt) })
	}
	return nil
}
