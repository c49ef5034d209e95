package netsim

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// An in-memory datagram network of two ends, for tests in a synctest bubble
// (its channels and timers must be created inside the bubble, so that the
// emulator's timing there is exact).

type pipeAddr string

func (a pipeAddr) Network() string { return "pipe" }
func (a pipeAddr) String() string  { return string(a) }

type pipeMsg struct {
	data []byte
	from net.Addr
}

type pipeEnd struct {
	addr pipeAddr
	in   chan pipeMsg
	peer *pipeEnd

	closeOnce sync.Once
	closed    chan struct{}
	broken    chan struct{} // closed by breakRead

	mu        sync.Mutex
	readDL    time.Time
	dlChanged chan struct{}
	readErr   error
}

// newPipe returns two connected ends; each buffers up to buf datagrams and
// drops beyond that, as a socket would.
func newPipe(buf int) (a, b *pipeEnd) {
	mk := func(name string) *pipeEnd {
		return &pipeEnd{
			addr:      pipeAddr(name),
			in:        make(chan pipeMsg, buf),
			closed:    make(chan struct{}),
			broken:    make(chan struct{}),
			dlChanged: make(chan struct{}),
		}
	}
	a, b = mk("client"), mk("server")
	a.peer, b.peer = b, a
	return a, b
}

func (p *pipeEnd) LocalAddr() net.Addr { return p.addr }

func (p *pipeEnd) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		p.mu.Lock()
		dl, changed := p.readDL, p.dlChanged
		p.mu.Unlock()
		select {
		case <-p.closed:
			return 0, nil, &net.OpError{Op: "read", Net: "pipe", Err: net.ErrClosed}
		case <-p.broken:
			return 0, nil, p.readErr
		default:
		}
		var timer *time.Timer
		var timeout <-chan time.Time
		if !dl.IsZero() {
			d := time.Until(dl)
			if d <= 0 {
				return 0, nil, &net.OpError{Op: "read", Net: "pipe", Err: os.ErrDeadlineExceeded}
			}
			timer = time.NewTimer(d)
			timeout = timer.C
		}
		var m pipeMsg
		got := false
		select {
		case m = <-p.in:
			got = true
		case <-p.closed:
		case <-p.broken:
		case <-changed:
		case <-timeout:
		}
		if timer != nil {
			timer.Stop()
		}
		if got {
			return copy(b, m.data), m.from, nil
		}
	}
}

func (p *pipeEnd) WriteTo(b []byte, addr net.Addr) (int, error) {
	select {
	case <-p.closed:
		return 0, &net.OpError{Op: "write", Net: "pipe", Err: net.ErrClosed}
	default:
	}
	if addr == pipeAddr("unreachable") {
		return 0, &net.OpError{Op: "write", Net: "pipe", Addr: addr, Err: errors.New("unreachable")}
	}
	if addr.String() != string(p.peer.addr) {
		return len(b), nil // nobody there
	}
	select {
	case p.peer.in <- pipeMsg{slices.Clone(b), p.addr}:
	default: // buffer full: dropped
	}
	return len(b), nil
}

func (p *pipeEnd) Close() error {
	err := error(&net.OpError{Op: "close", Net: "pipe", Err: net.ErrClosed})
	p.closeOnce.Do(func() { close(p.closed); err = nil })
	return err
}

// breakRead makes every ReadFrom fail with err from now on.
func (p *pipeEnd) breakRead(err error) {
	p.mu.Lock()
	p.readErr = err
	p.mu.Unlock()
	close(p.broken)
}

func (p *pipeEnd) SetDeadline(t time.Time) error { return p.SetReadDeadline(t) }

func (p *pipeEnd) SetReadDeadline(t time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readDL = t
	close(p.dlChanged)
	p.dlChanged = make(chan struct{})
	return nil
}

func (p *pipeEnd) SetWriteDeadline(time.Time) error { return nil }

// helpers

