package transport

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/internal/debugpage"
	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/provider"
)

// ClientID identifies a client connected to a Server: counting up from 1,
// never reused (a client that reconnects gets a new one).
type ClientID uint64

// ClientInfo describes a connected client.
type ClientInfo struct {
	ID                             ClientID          // for Send
	Remote                         net.Addr          // its address
	Mode                           Mode              // how its pings travel
	Connected                      time.Time         // when its handshake finished
	Pings                          int64             // pings answered
	MessagesReceived, MessagesSent int64             // game messages
	BytesSent, BytesReceived       uint64            // UDP payloads, from quic-go
	RTT                            time.Duration     // quic-go's smoothed RTT
	Arrivals                       provider.Feedback // how early its stamped messages arrived (its pongs carry it)
	PingsMissed                    int64             // pings lost on the way, by sequence gaps
	Quality                        Quality           // as last reported; QualityUnknown before
	Report                         *SyncReport       // the latest (about 1 a second); nil before
}

// serverClient is the server's handle of one connected client.
type serverClient struct {
	id    ClientID
	conn  *quic.Conn
	mode  Mode
	since time.Time
	log   *slog.Logger

	out      sender
	arrivals arrivals

	pings, msgsRecv, msgsSent atomic.Int64

	nextSample time.Duration // server clock of the next history sample; the ping goroutine's
	lastSeq    uint32        // the highest ping sequence number seen; the ping goroutine's
	seqSeen    bool
	missed     atomic.Int64

	dmu      sync.Mutex // guards the debug state below, held for copies only
	report   SyncReport
	reported bool
	history  *debugpage.History // allocated at the first sample, once the server records
	events   debugpage.Events
}

func (sc *serverClient) info() ClientInfo {
	qs := sc.conn.ConnectionStats()
	info := ClientInfo{ID: sc.id, Remote: sc.conn.RemoteAddr(), Mode: sc.mode, Connected: sc.since,
		Pings: sc.pings.Load(), MessagesReceived: sc.msgsRecv.Load(), MessagesSent: sc.msgsSent.Load(),
		BytesSent: qs.BytesSent, BytesReceived: qs.BytesReceived, RTT: qs.SmoothedRTT,
		Arrivals: sc.arrivals.summary(), PingsMissed: sc.missed.Load()}
	sc.dmu.Lock()
	if sc.reported {
		r := sc.report
		info.Report, info.Quality = &r, r.Quality
	}
	sc.dmu.Unlock()
	return info
}

// Clients returns the connected clients, by ID.
func (s *Server) Clients() []ClientInfo {
	s.mu.Lock()
	scs := make([]*serverClient, 0, len(s.byID))
	for _, sc := range s.byID {
		scs = append(scs, sc)
	}
	s.mu.Unlock()
	infos := make([]ClientInfo, len(scs))
	for i, sc := range scs {
		infos[i] = sc.info()
	}
	slices.SortFunc(infos, func(a, b ClientInfo) int { return cmp.Compare(a.ID, b.ID) })
	return infos
}

// Client returns the connected client id, and false if there is none.
func (s *Server) Client(id ClientID) (ClientInfo, bool) {
	sc := s.client(id)
	if sc == nil {
		return ClientInfo{}, false
	}
	return sc.info(), true
}

func (s *Server) client(id ClientID) *serverClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[id]
}

// OnMessage subscribes fn to the clients' messages until cancel, like
// System.OnNetworkTick; with none, messages are dropped and counted. Each
// client's reliable messages come in order on one goroutine (its stream
// waits while fn runs), its unreliable ones on another, other clients'
// concurrently.
func (s *Server) OnMessage(fn func(ClientID, Message)) (cancel func()) {
	if fn == nil {
		panic("transport: nil OnMessage handler")
	}
	sub := &msgSub{fn: fn}
	sub.active.Store(true)
	s.subMu.Lock()
	defer s.subMu.Unlock()
	var old []*msgSub
	if p := s.msgSubs.Load(); p != nil {
		old = *p
	}
	next := append(old[:len(old):len(old)], sub)
	s.msgSubs.Store(&next)
	return func() {
		if !sub.active.Swap(false) {
			return
		}
		s.subMu.Lock()
		defer s.subMu.Unlock()
		var keep []*msgSub
		for _, o := range *s.msgSubs.Load() {
			if o != sub {
				keep = append(keep, o)
			}
		}
		s.msgSubs.Store(&keep)
	}
}

// msgSub is one OnMessage subscription.
type msgSub struct {
	fn     func(ClientID, Message)
	active atomic.Bool
}

// Send sends m to client id without waiting for the network. Errors wrap
// ErrBackpressure, ErrUnknownClient, ErrTooLarge, or quic-go's.
func (s *Server) Send(id ClientID, m Message) error {
	sc := s.client(id)
	if sc == nil {
		return fmt.Errorf("transport: send to client %d: %w", id, ErrUnknownClient)
	}
	if err := sc.send(m.Reliable, s.toWire(m)); err != nil {
		return fmt.Errorf("transport: send to client %d: %w", id, err)
	}
	s.msgsSent.Add(1)
	return nil
}

