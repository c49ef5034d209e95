package netsim

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"time"
)

// ConnQueueLimit is the largest number of datagram copies a Conn holds per
// direction: outgoing copies waiting for their arrival time, and incoming
// copies waiting for their arrival time or for ReadFrom. A copy that would
// exceed it is dropped and counted in ConnDirStats.Overflow, as a full
// router or socket buffer would drop it. At 1500 bytes per datagram the
// limit is about 6 MB per direction.
const ConnQueueLimit = 4096

// maxDatagram is the size of the buffer the reader goroutine reads the
// wrapped conn into: the largest UDP payload fits.
const maxDatagram = 1 << 16

// errMissingAddress is returned by WriteTo with a nil address.
var errMissingAddress = errors.New("missing address")

// Conn is a wall-clock link emulator: a net.PacketConn that puts the network
// path of a Profile between a client and the rest of the world. Wrap the
// client's socket in it; the peers (the server) keep using plain sockets.
// Datagrams the client writes go through the profile's uplink (Up and the
// changes for "up" and "both"); datagrams it reads come through the downlink
// (Down and the changes for "down" and "both"). Each is delayed, lost,
// duplicated or reordered exactly as the Link of the accuracy harness would
// do it for the same send times and seed, with true time = wall time since
// NewConn (Start).
//
// Delays are held in memory, never by blocking the caller: WriteTo returns at
// once and a scheduler goroutine writes each copy to the wrapped conn at its
// arrival time; a reader goroutine drains the wrapped conn as fast as
// datagrams come and ReadFrom returns each copy once its arrival time has
// passed, in arrival order (ties in the order they were received). The
// timing is as exact as the Go runtime's timers: under testing/synctest it is
// exact to the nanosecond; in real time a copy is handed on late by the
// scheduling latency (typically some microseconds, more on a loaded
// machine), never early.
//
// Conn deliberately exposes only the methods of net.PacketConn (it has no
// SyscallConn, ReadMsgUDP, WriteMsgUDP, SetReadBuffer or SetWriteBuffer), so
// QUIC stacks that look for *net.UDPConn capabilities (quic-go's
// OOBCapablePacketConn) fall back to plain ReadFrom and WriteTo and cannot
// bypass the emulator. A Conn is safe for concurrent use.
type Conn struct {
	// PacketConn is the wrapped conn. Conn's own methods shadow all of its
	// methods except LocalAddr. Do not use it directly: writing to it
	// bypasses the emulated uplink, reading from it steals datagrams from
	// the emulator's reader goroutine, and setting its deadlines breaks
	// that goroutine. It is exported only because embedding the
	// interface (not the concrete *net.UDPConn) is what keeps the
	// capabilities of the concrete type out of Conn's method set.
	net.PacketConn

	start time.Time     // true time 0
	done  chan struct{} // closed by Close
	wake  chan struct{} // cap 1: the earliest arrival time may have changed
	wg    sync.WaitGroup

	mu      sync.Mutex
	up      *Link
	down    *Link
	seq     uint64   // arrival order of equal arrival times
	upQ     pktHeap  // outgoing copies before their arrival time
	downQ   pktHeap  // incoming copies before their arrival time
	ready   []packet // incoming copies due, in arrival order, not yet read
	changed chan struct{}
	readDL  time.Time
	writeDL time.Time
	closed  bool
	readErr error // the wrapped conn's read error that stopped the reader
	counts  [2]dirCounts
}

// Direction indexes of Conn.counts.
const (
	upIdx   = 0
	downIdx = 1
)

type dirCounts struct {
	overflow, forwarded, writeErrors uint64
}

// NewConn wraps inner, the socket of a client that sits behind profile p,
// and starts the emulator's two goroutines (stop them with Close). Packets
// written to the Conn pass through p's uplink, packets read from it through
// p's downlink; see Conn. seed fixes the randomness as in Profile.NewLinks:
// the same profile, seed and send times give the same losses and delays as
// the harness. True time 0 of the profile (the origin of its Changes) is the
// moment NewConn is called, read from the monotonic clock (virtual under
// testing/synctest). The whole profile is validated; its clocks and frames
// are not used (see NewWallClockAt for the client clock).
//
// The Conn owns inner from now on: Close closes it.
func NewConn(inner net.PacketConn, p Profile, seed uint64) (*Conn, error) {
	if inner == nil {
		return nil, errors.New("netsim: NewConn: nil inner conn")
	}
	up, down, err := p.NewLinks(seed)
	if err != nil {
		return nil, err
	}
	c := &Conn{
		PacketConn: inner,
		start:      time.Now(),
		done:       make(chan struct{}),
		wake:       make(chan struct{}, 1),
		up:         up,
		down:       down,
		changed:    make(chan struct{}),
	}
	c.wg.Go(c.schedule)
	c.wg.Go(c.receive)
	return c, nil
}