func fixedProfile(up, down time.Duration) Profile {
	return Profile{
		Name: "fixed",
		Up:   LinkSpec{Base: up, Jitter: JitterSpec{Kind: JitterNone}},
		Down: LinkSpec{Base: down, Jitter: JitterSpec{Kind: JitterNone}},
	}
}

// newTestConn returns a Conn behind p on one end of a pipe, and the other
// end. Call it inside a bubble. Both are closed at cleanup if the test has
// not closed them.
func newTestConn(t *testing.T, p Profile, seed uint64) (*Conn, *pipeEnd) {
	t.Helper()
	a, b := newPipe(2 * ConnQueueLimit)
	c, err := NewConn(a, p, seed)
	if err != nil {
		t.Fatalf("NewConn: %v", err)
	}
	t.Cleanup(func() {
		c.Close()
		b.Close()
	})
	return c, b
}

type recv struct {
	data string
	from net.Addr
	at   time.Duration // since the test's t0
}

// readAll reads pc until its read deadline or close and returns what it got,
// with the arrival times relative to t0.
func readAll(pc net.PacketConn, t0 time.Time) ([]recv, error) {
	var out []recv
	buf := make([]byte, 2048)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return out, err
		}
		out = append(out, recv{string(buf[:n]), from, time.Since(t0)})
	}
}

// readBoth reads the client and the peer concurrently until deadline and
// returns what each got: up is what the peer read, down what the client
// read.
func readBoth(c *Conn, peer *pipeEnd, t0, deadline time.Time) (up, down []recv, upErr, downErr error) {
	peer.SetReadDeadline(deadline)
	c.SetReadDeadline(deadline)
	var wg sync.WaitGroup
	wg.Go(func() { up, upErr = readAll(peer, t0) })
	wg.Go(func() { down, downErr = readAll(c, t0) })
	wg.Wait()
	return up, down, upErr, downErr
}

func mustWrite(t *testing.T, pc net.PacketConn, msg string, to net.Addr) {
	t.Helper()
	n, err := pc.WriteTo([]byte(msg), to)
	if err != nil || n != len(msg) {
		t.Errorf("WriteTo(%q) = %d, %v; want %d, nil", msg, n, err, len(msg))
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) && errors.As(err, &ne) && ne.Timeout()
}

// tests

// Conn must not expose the capabilities of *net.UDPConn: quic-go would use
// them to read and write the socket directly, bypassing the emulator.
func TestConnMethodSet(t *testing.T) {
	var _ net.PacketConn = (*Conn)(nil)
	var c any = &Conn{}
	checks := map[string]bool{}
	_, checks["SyscallConn"] = c.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	_, checks["SetReadBuffer"] = c.(interface{ SetReadBuffer(int) error })
	_, checks["SetWriteBuffer"] = c.(interface{ SetWriteBuffer(int) error })
	_, checks["ReadMsgUDP"] = c.(interface {
		ReadMsgUDP(b, oob []byte) (n, oobn, flags int, addr *net.UDPAddr, err error)
	})
	_, checks["WriteMsgUDP"] = c.(interface {
		WriteMsgUDP(b, oob []byte, addr *net.UDPAddr) (n, oobn int, err error)
	})
	_, checks["ReadFromUDP"] = c.(interface {
		ReadFromUDP(b []byte) (int, *net.UDPAddr, error)
	})
	_, checks["File"] = c.(interface{ File() (*os.File, error) })
	for m, has := range checks {
		if has {
			t.Errorf("*Conn has method %s; it must expose only net.PacketConn", m)
		}
	}
}

func TestNewConnErrors(t *testing.T) {
	a, _ := newPipe(1)
	if _, err := NewConn(nil, fixedProfile(0, 0), 1); err == nil {
		t.Error("NewConn(nil) succeeded")
	}
	if _, err := NewConn(a, Profile{Name: "bad", Up: LinkSpec{Loss: 2}}, 1); err == nil {
		t.Error("NewConn with an invalid profile succeeded")
	}
}

