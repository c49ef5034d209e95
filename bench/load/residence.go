package main

import (
	"net"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// residenceConn wraps a server's UDP socket to time, per client address,
// how long the server holds a ping: from the UDP read that returned a
// ping-sized packet to the next pong-sized UDP write to the same address.
// That is the server's whole user-space residence time (quic-go's receive
// path, decryption, the hand-off to the connection's goroutine, T2..T3,
// the hand-off back, packing, encryption, the write), an upper bound on
// the T3−T2 that pongs carry, which transport does not expose.
//
// Packets are encrypted, so pings and pongs are told apart from ACK-only
// packets by size: short-header (1-RTT) packets of at least pingMin bytes
// read, pongMin bytes written. Long-header (handshake) packets are ignored.
// The size histograms in the report show whether the thresholds separate
// the traffic.
//
// It deliberately does not implement ReadMsgUDP/WriteMsgUDP, so quic-go
// uses its basic socket path: one read syscall per packet, no recvmmsg
// batching, no GSO. Measure CPU without it.
type residenceConn struct {
	c                *net.UDPConn
	pingMin, pongMin int
	on               atomic.Bool // record samples
	h                *hist
	peers            sync.Map // netip.AddrPort → *residencePeer
	unanswered       atomic.Int64
	readSizes        *sizeHist
	writeSizes       *sizeHist
}

type residencePeer struct {
	pending atomic.Int64 // monotonic ns of the oldest unanswered ping; 0: none
}

func newResidenceConn(c *net.UDPConn, pingMin, pongMin int) *residenceConn {
	return &residenceConn{c: c, pingMin: pingMin, pongMin: pongMin, h: newHist(),
		readSizes: &sizeHist{}, writeSizes: &sizeHist{}}
}

var monoBase = time.Now()

func mono() int64 { return int64(time.Since(monoBase)) + 1 } // never 0

func isShortHeader(b []byte) bool { return len(b) > 0 && b[0]&0x80 == 0 }

func (r *residenceConn) peer(addr netip.AddrPort) *residencePeer {
	if p, ok := r.peers.Load(addr); ok {
		return p.(*residencePeer)
	}
	p, _ := r.peers.LoadOrStore(addr, &residencePeer{})
	return p.(*residencePeer)
}

func addrPort(a net.Addr) (netip.AddrPort, bool) {
	u, ok := a.(*net.UDPAddr)
	if !ok {
		return netip.AddrPort{}, false
	}
	ap := u.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), true
}

func (r *residenceConn) ReadFrom(b []byte) (int, net.Addr, error) {
	n, addr, err := r.c.ReadFrom(b)
	now := mono()
	if err != nil || !isShortHeader(b[:n]) {
		return n, addr, err
	}
	r.readSizes.add(n)
	if n >= r.pingMin {
		if ap, ok := addrPort(addr); ok {
			p := r.peer(ap)
			if !p.pending.CompareAndSwap(0, now) && r.on.Load() {
				r.unanswered.Add(1) // another ping before the pong: keep the older
			}
		}
	}
	return n, addr, err
}

func (r *residenceConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	if isShortHeader(b) && len(b) >= r.pongMin {
		if ap, ok := addrPort(addr); ok {
			p := r.peer(ap)
			if t := p.pending.Swap(0); t != 0 && r.on.Load() {
				r.h.record(time.Duration(mono() - t))
			}
		}
	}
	n, err := r.c.WriteTo(b, addr)
	if err == nil && isShortHeader(b) {
		r.writeSizes.add(len(b))
	}
	return n, err
}

func (r *residenceConn) Close() error                       { return r.c.Close() }
func (r *residenceConn) LocalAddr() net.Addr                { return r.c.LocalAddr() }
func (r *residenceConn) SetDeadline(t time.Time) error      { return r.c.SetDeadline(t) }
func (r *residenceConn) SetReadDeadline(t time.Time) error  { return r.c.SetReadDeadline(t) }
func (r *residenceConn) SetWriteDeadline(t time.Time) error { return r.c.SetWriteDeadline(t) }
func (r *residenceConn) SetReadBuffer(n int) error          { return r.c.SetReadBuffer(n) }
func (r *residenceConn) SetWriteBuffer(n int) error         { return r.c.SetWriteBuffer(n) }
func (r *residenceConn) SyscallConn() (syscall.RawConn, error) {
	return r.c.SyscallConn()
}

// sizeHist counts packets by size (up to 1500 bytes).
type sizeHist struct{ n [1501]atomic.Uint64 }

func (s *sizeHist) add(size int) {
	s.n[min(size, len(s.n)-1)].Add(1)
}

// SizeCount is how many packets of a size were seen.
type SizeCount struct {
	Size  int    `json:"size"`  // bytes
	Count uint64 `json:"count"` // packets of that size
}

// top returns the k most frequent sizes, by size.
func (s *sizeHist) top(k int) []SizeCount {
	var all []SizeCount
	for i := range s.n {
		if c := s.n[i].Load(); c > 0 {
			all = append(all, SizeCount{i, c})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Count > all[j].Count })
	all = all[:min(k, len(all))]
	sort.Slice(all, func(i, j int) bool { return all[i].Size < all[j].Size })
	return all
}

// ResidenceReport is the server's ping residence time.
type ResidenceReport struct {
	Method string `json:"method"` // how residence was measured
	Dist
	PingMinBytes int `json:"ping_min_bytes"` // smallest packet counted as a ping
	PongMinBytes int `json:"pong_min_bytes"` // smallest packet counted as a pong
	// Unanswered counts ping-sized packets that arrived while an earlier
	// one from the same client was still unanswered.
	Unanswered int64 `json:"unanswered"`
	// The most frequent short-header packet sizes read and written, over
	// the whole run (to check the size thresholds).
	ReadSizes  []SizeCount `json:"read_sizes"`
	WriteSizes []SizeCount `json:"write_sizes"`
}

func (r *residenceConn) report() *ResidenceReport {
	return &ResidenceReport{
		Method: "UDP read of a ping-sized 1-RTT packet to the next pong-sized UDP write to the same address " +
			"(server user-space residence, an upper bound on T3-T2; quic-go basic socket path)",
		Dist:         r.h.dist(),
		PingMinBytes: r.pingMin, PongMinBytes: r.pongMin,
		Unanswered: r.unanswered.Load(),
		ReadSizes:  r.readSizes.top(8), WriteSizes: r.writeSizes.top(8),
	}
}