// Start returns the wall-clock instant of the profile's true time 0 (when
// NewConn was called). Pass it to NewWallClockAt to give the client a clock
// on the same time line as the profile's changes.
func (c *Conn) Start() time.Time { return c.start }

// now returns the current true time.
func (c *Conn) now() time.Duration { return time.Since(c.start) }

// WriteTo sends a copy of b to addr through the uplink and returns len(b),
// nil at once, whether the model delivers, drops or duplicates it (as UDP
// reports success for a datagram lost in the network). The copies are written
// to the wrapped conn at their arrival times; a failure of that write is
// counted in Stats().Up.WriteErrors and otherwise lost. WriteTo fails only
// if the Conn is closed, its write deadline has passed or addr is nil.
func (c *Conn) WriteTo(b []byte, addr net.Addr) (int, error) {
	if addr == nil {
		return 0, c.opErr("write", addr, errMissingAddress)
	}
	data := slices.Clone(b)
	var buf [2]time.Duration
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, c.opErr("write", addr, net.ErrClosed)
	}
	if !c.writeDL.IsZero() && !time.Now().Before(c.writeDL) {
		c.mu.Unlock()
		return 0, c.opErr("write", addr, os.ErrDeadlineExceeded)
	}
	times := c.up.SendAppend(buf[:0], c.now())
	head := c.enqueueLocked(upIdx, times, data, addr)
	c.mu.Unlock()
	if head {
		c.poke()
	}
	return len(b), nil
}

// ReadFrom blocks until an incoming datagram has arrived (its arrival time
// through the downlink has passed), then copies it into b and returns its
// length and sender. A datagram longer than b is truncated to len(b), as
// with UDP. Datagrams are returned in arrival order. ReadFrom returns an
// error wrapping os.ErrDeadlineExceeded (a net.Error whose Timeout is true)
// once the read deadline has passed, even if datagrams are waiting, and one
// wrapping net.ErrClosed once the Conn is closed; Close and SetReadDeadline
// unblock a waiting ReadFrom. If reading the wrapped conn fails, ReadFrom
// returns the datagrams still in flight and then that error.
func (c *Conn) ReadFrom(b []byte) (int, net.Addr, error) {
	c.mu.Lock()
	for {
		if c.closed {
			c.mu.Unlock()
			return 0, nil, c.opErr("read", nil, net.ErrClosed)
		}
		var wait time.Duration
		if dl := c.readDL; !dl.IsZero() {
			if wait = time.Until(dl); wait <= 0 {
				c.mu.Unlock()
				return 0, nil, c.opErr("read", nil, os.ErrDeadlineExceeded)
			}
		}
		if len(c.ready) > 0 {
			p := c.ready[0]
			c.ready[0] = packet{}
			c.ready = c.ready[1:]
			c.counts[downIdx].forwarded++
			c.mu.Unlock()
			return copy(b, p.data), p.addr, nil
		}
		if c.readErr != nil && len(c.downQ) == 0 {
			err := c.readErr
			c.mu.Unlock()
			return 0, nil, err
		}
		changed := c.changed
		c.mu.Unlock()
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-changed:
			case <-t.C:
			}
			t.Stop()
		} else {
			<-changed
		}
		c.mu.Lock()
	}
}

// Close stops the emulator: it discards the datagram copies still in flight
// in both directions, closes the wrapped conn, unblocks ReadFrom and waits
// for the emulator's goroutines to exit, so none is left behind when Close
// returns. It returns the wrapped conn's Close error; closing twice returns
// an error wrapping net.ErrClosed.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return c.opErr("close", nil, net.ErrClosed)
	}
	c.closed = true
	c.upQ, c.downQ, c.ready = nil, nil, nil
	close(c.done)
	c.broadcastLocked()
	c.mu.Unlock()
	err := c.PacketConn.Close()
	c.wg.Wait()
	return err
}

// SetDeadline sets both the read and the write deadline (see
// SetReadDeadline and SetWriteDeadline). The zero time means no deadline,
// the default.
func (c *Conn) SetDeadline(t time.Time) error {
	return c.setDeadline(t, true, true)
}