func TestConnFixedDelays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		c, peer := newTestConn(t, fixedProfile(30*ms, 10*ms), 1)
		if !c.Start().Equal(t0) {
			t.Errorf("Start = %v, want %v", c.Start(), t0)
		}
		if c.LocalAddr() != pipeAddr("client") {
			t.Errorf("LocalAddr = %v, want the wrapped conn's", c.LocalAddr())
		}
		msg := []byte("ping")
		if n, err := c.WriteTo(msg, peer.LocalAddr()); n != 4 || err != nil {
			t.Fatalf("WriteTo = %d, %v", n, err)
		}
		copy(msg, "XXXX") // the Conn must have copied it
		if d := time.Since(t0); d != 0 {
			t.Errorf("WriteTo blocked for %v", d)
		}
		buf := make([]byte, 64)
		n, from, err := peer.ReadFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(buf[:n]); got != "ping" || from != pipeAddr("client") {
			t.Errorf("peer got %q from %v, want \"ping\" from client", got, from)
		}
		if d := time.Since(t0); d != 30*ms {
			t.Errorf("uplink delay %v, want 30ms", d)
		}

		t1 := time.Now()
		mustWrite(t, peer, "pong", from)
		n, from, err = c.ReadFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(buf[:n]); got != "pong" || from != pipeAddr("server") {
			t.Errorf("client got %q from %v, want \"pong\" from server", got, from)
		}
		if d := time.Since(t1); d != 10*ms {
			t.Errorf("downlink delay %v, want 10ms", d)
		}

		// A short buffer truncates, as UDP does.
		mustWrite(t, peer, "truncated", c.LocalAddr())
		small := make([]byte, 5)
		if n, _, err := c.ReadFrom(small); n != 5 || err != nil || string(small) != "trunc" {
			t.Errorf("short read = %d %q %v", n, small[:n], err)
		}

		s := c.Stats()
		if s.Up.Sent != 1 || s.Up.Delivered != 1 || s.Up.Forwarded != 1 || s.Up.Pending != 0 || s.Up.Dropped() != 0 {
			t.Errorf("up stats %+v", s.Up)
		}
		if s.Down.Sent != 2 || s.Down.Forwarded != 2 || s.Down.Pending != 0 {
			t.Errorf("down stats %+v", s.Down)
		}
	})
}

// A failed write to the wrapped conn happens at the arrival time, so WriteTo
// cannot report it; it is counted.
func TestConnWriteError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestConn(t, fixedProfile(30*ms, 10*ms), 1)
		mustWrite(t, c, "x", pipeAddr("unreachable"))
		time.Sleep(30 * ms)
		synctest.Wait()
		if s := c.Stats().Up; s.WriteErrors != 1 || s.Forwarded != 1 || s.Pending != 0 {
			t.Errorf("stats %+v, want 1 write error", s)
		}
	})
}

func TestConnLossAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := fixedProfile(30*ms, 10*ms)
		p.Up.Loss, p.Down.Loss = 1, 1
		t0 := time.Now()
		c, peer := newTestConn(t, p, 1)
		for i := range 10 {
			mustWrite(t, c, fmt.Sprint(i), peer.LocalAddr())
			mustWrite(t, peer, fmt.Sprint(i), c.LocalAddr())
		}
		up, down, upErr, downErr := readBoth(c, peer, t0, t0.Add(time.Second))
		if len(up) != 0 || !isTimeout(upErr) {
			t.Errorf("peer got %v, %v; want nothing and a timeout", up, upErr)
		}
		if len(down) != 0 || !isTimeout(downErr) {
			t.Errorf("client got %v, %v; want nothing and a timeout", down, downErr)
		}
		s := c.Stats()
		for _, d := range []ConnDirStats{s.Up, s.Down} {
			if d.Sent != 10 || d.Lost != 10 || d.Dropped() != 10 || d.Delivered != 0 || d.Forwarded != 0 {
				t.Errorf("stats %+v", d)
			}
		}
	})
}

