package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/nettime"
)

// fromClient is a message as the server's handler saw it.
type fromClient struct {
	id ClientID
	m  Message
}

// messageServer starts a server whose OnMessage handler queues what it
// receives.
func messageServer(t *testing.T, cfg ServerConfig) (*Server, chan fromClient) {
	t.Helper()
	srv := startServer(t, cfg)
	got := make(chan fromClient, 1024)
	srv.OnMessage(func(id ClientID, m Message) { got <- fromClient{id, m} })
	return srv, got
}

// syncedClient dials srv and waits for sync.
func syncedClient(t *testing.T, srv *Server, cfg ClientConfig) *Client {
	t.Helper()
	c, err := dialTest(t, srv, cfg)
	if err != nil {
		t.Fatal(err)
	}
	await(t, c.Synced(), 5*time.Second, "sync")
	return c
}

// onlyClient returns the ID of the server's only client.
func onlyClient(t *testing.T, srv *Server) ClientID {
	t.Helper()
	var infos []ClientInfo
	eventually(t, 5*time.Second, "one client on the server", func() bool {
		infos = srv.Clients()
		return len(infos) == 1
	})
	return infos[0].ID
}

// receive sends with send and waits for the first value on ch that match
// accepts (others, such as copies of earlier resends, are skipped). If
// resend is set, it sends again every 100 ms: datagrams may be lost, even
// on loopback.
func receive[T any](t *testing.T, ch <-chan T, resend bool, match func(T) bool, send func() error) T {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(5 * time.Second)
	if err := send(); err != nil {
		t.Fatalf("send: %v", err)
	}
	for {
		select {
		case v := <-ch:
			if match(v) {
				return v
			}
		case <-tick.C:
			if !resend {
				continue
			}
			if err := send(); err != nil {
				t.Fatalf("resend: %v", err)
			}
		case <-deadline:
			t.Fatal("timed out waiting for the message")
		}
	}
}

// withPayload matches messages by payload.
func withPayload(p []byte) func(Message) bool {
	return func(m Message) bool { return bytes.Equal(m.Payload, p) }
}

// ignoreLocal leaves the receiver's Received time out of a comparison.
// cmpMessages compares Messages: nettime.Time by ==, payloads by
// bytes.Equal (nil and empty alike, and fast: cmp walks a []byte element
// by element).
var cmpMessages = cmp.Options{
	cmp.Comparer(func(a, b nettime.Time) bool { return a == b }),
	cmp.Comparer(bytes.Equal),
}

var ignoreLocal = cmpopts.IgnoreFields(Message{}, "Received")

