package transport

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/internal/wire"
)

// Regression tests of the attacks of issue 8, each replayed from a raw QUIC
// connection that sends what a real client never would. The memory these
// attacks cost a server process is measured by bench/attack.

// TestStreamLimits: a client may open exactly the streams the protocol
// needs, not quic-go's default of 100 of each kind: one unidirectional
// stream at a time (reliable messages), and bidirectional ones for the
// hello and, in ModeStream, the pings. A bidirectional stream beyond those
// closes the connection: nobody would read it.
func TestStreamLimits(t *testing.T) {
	var limit *quic.StreamLimitReachedError
	t.Run("unidirectional", func(t *testing.T) {
		srv := startServer(t, ServerConfig{})
		raw := rawClient(t, srv)
		if _, err := raw.OpenUniStream(); err != nil {
			t.Fatalf("first unidirectional stream: %v", err)
		}
		if _, err := raw.OpenUniStream(); !errors.As(err, &limit) {
			t.Errorf("second unidirectional stream: %v, want StreamLimitReachedError", err)
		}
	})
	for _, tc := range []struct {
		name      string
		datagrams bool
		extra     int // bidirectional streams after the hello that the protocol has
	}{
		{"datagram mode", true, 0},
		{"stream mode", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, ServerConfig{})
			raw := rawClientWith(t, srv, tc.datagrams)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for i := range tc.extra {
				str, err := raw.OpenStreamSync(ctx)
				if err != nil {
					t.Fatalf("protocol stream %d: %v", i, err)
				}
				str.Write(wire.AppendFrame(nil, wire.AppendPing(nil, wire.Ping{Seq: 1})))
			}
			str, err := raw.OpenStream()
			if errors.As(err, &limit) {
				return // quic-go's limit stopped it: nothing to close
			}
			if err != nil {
				t.Fatalf("extra stream: %v", err)
			}
			str.Write([]byte("unexpected"))
			await(t, raw.Context().Done(), 5*time.Second, "the server to close the connection")
			var ae *quic.ApplicationError
			if err := context.Cause(raw.Context()); !errors.As(err, &ae) || ae.ErrorCode != codeProtocolViolation {
				t.Errorf("connection closed with %v, want codeProtocolViolation", err)
			}
		})
	}
}

// TestJunkAfterHello: what a client sends on the hello stream after its
// hello is refused at once (STOP_SENDING), not buffered for the life of the
// connection; the client is served all the same.
func TestJunkAfterHello(t *testing.T) {
	srv := startServer(t, ServerConfig{})
	tlsConf := testCert(t).ClientTLS()
	tlsConf.NextProtos = []string{ALPN}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := quic.DialAddr(ctx, srv.Addr().String(), tlsConf, &quic.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.CloseWithError(0, "")
	str, err := raw.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	junk := bytes.Repeat([]byte("junk"), 4<<10)
	str.SetWriteDeadline(time.Now().Add(5 * time.Second))
	// The server's STOP_SENDING may already end this first write.
	_, err = str.Write(append(wire.AppendClientHello(nil, wire.ClientHello{}), junk...))
	stopped := func(err error) bool {
		var serr *quic.StreamError
		return errors.As(err, &serr) && serr.ErrorCode == streamCodeDone && serr.Remote
	}
	if err != nil && !stopped(err) {
		t.Fatal(err)
	}
	if h, err := wire.ReadServerHello(str); err != nil || h.Status != wire.StatusOK {
		t.Fatalf("server hello %+v, %v", h, err)
	}
	// Keep writing: the server's flow control would stop us within its
	// window if it kept the bytes; it stops the stream instead. At most
	// 8 MiB, so the loop ends whatever the server does.
	for i := 0; i < 512 && err == nil; i++ {
		_, err = str.Write(junk)
	}
	if !stopped(err) {
		t.Fatalf("writing junk after the hello: %v, want the server's STOP_SENDING (code %d)", err, streamCodeDone)
	}
	// The connection itself is fine: pings are answered.
	if _, err := exchangePing(ctx, raw); err != nil {
		t.Errorf("no pong after the junk: %v", err)
	}
}

// TestPartialFrameTimeout: a client that announces a large message frame,
// sends part of it and stalls has its message stream stopped after
// FrameTimeout; it can open another, and its pings go on.
func TestPartialFrameTimeout(t *testing.T) {
	srv := startServer(t, ServerConfig{FrameTimeout: 100 * time.Millisecond})
	raw := rawClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for round := range 2 { // the second stream is admitted once the first is stopped
		str, err := raw.OpenUniStreamSync(ctx)
		if err != nil {
			t.Fatalf("round %d: opening the message stream: %v", round, err)
		}
		frame := binary.BigEndian.AppendUint32(nil, wire.MaxMessageFrameLen)
		frame = append(frame, bytes.Repeat([]byte{0}, 1000)...)
		if _, err := str.Write(frame); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		await(t, str.Context().Done(), 5*time.Second, "the server to stop the stalled stream")
		var serr *quic.StreamError
		if err := context.Cause(str.Context()); !errors.As(err, &serr) || serr.ErrorCode != streamCodeTimeout {
			t.Fatalf("round %d: stream ended with %v, want code %d", round, err, streamCodeTimeout)
		}
	}
	if m := srv.Stats().Malformed; m != 2 {
		t.Errorf("server counted %d malformed, want 2", m)
	}
	if _, err := exchangePing(ctx, raw); err != nil {
		t.Errorf("no pong after the stalled frames: %v", err)
	}
}

// exchangePing sends pings on raw until one is answered (datagrams can be
// lost), at most five.
func exchangePing(ctx context.Context, raw *quic.Conn) (wire.Pong, error) {
	var err error
	for seq := range uint32(5) {
		if err = raw.SendDatagram(wire.AppendPing(nil, wire.Ping{Seq: seq, ClientSend: 5})); err != nil {
			return wire.Pong{}, err
		}
		rctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		var b []byte
		b, err = raw.ReceiveDatagram(rctx)
		cancel()
		if err == nil {
			return wire.ParsePong(b)
		}
	}
	return wire.Pong{}, err
}

// TestDispatcherBytesBounded: unreliable messages waiting for a stuck
// handler are capped by bytes, whatever their count.
func TestDispatcherBytesBounded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	var wg sync.WaitGroup
	d := newDispatcher(ctx, &wg, func(Message) { <-release })
	payload := make([]byte, MaxUnreliablePayload)
	accepted := 0
	for range unreliableQueueLen {
		if d.offer(Message{Payload: payload}) {
			accepted++
		}
	}
	// One message may be in the handler, the rest queued within the cap.
	if limit := 1 + unreliableQueueBytes/MaxUnreliablePayload; accepted > limit || accepted < limit-1 {
		t.Errorf("accepted %d messages of %d bytes, want about %d (cap %d bytes)",
			accepted, MaxUnreliablePayload, limit, unreliableQueueBytes)
	}
	if q := d.bytes.Load(); q > unreliableQueueBytes {
		t.Errorf("%d bytes queued, cap %d", q, unreliableQueueBytes)
	}
	cancel()
	close(release)
	wg.Wait()
}
