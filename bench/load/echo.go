package main

// The baseline: a bare quic-go datagram echo, set up like netclock's
// transport (one quic.Transport per UDP socket, TLS 1.3 with the same dev
// certificate, datagrams enabled, quic-go's default config) but with
// nothing on top: no hello, no timestamps, no estimator. The server
// answers each datagram on its connection's own goroutine
// (ReceiveDatagram → SendDatagram); the client sends a 14-byte datagram
// (sequence number and send time) at the ping rate and times the echo.

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
)

// echoALPN is the baseline's application protocol.
const echoALPN = "netclock-echo"

// echoPayloadLen is the size of the client's datagram, a netclock ping's.
const echoPayloadLen = 14

type echoServer struct {
	tr      *quic.Transport
	ln      *quic.Listener
	serving atomic.Bool

	mu     sync.Mutex
	conns  map[*quic.Conn]struct{}
	closed bool

	clients         atomic.Int64
	accepted, pings atomic.Int64
	wg              sync.WaitGroup
	closeOnce       sync.Once
	cancelMu        sync.Mutex
	cancel          context.CancelFunc
	serveDone       chan struct{}
}

// newEchoServer listens on conn (which it must be the only user of; Close
// does not close it).
func newEchoServer(conn net.PacketConn, tlsConf *tls.Config) (*echoServer, error) {
	tc := tlsConf.Clone()
	tc.NextProtos = []string{echoALPN}
	s := &echoServer{tr: &quic.Transport{Conn: conn}, conns: make(map[*quic.Conn]struct{}),
		serveDone: make(chan struct{})}
	ln, err := s.tr.Listen(tc, &quic.Config{EnableDatagrams: true})
	if err != nil {
		s.tr.Close()
		return nil, err
	}
	s.ln = ln
	return s, nil
}

func (s *echoServer) started() bool { return s.serving.Load() }

func (s *echoServer) counts() ServerCounts {
	return ServerCounts{Clients: int(s.clients.Load()), Accepted: s.accepted.Load(), Pings: s.pings.Load()}
}

// Serve accepts and echoes until ctx ends or Close is called.
func (s *echoServer) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.cancelMu.Lock()
	s.cancel = cancel
	s.cancelMu.Unlock()
	defer close(s.serveDone)
	s.serving.Store(true)
	var err error
	for {
		conn, aerr := s.ln.Accept(ctx)
		if aerr != nil {
			err = aerr
			break
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			conn.CloseWithError(0, "closing")
			continue
		}
		s.conns[conn] = struct{}{}
		s.mu.Unlock()
		s.accepted.Add(1)
		s.wg.Go(func() {
			s.clients.Add(1)
			defer s.clients.Add(-1)
			defer func() {
				s.mu.Lock()
				delete(s.conns, conn)
				s.mu.Unlock()
			}()
			s.echo(conn)
		})
	}
	s.stop()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (s *echoServer) echo(conn *quic.Conn) {
	for {
		b, err := conn.ReceiveDatagram(context.Background())
		if err != nil {
			return
		}
		if err := conn.SendDatagram(b); err != nil {
			if conn.Context().Err() != nil {
				return
			}
			continue
		}
		s.pings.Add(1)
	}
}

// stop closes the listener and every connection and waits for their
// goroutines.
func (s *echoServer) stop() {
	s.mu.Lock()
	s.closed = true
	conns := make([]*quic.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.ln.Close()
	for _, c := range conns {
		c.CloseWithError(0, "server shutting down")
	}
	s.wg.Wait()
}

// Close stops Serve (if running), closes every connection and the QUIC
// transport.
func (s *echoServer) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.cancelMu.Lock()
		cancel := s.cancel
		s.cancelMu.Unlock()
		if cancel != nil {
			cancel()
			<-s.serveDone
		} else {
			s.stop()
		}
		err = s.tr.Close()
	})
	return err
}

// echoClient is a bare quic-go client pinging an echo server.
type echoClient struct {
	udp    *net.UDPConn
	tr     *quic.Transport
	conn   *quic.Conn
	rec    *recorder
	sent   atomic.Int64
	recv   atomic.Int64
	cancel context.CancelFunc
	ctx    context.Context
	wg     sync.WaitGroup
	once   sync.Once
}

// dialEcho connects to an echo server and starts pinging every interval.
func dialEcho(ctx context.Context, addr *net.UDPAddr, tlsConf *tls.Config, interval time.Duration, rec *recorder) (*echoClient, error) {
	network := "udp"
	if addr.IP.To4() != nil {
		network = "udp4"
	}
	udp, err := net.ListenUDP(network, nil)
	if err != nil {
		return nil, err
	}
	tc := tlsConf.Clone()
	tc.NextProtos = []string{echoALPN}
	tr := &quic.Transport{Conn: udp}
	conn, err := tr.Dial(ctx, addr, tc, &quic.Config{EnableDatagrams: true})
	if err != nil {
		tr.Close()
		udp.Close()
		return nil, err
	}
	if !conn.ConnectionState().SupportsDatagrams.Remote {
		conn.CloseWithError(0, "")
		tr.Close()
		udp.Close()
		return nil, errors.New("echo server did not enable datagrams")
	}
	c := &echoClient{udp: udp, tr: tr, conn: conn, rec: rec}
	c.ctx, c.cancel = context.WithCancel(conn.Context())
	c.wg.Go(func() { c.sendLoop(interval) })
	c.wg.Go(c.receiveLoop)
	return c, nil
}

func (c *echoClient) sendLoop(interval time.Duration) {
	t := time.NewTimer(0)
	defer t.Stop()
	var b [echoPayloadLen]byte
	for seq := uint32(0); ; seq++ {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		binary.BigEndian.PutUint32(b[0:], seq)
		t1 := mono() // stamped right before the send, as netclock's T1
		binary.BigEndian.PutUint64(b[4:], uint64(t1))
		if err := c.conn.SendDatagram(b[:]); err == nil {
			c.sent.Add(1)
		}
		t.Reset(interval)
	}
}

func (c *echoClient) receiveLoop() {
	for {
		b, err := c.conn.ReceiveDatagram(c.ctx)
		t4 := mono() // stamped right after the receive, as netclock's T4
		if err != nil {
			return
		}
		if len(b) != echoPayloadLen {
			continue
		}
		c.recv.Add(1)
		t1 := int64(binary.BigEndian.Uint64(b[4:]))
		c.rec.sample(time.Duration(t4 - t1))
	}
}

func (c *echoClient) done() <-chan struct{} { return c.ctx.Done() }

func (c *echoClient) close() {
	c.once.Do(func() {
		c.cancel()
		c.conn.CloseWithError(0, "client closing")
		c.wg.Wait()
		c.tr.Close()
		c.udp.Close()
	})
}