func TestMessages(t *testing.T) {
	for _, mode := range []Mode{ModeDatagram, ModeStream} {
		t.Run(mode.String(), func(t *testing.T) {
			srv, fromClients := messageServer(t, ServerConfig{TickRate: 60, Start: time.Hour})
			c := syncedClient(t, srv, ClientConfig{DisableDatagrams: mode == ModeStream})
			if m := c.Session().Mode; m != mode {
				t.Fatalf("mode %v, want %v", m, mode)
			}
			id := onlyClient(t, srv)
			stamp := nettime.FromTick(60, 216_123, time.Millisecond)
			// With no datagrams, unreliable messages take the stream.
			viaStream := mode == ModeStream

			for _, tc := range []struct {
				name     string
				toServer bool
				reliable bool
				stamp    *nettime.Time // nil: the default stamp
			}{
				{"client reliable", true, true, nil},
				{"client reliable at", true, true, &stamp},
				{"client unreliable", true, false, nil},
				{"client unreliable at", true, false, &stamp},
				{"server reliable", false, true, &stamp},
				{"server unreliable", false, false, &stamp},
				{"server default stamp", false, true, nil},
			} {
				t.Run(tc.name, func(t *testing.T) {
					payload := []byte("payload of " + tc.name)
					var got Message
					before := srv.SharedTime()
					localBefore := c.Clock()
					var wantStamp nettime.Time
					msg := Message{Payload: payload, Reliable: tc.reliable}
					if tc.stamp != nil {
						msg.Stamp = *tc.stamp
					}
					if tc.toServer {
						send := func() error { return c.Send(msg) }
						fc := receive(t, fromClients, !tc.reliable,
							func(fc fromClient) bool { return withPayload(payload)(fc.m) }, send)
						if fc.id != id {
							t.Errorf("from client %d, want %d", fc.id, id)
						}
						got = fc.m
						if got.Received < before || got.Received > srv.SharedTime() {
							t.Errorf("received at %v on the server clock, not in [%v, now]", got.Received, before)
						}
					} else {
						got = receive(t, c.Messages(), !tc.reliable, withPayload(payload),
							func() error { return srv.Send(id, msg) })
						if got.Received < localBefore || got.Received > c.Clock() {
							t.Errorf("received at %v on the client clock, not in [%v, now]", got.Received, localBefore)
						}
					}
					if tc.stamp != nil {
						wantStamp = *tc.stamp
					} else {
						// The default stamp is the client System's predicted
						// time or the server's server time: on the server's
						// 60 Hz timeline, about now.
						wantStamp = got.Stamp
						if got.Stamp.TickRate() != 60 || abs(got.Stamp.Duration()-before) > time.Second {
							t.Errorf("default stamp %v, want a 60 Hz time near the server's %v", got.Stamp, before)
						}
					}
					want := Message{Stamp: wantStamp, Payload: payload, Reliable: tc.reliable || viaStream}
					if d := cmp.Diff(want, got, cmpMessages, ignoreLocal); d != "" {
						t.Errorf("message (-want +got):\n%s", d)
					}
				})
			}

			// Drain what resends may have duplicated.
			for len(fromClients) > 0 {
				<-fromClients
			}
			st, ss := c.Stats(), srv.Stats()
			t.Logf("client: sent %d, received %d messages, %d/%d bytes; server: received %d, sent %d, %d/%d bytes",
				st.MessagesSent, st.MessagesReceived, st.BytesSent, st.BytesReceived,
				ss.MessagesReceived, ss.MessagesSent, ss.BytesSent, ss.BytesReceived)
			if st.MessagesSent < 4 || st.MessagesReceived < 3 || ss.MessagesReceived < 4 || ss.MessagesSent < 3 ||
				st.MalformedMessages != 0 || ss.Malformed != 0 || ss.MessagesDropped != 0 {
				t.Errorf("message counts: client %+v, server %+v", st, ss)
			}
			info, ok := srv.Client(id)
			if !ok || info.BytesSent == 0 || info.BytesReceived == 0 || info.MessagesReceived < 4 ||
				info.Pings == 0 || info.Mode != mode || info.RTT <= 0 {
				t.Errorf("client info %+v", info)
			}
			if st.BytesSent == 0 || st.BytesReceived == 0 || ss.BytesSent < info.BytesSent {
				t.Errorf("byte counts: client %d/%d, server %d/%d", st.BytesSent, st.BytesReceived,
					ss.BytesSent, ss.BytesReceived)
			}
		})
	}
}

// sendAsReadersKeepUp calls send until it is not refused for
// backpressure, as a game would try again next tick: a sender may run
// ahead of its peer by the flow-control window, no more.
func sendAsReadersKeepUp(t *testing.T, what string, send func() error) {
	t.Helper()
	var last error
	defer func() {
		if t.Failed() {
			t.Logf("%s: last error %v", what, last)
		}
	}()
	eventually(t, 10*time.Second, what+" to be taken", func() bool {
		err := send()
		last = err
		if err != nil && !errors.Is(err, ErrBackpressure) {
			t.Fatalf("%s: %v", what, err)
		}
		return err == nil
	})
}