func TestConnDuplicate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := fixedProfile(30*ms, 10*ms)
		p.Up.Duplicate, p.Down.Duplicate = 1, 1
		t0 := time.Now()
		c, peer := newTestConn(t, p, 1)
		mustWrite(t, c, "a", peer.LocalAddr())
		mustWrite(t, peer, "b", c.LocalAddr())
		want := func(s string, at time.Duration, from string) []recv {
			return []recv{{s, pipeAddr(from), at}, {s, pipeAddr(from), at}}
		}
		up, down, upErr, downErr := readBoth(c, peer, t0, t0.Add(time.Second))
		if !slices.Equal(up, want("a", 30*ms, "client")) || !isTimeout(upErr) {
			t.Errorf("peer got %v, %v; want two copies at 30ms", up, upErr)
		}
		if !slices.Equal(down, want("b", 10*ms, "server")) || !isTimeout(downErr) {
			t.Errorf("client got %v, %v; want two copies at 10ms", down, downErr)
		}
		s := c.Stats()
		for _, d := range []ConnDirStats{s.Up, s.Down} {
			if d.Sent != 1 || d.Delivered != 2 || d.Duplicated != 1 || d.Forwarded != 2 {
				t.Errorf("stats %+v", d)
			}
		}
	})
}

// Scheduled changes are timed from NewConn: an outage in both directions
// and a base delay change in the uplink only.
func TestConnChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := fixedProfile(30*ms, 10*ms)
		p.Changes = []Change{
			{At: 100 * ms, Direction: DirBoth, Outage: 50 * ms},
			{At: 170 * ms, Direction: DirUp, Base: ptr(60 * ms)},
		}
		t0 := time.Now()
		c, peer := newTestConn(t, p, 1)
		var upGot, downGot []recv
		var wg sync.WaitGroup
		wg.Go(func() { upGot, _ = readAll(peer, t0) })
		wg.Go(func() { downGot, _ = readAll(c, t0) })

		var upWant, downWant []recv
		for i := range 20 {
			at := time.Duration(i) * 10 * ms
			time.Sleep(time.Until(t0.Add(at)))
			mustWrite(t, c, fmt.Sprint(i), peer.LocalAddr())
			mustWrite(t, peer, fmt.Sprint(i), c.LocalAddr())
			if at >= 100*ms && at < 150*ms {
				continue
			}
			up := 30 * ms
			if at >= 170*ms {
				up = 60 * ms
			}
			upWant = append(upWant, recv{fmt.Sprint(i), pipeAddr("client"), at + up})
			downWant = append(downWant, recv{fmt.Sprint(i), pipeAddr("server"), at + 10*ms})
		}
		peer.SetReadDeadline(t0.Add(time.Second))
		c.SetReadDeadline(t0.Add(time.Second))
		wg.Wait()
		if !slices.Equal(upGot, upWant) {
			t.Errorf("up got\n%v\nwant\n%v", upGot, upWant)
		}
		if !slices.Equal(downGot, downWant) {
			t.Errorf("down got\n%v\nwant\n%v", downGot, downWant)
		}
		s := c.Stats()
		if s.Up.OutageDropped != 5 || s.Down.OutageDropped != 5 {
			t.Errorf("outage drops up %d down %d, want 5 and 5", s.Up.OutageDropped, s.Down.OutageDropped)
		}
	})
}