// SetReadDeadline sets the time after which ReadFrom fails with an error
// wrapping os.ErrDeadlineExceeded, including a ReadFrom already waiting. A
// time in the past makes ReadFrom fail at once; the zero time, the default,
// means no deadline. It applies to the Conn only; the wrapped conn's
// deadlines are never set.
func (c *Conn) SetReadDeadline(t time.Time) error {
	return c.setDeadline(t, true, false)
}

// SetWriteDeadline sets the time after which WriteTo fails with an error
// wrapping os.ErrDeadlineExceeded. WriteTo never blocks, so the deadline
// only matters once it has passed. The zero time, the default, means no
// deadline. It does not affect the copies already accepted.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	return c.setDeadline(t, false, true)
}

func (c *Conn) setDeadline(t time.Time, read, write bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.opErr("set deadline", nil, net.ErrClosed)
	}
	if read {
		c.readDL = t
		c.broadcastLocked()
	}
	if write {
		c.writeDL = t
	}
	return nil
}

// ConnStats counts what a Conn did, per direction.
type ConnStats struct {
	// Up is the client-to-server direction (WriteTo).
	Up ConnDirStats
	// Down is the server-to-client direction (ReadFrom).
	Down ConnDirStats
}

// ConnDirStats counts what one direction of a Conn did, in datagrams or
// datagram copies. Every copy the model delivers (Delivered) is eventually
// dropped by Overflow, handed on (Forwarded), or discarded by Close; until
// then it is Pending.
type ConnDirStats struct {
	// LinkStats are the model's counts: Sent is the number of datagrams
	// that entered the direction (written by the client, or read from the
	// wrapped conn), Lost and OutageDropped those the model dropped,
	// Delivered the copies it delivered (duplicates included), Duplicated
	// the extra copies and Reordered the copies held back.
	LinkStats
	// Overflow is the number of delivered copies dropped because
	// ConnQueueLimit copies were already held in this direction.
	Overflow uint64
	// Forwarded is the number of copies handed on at their arrival time:
	// written to the wrapped conn (Up, failed writes included) or returned
	// by ReadFrom (Down).
	Forwarded uint64
	// WriteErrors is the number of copies whose write to the wrapped conn
	// failed (Up only; always 0 for Down).
	WriteErrors uint64
	// Pending is the number of copies held now: before their arrival time,
	// or (Down) arrived and not read yet. It is 0 after Close.
	Pending int
}

// Dropped returns the number of datagram copies this direction dropped: the
// model's losses and outage drops plus queue overflows.
func (s ConnDirStats) Dropped() uint64 { return s.Lost + s.OutageDropped + s.Overflow }

// Stats returns the counters so far.
func (c *Conn) Stats() ConnStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	dir := func(i int, l *Link, pending int) ConnDirStats {
		k := c.counts[i]
		return ConnDirStats{
			LinkStats:   l.Stats(),
			Overflow:    k.overflow,
			Forwarded:   k.forwarded,
			WriteErrors: k.writeErrors,
			Pending:     pending,
		}
	}
	return ConnStats{
		Up:   dir(upIdx, c.up, len(c.upQ)),
		Down: dir(downIdx, c.down, len(c.downQ)+len(c.ready)),
	}
}

// enqueueLocked queues one copy of data per arrival time in times for
// direction d, dropping those beyond ConnQueueLimit, and reports whether a
// copy became the earliest of its queue (the scheduler must look again).
func (c *Conn) enqueueLocked(d int, times []time.Duration, data []byte, addr net.Addr) (head bool) {
	q, extra := &c.upQ, 0
	if d == downIdx {
		q, extra = &c.downQ, len(c.ready)
	}
	for _, at := range times {
		if len(*q)+extra >= ConnQueueLimit {
			c.counts[d].overflow++
			continue
		}
		c.seq++
		q.push(packet{due: at, seq: c.seq, data: data, addr: addr})
		if (*q)[0].seq == c.seq {
			head = true
		}
	}
	return head
}