// TestReliableOrderAndSize sends many reliable messages and the largest
// ones both ways: all arrive, in order, intact.
func TestReliableOrderAndSize(t *testing.T) {
	srv, fromClients := messageServer(t, ServerConfig{})
	c := syncedClient(t, srv, ClientConfig{MessageBuffer: 1024})
	id := onlyClient(t, srv)

	big := bytes.Repeat([]byte("0123456789abcdef"), MaxReliablePayload/16)
	var want []string // strings: cmp compares them at once, not byte by byte
	for i := range 300 {
		want = append(want, fmt.Sprintf("message %d", i))
	}
	want = append(want, string(big), "", string(big))
	for i, ps := range want {
		p := []byte(ps)
		stamp := nettime.FromTick(60, int64(i), 0)
		m := Message{Stamp: stamp, Payload: p, Reliable: true}
		sendAsReadersKeepUp(t, fmt.Sprintf("client send %d", i), func() error { return c.Send(m) })
		sendAsReadersKeepUp(t, fmt.Sprintf("server send %d", i), func() error { return srv.Send(id, m) })
	}
	var toServer, toClient []string
	for i := range want {
		fc := await(t, fromClients, 5*time.Second, "client's message")
		m := await(t, c.Messages(), 5*time.Second, "server's message")
		for _, got := range []Message{fc.m, m} {
			if tick := got.Stamp.Tick(); tick != int64(i) || !got.Reliable {
				t.Fatalf("message %d: stamp tick %d, reliable %v", i, tick, got.Reliable)
			}
		}
		toServer, toClient = append(toServer, string(fc.m.Payload)), append(toClient, string(m.Payload))
	}
	if d := cmp.Diff(want, toServer); d != "" {
		t.Errorf("to the server (-want +got):\n%.2000s", d)
	}
	if d := cmp.Diff(want, toClient); d != "" {
		t.Errorf("to the client (-want +got):\n%.2000s", d)
	}
}