// The emulator reproduces the model exactly: with jitter, loss, reordering
// and duplicates, every copy arrives at the time a Link built from the same
// profile and seed gives for the same send time, in arrival order.
func TestConnMatchesModel(t *testing.T) {
	spec := LinkSpec{
		Base:         20 * ms,
		Jitter:       JitterSpec{Kind: JitterUniform, Spread: 30 * ms},
		Loss:         0.1,
		Reorder:      0.1,
		ReorderDelay: 15 * ms,
		Duplicate:    0.1,
	}
	p := Profile{Name: "model", Up: spec, Down: spec}
	p.Down.Base = 5 * ms
	const seed, n, gap = 7, 300, 1 * ms
	upTwin, downTwin, err := p.NewLinks(seed)
	if err != nil {
		t.Fatal(err)
	}
	var upWant, downWant []recv
	for i := range n {
		at := time.Duration(i) * gap
		for _, a := range upTwin.Send(at) {
			upWant = append(upWant, recv{strconv.Itoa(i), pipeAddr("client"), a})
		}
		for _, a := range downTwin.Send(at) {
			downWant = append(downWant, recv{strconv.Itoa(i), pipeAddr("server"), a})
		}
	}
	byArrival := func(a, b recv) int { return cmp.Compare(a.at, b.at) }
	slices.SortStableFunc(upWant, byArrival)
	slices.SortStableFunc(downWant, byArrival)

	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		c, peer := newTestConn(t, p, seed)
		var upGot, downGot []recv
		var wg sync.WaitGroup
		wg.Go(func() { upGot, _ = readAll(peer, t0) })
		wg.Go(func() { downGot, _ = readAll(c, t0) })
		for i := range n {
			time.Sleep(time.Until(t0.Add(time.Duration(i) * gap)))
			mustWrite(t, c, strconv.Itoa(i), peer.LocalAddr())
			mustWrite(t, peer, strconv.Itoa(i), c.LocalAddr())
			if i%50 == 0 {
				c.Stats() // concurrently with the emulator
			}
		}
		peer.SetReadDeadline(t0.Add(10 * time.Second))
		c.SetReadDeadline(t0.Add(10 * time.Second))
		wg.Wait()
		if !slices.Equal(upGot, upWant) {
			t.Errorf("up: got %d copies, want %d; got\n%v\nwant\n%v", len(upGot), len(upWant), upGot, upWant)
		}
		if !slices.Equal(downGot, downWant) {
			t.Errorf("down: got %d copies, want %d; got\n%v\nwant\n%v", len(downGot), len(downWant), downGot, downWant)
		}
		s := c.Stats()
		if s.Up.LinkStats != upTwin.Stats() || s.Down.LinkStats != downTwin.Stats() {
			t.Errorf("stats %+v, want the model's %+v and %+v", s, upTwin.Stats(), downTwin.Stats())
		}
		if s.Up.Reordered == 0 || s.Up.Duplicated == 0 || s.Up.Lost == 0 {
			t.Errorf("the profile should reorder, duplicate and lose: %+v", s.Up)
		}
		if got := s.Up.Forwarded; got != uint64(len(upWant)) {
			t.Errorf("up forwarded %d, want %d", got, len(upWant))
		}
	})
}

func TestConnReadDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		c, peer := newTestConn(t, fixedProfile(30*ms, 10*ms), 1)
		buf := make([]byte, 64)

		// Nothing arrives: times out exactly at the deadline.
		c.SetReadDeadline(t0.Add(25 * ms))
		if _, _, err := c.ReadFrom(buf); !isTimeout(err) {
			t.Fatalf("ReadFrom = %v, want a timeout", err)
		}
		if d := time.Since(t0); d != 25*ms {
			t.Errorf("timed out at %v, want 25ms", d)
		}
		// A passed deadline fails at once, even with a datagram waiting.
		mustWrite(t, peer, "x", c.LocalAddr())
		time.Sleep(20 * ms)
		if _, _, err := c.ReadFrom(buf); !isTimeout(err) {
			t.Errorf("ReadFrom past the deadline = %v, want a timeout", err)
		}
		if d := time.Since(t0); d != 45*ms {
			t.Errorf("returned at %v, want 45ms (at once)", d)
		}
		// Clearing it delivers the waiting datagram.
		c.SetReadDeadline(time.Time{})
		if n, _, err := c.ReadFrom(buf); err != nil || string(buf[:n]) != "x" {
			t.Errorf("ReadFrom = %q, %v", buf[:n], err)
		}

		// Moving the deadline of a blocked ReadFrom earlier, then later.
		t1 := time.Now()
		c.SetReadDeadline(t1.Add(100 * ms))
		type result struct {
			err error
			at  time.Duration
			msg string
		}
		done := make(chan result)
		read := func() {
			n, _, err := c.ReadFrom(buf)
			done <- result{err, time.Since(t1), string(buf[:n])}
		}
		go read()
		time.Sleep(10 * ms)
		c.SetReadDeadline(t1.Add(40 * ms))
		if r := <-done; !isTimeout(r.err) || r.at != 40*ms {
			t.Errorf("blocked ReadFrom returned %v at %v, want a timeout at 40ms", r.err, r.at)
		}

		t1 = time.Now()
		c.SetReadDeadline(t1.Add(20 * ms))
		go read()
		time.Sleep(10 * ms)
		c.SetReadDeadline(t1.Add(time.Second))
		mustWrite(t, peer, "y", c.LocalAddr()) // arrives at 20ms
		if r := <-done; r.err != nil || r.at != 20*ms || r.msg != "y" {
			t.Errorf("blocked ReadFrom returned %q, %v at %v; want \"y\" at 20ms", r.msg, r.err, r.at)
		}
	})
}

func TestConnWriteDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, peer := newTestConn(t, fixedProfile(30*ms, 10*ms), 1)
		c.SetWriteDeadline(time.Now().Add(10 * ms))
		mustWrite(t, c, "before", peer.LocalAddr())
		time.Sleep(10 * ms)
		if _, err := c.WriteTo([]byte("after"), peer.LocalAddr()); !isTimeout(err) {
			t.Errorf("WriteTo after the deadline = %v, want a timeout", err)
		}
		c.SetDeadline(time.Time{})
		mustWrite(t, c, "cleared", peer.LocalAddr())
		if _, err := c.WriteTo([]byte("x"), nil); err == nil {
			t.Error("WriteTo(nil address) succeeded")
		}
		peer.SetReadDeadline(time.Now().Add(time.Second))
		got, _ := readAll(peer, time.Now())
		if len(got) != 2 || got[0].data != "before" || got[1].data != "cleared" {
			t.Errorf("peer got %v", got)
		}
	})
}

// Close unblocks a waiting ReadFrom, discards what is in flight, and leaves
// no goroutine behind: the bubble would report them as deadlocked.
func TestConnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, peer := newPipe(16)
		c, err := NewConn(a, fixedProfile(30*ms, 10*ms), 1)
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, c, "in flight", peer.LocalAddr())
		mustWrite(t, peer, "in flight", c.LocalAddr())
		errc := make(chan error)
		c.SetReadDeadline(time.Now().Add(5 * ms))
		if _, _, err := c.ReadFrom(make([]byte, 64)); !isTimeout(err) {
			t.Fatalf("ReadFrom = %v, want a timeout", err)
		}
		c.SetReadDeadline(time.Time{})
		go func() {
			_, _, err := c.ReadFrom(make([]byte, 64))
			errc <- err
		}()
		synctest.Wait() // the reader is blocked
		t0 := time.Now()
		if err := c.Close(); err != nil {
			t.Fatalf("Close = %v", err)
		}
		if err := <-errc; !errors.Is(err, net.ErrClosed) {
			t.Errorf("blocked ReadFrom = %v, want net.ErrClosed", err)
		}
		if d := time.Since(t0); d != 0 {
			t.Errorf("Close took %v", d)
		}
		if _, _, err := c.ReadFrom(nil); !errors.Is(err, net.ErrClosed) {
			t.Errorf("ReadFrom after Close = %v, want net.ErrClosed", err)
		}
		if _, err := c.WriteTo([]byte("x"), peer.LocalAddr()); !errors.Is(err, net.ErrClosed) {
			t.Errorf("WriteTo after Close = %v, want net.ErrClosed", err)
		}
		if err := c.SetReadDeadline(time.Time{}); !errors.Is(err, net.ErrClosed) {
			t.Errorf("SetReadDeadline after Close = %v, want net.ErrClosed", err)
		}
		if err := c.Close(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("second Close = %v, want net.ErrClosed", err)
		}
		if err := a.Close(); err == nil {
			t.Error("the wrapped conn was not closed")
		}
		// The datagram in flight upwards is discarded.
		peer.SetReadDeadline(t0.Add(time.Second))
		if got, err := readAll(peer, t0); len(got) != 0 || !isTimeout(err) {
			t.Errorf("peer got %v, %v after Close; want nothing", got, err)
		}
		if s := c.Stats(); s.Up.Pending != 0 || s.Down.Pending != 0 || s.Up.Forwarded != 0 {
			t.Errorf("stats after Close %+v", s)
		}
		peer.Close()
	})
}