// isClosed reports whether Close has been called.
func (c *Conn) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// poke wakes the scheduler without blocking.
func (c *Conn) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// broadcastLocked wakes every waiting ReadFrom.
func (c *Conn) broadcastLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// schedule is the scheduler goroutine: it sleeps on one timer until the
// earliest arrival time of either queue, then writes the due outgoing copies
// to the wrapped conn and moves the due incoming copies to the ready queue.
func (c *Conn) schedule() {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var batch []packet
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return
		}
		now := c.now()
		batch = batch[:0]
		for len(c.upQ) > 0 && c.upQ[0].due <= now {
			batch = append(batch, c.upQ.pop())
		}
		arrived := false
		for len(c.downQ) > 0 && c.downQ[0].due <= now {
			c.ready = append(c.ready, c.downQ.pop())
			arrived = true
		}
		if arrived {
			c.broadcastLocked()
		}
		next, pending := time.Duration(0), false
		for _, q := range []pktHeap{c.upQ, c.downQ} {
			if len(q) > 0 && (!pending || q[0].due < next) {
				next, pending = q[0].due, true
			}
		}
		c.mu.Unlock()

		if len(batch) > 0 {
			var written, failed uint64
			for i := range batch {
				p := &batch[i]
				if _, err := c.PacketConn.WriteTo(p.data, p.addr); err != nil {
					if c.isClosed() {
						break // discarded by Close, not a write error
					}
					failed++
				}
				written++
				*p = packet{}
			}
			c.mu.Lock()
			c.counts[upIdx].forwarded += written
			c.counts[upIdx].writeErrors += failed
			c.mu.Unlock()
			continue // time has passed: look again before sleeping
		}

		if pending {
			timer.Reset(next - now)
		} else {
			timer.Stop()
		}
		select {
		case <-timer.C:
		case <-c.wake:
		case <-c.done:
			return
		}
	}
}

// receive is the reader goroutine: it reads the wrapped conn until it fails
// (at the latest when Close closes it) and queues every datagram through the
// downlink.
func (c *Conn) receive() {
	buf := make([]byte, maxDatagram)
	var times [2]time.Duration
	for {
		n, addr, err := c.PacketConn.ReadFrom(buf)
		if err != nil {
			c.mu.Lock()
			if !c.closed {
				c.readErr = err
				if len(c.downQ) == 0 {
					c.broadcastLocked()
				}
			}
			c.mu.Unlock()
			return
		}
		data := slices.Clone(buf[:n])
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return
		}
		ts := c.down.SendAppend(times[:0], c.now())
		head := c.enqueueLocked(downIdx, ts, data, addr)
		c.mu.Unlock()
		if head {
			c.poke()
		}
	}
}

// opErr wraps err as the wrapped conn would report it.
func (c *Conn) opErr(op string, addr net.Addr, err error) error {
	e := &net.OpError{Op: op, Addr: addr, Err: err}
	if la := c.PacketConn.LocalAddr(); la != nil {
		e.Net, e.Source = la.Network(), la
	}
	return e
}

// packet is one datagram copy in flight.
type packet struct {
	due  time.Duration // arrival true time
	seq  uint64        // tie-breaker: order of enqueueing
	data []byte        // shared by the copies of a duplicated datagram; read-only
	addr net.Addr      // destination (up) or source (down)
}

// pktHeap is a min-heap of packets by (due, seq).
type pktHeap []packet

func (p packet) before(q packet) bool {
	return p.due < q.due || (p.due == q.due && p.seq < q.seq)
}

func (h *pktHeap) push(p packet) {
	*h = append(*h, p)
	s := *h
	i := len(s) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !s[i].before(s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *pktHeap) pop() packet {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s[last] = packet{}
	s = s[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].before(s[m]) {
			m = l
		}
		if r < len(s) && s[r].before(s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// NewWallClock returns a function that reads a clock following spec in wall
// time: true time is the time elapsed since NewWallClock was called
// (monotonic clock; virtual under testing/synctest), and the function
// returns spec's reading of it (Clock.Read), with spec's offset, drift,
// jumps and slews. The true error of a reading taken at true time t is
// exactly Clock.Offset(t) of NewClock(spec); for a spec without jumps and
// slews it is Offset + DriftPPM*t/1e6. It is NewWallClockAt(spec,
// time.Now()); use NewWallClockAt to share the time line with a Conn or
// another process. The function is safe for concurrent use.
func NewWallClock(spec ClockSpec) (func() time.Duration, error) {
	return NewWallClockAt(spec, time.Now())
}

// NewWallClockAt is NewWallClock with true time 0 at epoch instead of now:
// the function returns spec's reading of time.Since(epoch). Pass Conn.Start
// to put the client clock's jumps and slews on the same time line as the
// profile's link changes (as the harness does). An epoch without a
// monotonic reading (time.Unix(0, n), e.g. passed between processes) makes
// time.Since use the wall clock, which is shared by the processes of a host
// but follows the host's own clock adjustments.
func NewWallClockAt(spec ClockSpec, epoch time.Time) (func() time.Duration, error) {
	clk, err := NewClock(spec)
	if err != nil {
		return nil, fmt.Errorf("netsim: wall clock: %w", err)
	}
	return func() time.Duration { return clk.Read(time.Since(epoch)) }, nil
}