func TestMessageErrors(t *testing.T) {
	srv, _ := messageServer(t, ServerConfig{})
	c := syncedClient(t, srv, ClientConfig{})
	id := onlyClient(t, srv)
	unreliable := func(n int) Message { return Message{Stamp: nettime.New(60, 0), Payload: make([]byte, n)} }
	reliable := func(n int) Message { return Message{Payload: make([]byte, n), Reliable: true} }
	for _, tc := range []struct {
		name string
		send func() error
		want error
	}{
		{"client unreliable too large", func() error { return c.Send(unreliable(MaxUnreliablePayload + 1)) }, ErrTooLarge},
		{"client reliable too large", func() error { return c.Send(reliable(MaxReliablePayload + 1)) }, ErrTooLarge},
		{"server unreliable too large", func() error { return srv.Send(id, unreliable(MaxUnreliablePayload+1)) }, ErrTooLarge},
		{"server reliable too large", func() error { return srv.Send(id, reliable(MaxReliablePayload+1)) }, ErrTooLarge},
		{"broadcast too large", func() error { return srv.Broadcast(unreliable(MaxUnreliablePayload + 1)) }, ErrTooLarge},
		{"unknown client", func() error { return srv.Send(id+1, reliable(0)) }, ErrUnknownClient},
		{"largest unreliable fits", func() error { return c.Send(unreliable(MaxUnreliablePayload)) }, nil},
		{"largest server unreliable fits", func() error { return srv.Send(id, unreliable(MaxUnreliablePayload)) }, nil},
		{"largest reliable fits", func() error { return c.Send(reliable(MaxReliablePayload)) }, nil},
		{"largest server reliable fits", func() error { return srv.Send(id, reliable(MaxReliablePayload)) }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.send()
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	c.Close()
	for _, tc := range []struct {
		name string
		send func() error
	}{
		{"reliable", func() error { return c.Send(reliable(0)) }},
		{"unreliable", func() error { return c.Send(unreliable(0)) }},
	} {
		if err := tc.send(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s send after Close = %v, want ErrClosed", tc.name, err)
		}
	}
	// Messages still buffered (the server's datagram above may have
	// arrived) come first; then the channel is closed.
	closed := make(chan struct{})
	go func() {
		for range c.Messages() {
		}
		close(closed)
	}()
	await(t, closed, 5*time.Second, "Messages to be closed after Close")
}

func TestBroadcast(t *testing.T) {
	srv, _ := messageServer(t, ServerConfig{})
	clients := []*Client{syncedClient(t, srv, ClientConfig{}), syncedClient(t, srv, ClientConfig{DisableDatagrams: true})}
	eventually(t, 5*time.Second, "two clients", func() bool { return len(srv.Clients()) == 2 })
	stamp := nettime.FromTick(60, 77, 0)
	for _, reliable := range []bool{true, false} {
		payload := fmt.Appendf(nil, "to all, reliable %v", reliable)
		for i, c := range clients {
			got := receive(t, c.Messages(), !reliable, withPayload(payload),
				func() error { return srv.Broadcast(Message{Stamp: stamp, Payload: payload, Reliable: reliable}) })
			want := Message{Stamp: stamp, Payload: payload, Reliable: reliable || i == 1}
			if d := cmp.Diff(want, got, cmpMessages, ignoreLocal); d != "" {
				t.Errorf("client %d, reliable %v (-want +got):\n%s", i, reliable, d)
			}
		}
	}
}

func TestAge(t *testing.T) {
	srv := startServer(t, ServerConfig{TickRate: 60, Start: time.Minute})
	var logs logBuffer
	bare := newBareClient(t, &logs, func() time.Duration { return 0 })
	if _, ok := bare.Age(nettime.New(60, 0)); ok {
		t.Error("Age ok before any estimate")
	}
	c := syncedClient(t, srv, ClientConfig{})
	for _, tc := range []struct {
		name   string
		stamp  func() nettime.Time
		want   time.Duration
		wantOK bool
	}{
		{"100ms ago", func() nettime.Time { return nettime.New(60, srv.SharedTime()-100*time.Millisecond) }, 100 * time.Millisecond, true},
		{"another rate", func() nettime.Time { return nettime.New(128, srv.SharedTime()-time.Second) }, time.Second, true},
		{"in the future", func() nettime.Time { return nettime.New(60, srv.SharedTime()+50*time.Millisecond) }, -50 * time.Millisecond, true},
		{"zero", func() nettime.Time { return nettime.Time{} }, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			awaitSynchronized(t, c)
			stamp := tc.stamp()
			sAge, sOK := srv.Age(stamp)
			cAge, cOK := c.Age(stamp)
			if sOK != tc.wantOK || cOK != tc.wantOK {
				t.Fatalf("ok: server %v, client %v; want %v", sOK, cOK, tc.wantOK)
			}
			if !tc.wantOK {
				return
			}
			// The server reads its own clock; the client its estimate
			// of it (5 ms on loopback, as in TestEndToEnd).
			if d := sAge - tc.want; d < 0 || d > 5*time.Millisecond {
				t.Errorf("server Age %v, want %v", sAge, tc.want)
			}
			if d := cAge - tc.want; d < -5*time.Millisecond || d > 5*time.Millisecond {
				t.Errorf("client Age %v, want %v", cAge, tc.want)
			}
		})
	}
}

// rawClient is a QUIC connection to srv that did netclock's handshake and
// nothing else, to send what a real client never would.
func rawClient(t *testing.T, srv *Server) *quic.Conn {
	t.Helper()
	return rawClientWith(t, srv, true)
}

// rawClientWith is rawClient with or without datagrams (ModeStream).
func rawClientWith(t *testing.T, srv *Server, datagrams bool) *quic.Conn {
	t.Helper()
	tlsConf := testCert(t).ClientTLS()
	tlsConf.NextProtos = []string{ALPN}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := quic.DialAddr(ctx, srv.Addr().String(), tlsConf, &quic.Config{EnableDatagrams: datagrams})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.CloseWithError(0, "") })
	str, err := raw.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := str.Write(wire.AppendClientHello(nil, wire.ClientHello{})); err != nil {
		t.Fatal(err)
	}
	if h, err := wire.ReadServerHello(str); err != nil || h.Status != wire.StatusOK {
		t.Fatalf("server hello %+v, %v", h, err)
	}
	return raw
}