// A failing wrapped conn: the datagrams in flight are still delivered, then
// ReadFrom reports the error.
func TestConnInnerReadError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, peer := newPipe(16)
		c, err := NewConn(a, fixedProfile(30*ms, 10*ms), 1)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		t0 := time.Now()
		mustWrite(t, peer, "last", c.LocalAddr())
		synctest.Wait() // the reader has taken it
		broken := errors.New("broken")
		a.breakRead(broken)
		got, err := readAll(c, t0)
		if want := []recv{{"last", pipeAddr("server"), 10 * ms}}; !slices.Equal(got, want) || err != broken {
			t.Errorf("got %v, %v; want %v, %v", got, err, want, broken)
		}
		if _, _, err := c.ReadFrom(nil); err != broken {
			t.Errorf("next ReadFrom = %v, want %v", err, broken)
		}
	})
}

func TestConnQueueLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		c, peer := newTestConn(t, fixedProfile(30*ms, 10*ms), 1)
		const extra = 10
		for i := range ConnQueueLimit + extra {
			mustWrite(t, c, strconv.Itoa(i), peer.LocalAddr())
			mustWrite(t, peer, strconv.Itoa(i), c.LocalAddr())
		}
		synctest.Wait() // the reader has taken them all
		s := c.Stats()
		for _, d := range []ConnDirStats{s.Up, s.Down} {
			if d.Overflow != extra || d.Pending != ConnQueueLimit || d.Dropped() != extra {
				t.Errorf("stats %+v, want %d overflows and %d pending", d, extra, ConnQueueLimit)
			}
		}
		time.Sleep(time.Second) // everything has arrived; the client has read nothing
		if s := c.Stats(); s.Down.Pending != ConnQueueLimit || s.Up.Pending != 0 {
			t.Errorf("after arrival: up pending %d, down pending %d", s.Up.Pending, s.Down.Pending)
		}
		for name, pc := range map[string]net.PacketConn{"peer": peer, "client": c} {
			pc.SetReadDeadline(time.Now().Add(time.Second))
			got, _ := readAll(pc, t0)
			if len(got) != ConnQueueLimit || got[0].data != "0" || got[len(got)-1].data != strconv.Itoa(ConnQueueLimit-1) {
				t.Errorf("%s got %d datagrams, want the first %d", name, len(got), ConnQueueLimit)
			}
		}
	})
}