// Broadcast sends m to every connected client as Send does, with one stamp,
// and returns the failures joined (errors.Join), or nil.
func (s *Server) Broadcast(m Message) error {
	if err := checkPayload(m.Reliable, len(m.Payload)); err != nil {
		return fmt.Errorf("transport: broadcast: %w", err)
	}
	s.mu.Lock()
	scs := make([]*serverClient, 0, len(s.byID))
	for _, sc := range s.byID {
		scs = append(scs, sc)
	}
	s.mu.Unlock()
	slices.SortFunc(scs, func(a, b *serverClient) int { return cmp.Compare(a.id, b.id) })
	var errs []error
	wm := s.toWire(m)
	for _, sc := range scs {
		if err := sc.send(m.Reliable, wm); err != nil {
			errs = append(errs, fmt.Errorf("transport: send to client %d: %w", sc.id, err))
			continue
		}
		s.msgsSent.Add(1)
	}
	return errors.Join(errs...)
}

// toWire returns the wire form of m, stamped now if m's Stamp is zero.
func (s *Server) toWire(m Message) wire.Message {
	if m.Stamp.IsZero() {
		m.Stamp = s.sys.ServerTime()
	}
	return wire.Message{Stamp: m.Stamp, Payload: m.Payload}
}

// Age returns how long ago stamp was on the server clock (SharedTime minus
// stamp, any tick rate), false for the zero Time.
func (s *Server) Age(stamp nettime.Time) (time.Duration, bool) { return age(s.SharedTime(), stamp) }

// send sends m to the client without waiting for the network.
func (sc *serverClient) send(reliable bool, m wire.Message) error {
	if err := sc.out.send(sc.conn, sc.mode, reliable, m); err != nil {
		return err
	}
	sc.msgsSent.Add(1)
	return nil
}

// receiveDatagram parses a message datagram and queues it for delivery.
func (s *Server) receiveDatagram(sc *serverClient, b []byte, at time.Duration, d *dispatcher) {
	wm, err := wire.ParseMessage(b)
	m := fromWire(wm)
	if err != nil {
		s.malformed.Add(1)
		sc.log.Debug("netclock: dropped malformed message datagram", "len", len(b), "err", err)
		return
	}
	m.Payload = bytes.Clone(m.Payload)
	m.Received = at
	sc.arrivals.add(m.Stamp, at)
	s.msgsRecv.Add(1)
	sc.msgsRecv.Add(1)
	if !d.offer(m) {
		s.msgsDropped.Add(1)
	}
}

// deliver hands a message to the OnMessage subscribers, if any.
func (s *Server) deliver(sc *serverClient, m Message) {
	p := s.msgSubs.Load()
	if p == nil || len(*p) == 0 {
		s.msgsDropped.Add(1)
		return
	}
	for _, sub := range *p {
		if sub.active.Load() {
			sub.fn(sc.id, m)
		}
	}
}

// acceptStreams accepts the client's message streams and reads each on a
// goroutine of wg, until the connection ends.
func (s *Server) acceptStreams(sc *serverClient, wg *sync.WaitGroup) {
	ctx := sc.conn.Context()
	for {
		str, err := sc.conn.AcceptUniStream(ctx)
		if err != nil {
			return
		}
		wg.Go(func() { s.readStream(ctx, sc, str) })
	}
}

// readStream delivers the reliable messages of one stream, in order, until
// it ends or breaks. A malformed frame, or one that does not arrive whole
// within FrameTimeout, is counted and stops the stream; the connection, and
// its pings, go on. A client has one message stream at a time
// (serverMaxUniStreams), so at most one partial frame, and its buffer grows
// with the bytes received.
func (s *Server) readStream(ctx context.Context, sc *serverClient, str *quic.ReceiveStream) {
	for {
		wm, err := wire.ReadMessageFrameWithin(str, str, s.cfg.FrameTimeout)
		m := fromWire(wm)
		if err != nil {
			switch {
			case errors.Is(err, wire.ErrMalformed) || errors.Is(err, wire.ErrVersion):
				s.malformed.Add(1)
				sc.log.Warn("netclock: malformed message frame; stream stopped", "err", err)
				str.CancelRead(streamCodeMalformed)
			case errors.Is(err, os.ErrDeadlineExceeded):
				s.malformed.Add(1)
				sc.log.Warn("netclock: message frame not received whole in time; stream stopped",
					"timeout", s.cfg.FrameTimeout)
				str.CancelRead(streamCodeTimeout)
			}
			return
		}
		if ctx.Err() != nil {
			return
		}
		m.Reliable, m.Received = true, s.SharedTime()
		sc.arrivals.add(m.Stamp, m.Received)
		s.msgsRecv.Add(1)
		sc.msgsRecv.Add(1)
		s.deliver(sc, m)
	}
}