// TestMalformedMessages sends bad message frames, each on its own stream,
// and bad message datagrams: the server counts each, stops the stream,
// delivers the good frames before the bad, and keeps answering pings.
func TestMalformedMessages(t *testing.T) {
	srv, fromClients := messageServer(t, ServerConfig{})
	raw := rawClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	good := wire.AppendMessageFrame(nil, wire.Message{Stamp: nettime.New(60, time.Second), Payload: []byte("good")})
	badStamp := bytes.Clone(good)
	badStamp[4+2+4] = 0 // the stamp's rate (00 00 00 3c): 0, with a nonzero time
	for i, tc := range []struct {
		name  string
		frame []byte
	}{
		{"length too large", []byte{0xff, 0xff, 0xff, 0xff}},
		{"length too small", []byte{0, 0, 0, 1, 3}},
		{"wrong type", append([]byte{0, 0, 0, 15, 1, 1}, make([]byte, 13)...)},
		{"other version", append([]byte{0, 0, 0, 15, 3, 9}, make([]byte, 13)...)},
		{"bad stamp", badStamp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			str, err := raw.OpenUniStreamSync(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := str.Write(append(bytes.Clone(good), tc.frame...)); err != nil {
				t.Fatal(err)
			}
			if fc := await(t, fromClients, 5*time.Second, "the good frame"); string(fc.m.Payload) != "good" {
				t.Errorf("delivered %q", fc.m.Payload)
			}
			eventually(t, 5*time.Second, "the malformed frame counted", func() bool {
				return srv.Stats().Malformed == int64(i+1)
			})
			// The server stopped the stream: writes fail with its code.
			var se *quic.StreamError
			eventually(t, 5*time.Second, "the stream stopped", func() bool {
				_, err := str.Write([]byte{0})
				return errors.As(err, &se)
			})
			if se.ErrorCode != streamCodeMalformed || !se.Remote {
				t.Errorf("stream error %v, want the server's code %d", se, streamCodeMalformed)
			}
		})
	}
	before := srv.Stats().Malformed
	for _, g := range [][]byte{{3}, {3, 1}, good[4 : 4+14], badStamp[4:]} {
		if err := raw.SendDatagram(g); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 5*time.Second, "the malformed datagrams counted", func() bool {
		return srv.Stats().Malformed == before+4
	})
	// The connection still gets pongs.
	ping := wire.AppendPing(nil, wire.Ping{Seq: 1, ClientSend: 5})
	pongs := make(chan []byte, 16)
	go func() {
		for {
			b, err := raw.ReceiveDatagram(context.Background())
			if err != nil {
				return
			}
			pongs <- b
		}
	}()
	b := receive(t, pongs, true, func([]byte) bool { return true }, func() error { return raw.SendDatagram(ping) })
	if p, err := wire.ParsePong(b); err != nil || p.Seq != 1 {
		t.Errorf("pong %+v, %v", p, err)
	}
	if ss := srv.Stats(); ss.Clients != 1 || ss.MessagesReceived != 5 {
		t.Errorf("server stats %+v", ss)
	}
}