// Concurrent writers and readers on one Conn: every datagram is read once.
func TestConnConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := Profile{
			Name: "jittery",
			Up:   LinkSpec{Base: 5 * ms, Jitter: JitterSpec{Kind: JitterExponential, Mean: 5 * ms}},
			Down: LinkSpec{Base: 5 * ms, Jitter: JitterSpec{Kind: JitterExponential, Mean: 5 * ms}},
		}
		t0 := time.Now()
		c, peer := newTestConn(t, p, 3)
		const writers, each = 4, 50
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					mustWrite(t, c, fmt.Sprintf("%d.%d", w, i), peer.LocalAddr())
					mustWrite(t, peer, fmt.Sprintf("%d.%d", w, i), c.LocalAddr())
					time.Sleep(time.Duration(w+1) * ms)
				}
			})
		}
		var mu sync.Mutex
		seen := map[string]int{}
		var readers sync.WaitGroup
		for range 3 {
			readers.Go(func() {
				got, _ := readAll(c, t0)
				mu.Lock()
				defer mu.Unlock()
				for _, r := range got {
					seen[r.data]++
				}
			})
		}
		peerGot := make(chan []recv)
		go func() {
			got, _ := readAll(peer, t0)
			peerGot <- got
		}()
		wg.Wait()
		c.SetReadDeadline(time.Now().Add(time.Second))
		peer.SetReadDeadline(time.Now().Add(time.Second))
		readers.Wait()
		if up := <-peerGot; len(up) != writers*each {
			t.Errorf("peer got %d datagrams, want %d", len(up), writers*each)
		}
		if len(seen) != writers*each {
			t.Errorf("client read %d distinct datagrams, want %d", len(seen), writers*each)
		}
		for k, n := range seen {
			if n != 1 {
				t.Errorf("%s read %d times", k, n)
			}
		}
	})
}

func TestWallClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := ClockSpec{
			Offset:   2 * time.Second,
			DriftPPM: 100,
			Jumps:    []Jump{{At: 5 * time.Second, By: time.Second}},
			Slews:    []Slew{{From: 6 * time.Second, To: 8 * time.Second, PPM: 500}},
		}
		read, err := NewWallClock(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := read(); got != 2*time.Second {
			t.Errorf("reading at 0 = %v, want 2s", got)
		}
		time.Sleep(10 * time.Second)
		// 10s true + 2s offset + 1ms drift + 1s jump + 1ms slew.
		if got, want := read(), 13*time.Second+2*ms; got != want {
			t.Errorf("reading at 10s = %v, want %v", got, want)
		}

		epoch := time.Now().Add(-time.Minute)
		read, err = NewWallClockAt(ClockSpec{Offset: -time.Second}, epoch)
		if err != nil {
			t.Fatal(err)
		}
		if got := read(); got != 59*time.Second {
			t.Errorf("reading = %v, want 59s", got)
		}
		if _, err := NewWallClock(ClockSpec{DriftPPM: 1e6}); err == nil {
			t.Error("NewWallClock accepted an invalid spec")
		}
	})
}

// Over real loopback UDP, behind a named profile: datagrams get through both
// ways and Close is clean. No timing is checked.
func TestConnLoopbackUDP(t *testing.T) {
	p, ok := ProfileByName("lan")
	if !ok {
		t.Fatal("no lan profile")
	}
	server, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback UDP: %v", err)
	}
	defer server.Close()
	inner, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewConn(inner, p, 1)
	if err != nil {
		t.Fatal(err)
	}
	echoed := make(chan int)
	go func() { // echo server
		n := 0
		buf := make([]byte, 2048)
		for {
			k, from, err := server.ReadFrom(buf)
			if err != nil {
				echoed <- n
				return
			}
			n++
			server.WriteTo(buf[:k], from)
		}
	}()

	const count = 20
	for i := range count {
		mustWrite(t, c, strconv.Itoa(i), server.LocalAddr())
	}
	// The deadline only bounds a broken test; it is not a timing check.
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	got := map[string]bool{}
	buf := make([]byte, 2048)
	for len(got) < count {
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			t.Fatalf("after %d replies: %v", len(got), err)
		}
		if from.String() != server.LocalAddr().String() {
			t.Errorf("reply from %v, want %v", from, server.LocalAddr())
		}
		got[string(buf[:n])] = true
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if _, _, err := c.ReadFrom(buf); !errors.Is(err, net.ErrClosed) {
		t.Errorf("ReadFrom after Close = %v, want net.ErrClosed", err)
	}
	s := c.Stats()
	if s.Up.Forwarded != count || s.Down.Forwarded != count || s.Up.WriteErrors != 0 {
		t.Errorf("stats %+v", s)
	}
	server.Close()
	if n := <-echoed; n != count {
		t.Errorf("server echoed %d, want %d", n, count)
	}
}