// TestClientMalformedMessages has a fake server send a client garbage
// frames: counted, the stream stopped, the client keeps its connection.
func TestClientMalformedMessages(t *testing.T) {
	cert := testCert(t)
	tlsConf := cert.ServerTLS()
	tlsConf.NextProtos = []string{ALPN}
	ln, err := quic.ListenAddr("127.0.0.1:0", tlsConf, &quic.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	serverConn := make(chan *quic.Conn, 1)
	go func() {
		conn, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		str, err := conn.AcceptStream(ctx)
		if err != nil {
			return
		}
		if _, err := wire.ReadClientHello(str); err != nil {
			return
		}
		str.Write(wire.AppendServerHello(nil, wire.ServerHello{TickRate: 60, Epoch: 1}))
		str.Close()
		serverConn <- conn
	}()
	var logs logBuffer
	c, err := Dial(ctx, ln.Addr().String(), ClientConfig{TLSConfig: cert.ClientTLS(), Logger: logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conn := await(t, serverConn, 5*time.Second, "the fake server's connection")
	defer conn.CloseWithError(0, "")
	str, err := conn.OpenUniStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	good := wire.AppendMessageFrame(nil, wire.Message{Stamp: nettime.New(60, 0), Payload: []byte("ok")})
	if _, err := str.Write(append(good, 0xff, 0xff, 0xff, 0xff)); err != nil {
		t.Fatal(err)
	}
	if m := await(t, c.Messages(), 5*time.Second, "the good frame"); string(m.Payload) != "ok" {
		t.Errorf("delivered %q", m.Payload)
	}
	conn.SendDatagram([]byte{3, 1, 0})
	eventually(t, 5*time.Second, "the malformed frame and datagram counted", func() bool {
		return c.Stats().MalformedMessages == 2
	})
	if err := c.Err(); err != nil || !c.Stats().Connected {
		t.Errorf("client stopped: %v", err)
	}
	if !strings.Contains(logs.String(), "malformed message frame; stream stopped") {
		t.Errorf("log lacks the malformed frame:\n%s", logs.String())
	}
}

// TestPayloadLimits: the limits users see are the wire codec's.
func TestPayloadLimits(t *testing.T) {
	if MaxReliablePayload != wire.MaxReliablePayload || MaxUnreliablePayload != wire.MaxUnreliablePayload {
		t.Errorf("payload limits %d, %d; the wire codec's %d, %d", MaxReliablePayload, MaxUnreliablePayload,
			wire.MaxReliablePayload, wire.MaxUnreliablePayload)
	}
}

// TestLargestReliableAfterAnyFill: whatever the client sent before, once
// the server has read it all, a reliable message of the largest size is
// taken. Sends never wait, so the message must fit whole in the flow-control
// credit, and quic-go advertises more credit only once a quarter of its
// window is consumed: the server's windows must hold the largest message
// in three quarters of them, or a client can be refused for ever.
func TestLargestReliableAfterAnyFill(t *testing.T) {
	srv, fromClients := messageServer(t, ServerConfig{})
	c := syncedClient(t, srv, ClientConfig{})
	big := Message{Payload: make([]byte, MaxReliablePayload), Reliable: true}
	small := Message{Payload: make([]byte, 1000), Reliable: true}
	for fill := 0; fill <= 100; fill += 4 { // KB sent before the big one
		for i := range fill {
			sendAsReadersKeepUp(t, fmt.Sprintf("fill %d, small message %d", fill, i), func() error { return c.Send(small) })
		}
		sendAsReadersKeepUp(t, fmt.Sprintf("the largest message after %d KB", fill), func() error { return c.Send(big) })
		for range fill + 1 {
			await(t, fromClients, 5*time.Second, "the server to read the messages")
		}
	}
}

// TestOnMessageSubscribers subscribes two handlers: each gets every
// message; after one cancels, only the other; with none, messages are
// dropped and counted. Reliable messages, so none is lost on the way.
func TestOnMessageSubscribers(t *testing.T) {
	srv := startServer(t, ServerConfig{})
	a, b := make(chan string, 8), make(chan string, 8)
	cancelA := srv.OnMessage(func(_ ClientID, m Message) { a <- string(m.Payload) })
	cancelB := srv.OnMessage(func(_ ClientID, m Message) { b <- string(m.Payload) })
	c := syncedClient(t, srv, ClientConfig{})
	send := func(s string) {
		t.Helper()
		if err := c.Send(Message{Payload: []byte(s), Reliable: true}); err != nil {
			t.Fatal(err)
		}
	}
	send("one")
	if ga, gb := await(t, a, 5*time.Second, "a: one"), await(t, b, 5*time.Second, "b: one"); ga != "one" || gb != "one" {
		t.Fatalf("got %q and %q, want one twice", ga, gb)
	}
	cancelA()
	cancelA() // idempotent
	send("two")
	if gb := await(t, b, 5*time.Second, "b: two"); gb != "two" {
		t.Fatalf("b got %q, want two", gb)
	}
	cancelB()
	send("three")
	eventually(t, 5*time.Second, "the message dropped", func() bool { return srv.Stats().MessagesDropped == 1 })
	select {
	case m := <-a:
		t.Errorf("a got %q after cancel", m)
	case m := <-b:
		t.Errorf("b got %q after cancel", m)
	default:
	}
}
