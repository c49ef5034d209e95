// Package transport carries netclock's time protocol over QUIC (quic-go): a
// versioned handshake that agrees on the tick rate, then ping/pong exchanges
// whose four timestamps feed the client's clock estimator.
//
// A Server owns the authoritative clock and tick system; it answers every
// ping on the connection's own goroutine, stamping the receive time right
// after the datagram arrives and the send time right before the pong leaves,
// so one slow client never delays another's timestamps. A Client measures
// the server clock with a start burst and a steady ping rate, steers a
// provider.Client by the estimate, and, once synced (Client.WaitSynced),
// exposes a ticksys.System running at the server's tick rate.
//
// Pings travel as QUIC datagrams (RFC 9221): unreliable, so a lost ping is
// simply a missing sample, never a retransmitted (and therefore late) one.
// If the peers did not both enable datagrams, they fall back to frames on a
// second bidirectional stream, which works but suffers head-of-line blocking
// under loss; ClientStats.Mode and ServerStats.StreamClients report it.
//
// Over the same connection, both sides send their own messages the same
// way: a Message, stamped with the network time it belongs to (a
// nettime.Time), reliable (frames on one unidirectional stream per
// direction) or not (QUIC datagrams), to Client.Send, Server.Send or
// Server.Broadcast, received from Client.Messages or Server.OnMessage.
// No send waits for the network: a reliable message the peer's flow
// control cannot take now returns ErrBackpressure. Client.Age and
// Server.Age say how long ago a stamp was in shared time.
//
// With ClientConfig.Reconnect, a client whose connection is lost redials
// with backoff; if the server restarted meanwhile (its session epoch
// changed), the client resynchronizes and reinitializes its System, which
// fires a ResetEvent with ticksys.ReasonReinitialize. The System object stays
// the same, so subscriptions survive.
//
// A Server is built to face hostile peers: it admits connections under
// limits checked before the TLS handshake (ServerConfig.MaxClients,
// MaxClientsPerSource, HandshakeRate, Admit; a refused client gets
// ErrRefused), bounds the memory each connection can cost it (see Server),
// and ends a previous run's connections at their first packet with a
// stateless reset (ServerConfig.StatelessResetKey), so that a client of a
// restarted server reports not synchronized and reconnects at once.
//
// Each client reports its sync quality (error bound, estimator state,
// delays, scales, resets) to the server in a ping once a second
// (ClientInfo.Report), and grades its connection Good, Fair or Poor
// (Quality, ClientConfig.OnQualityChange). Server.DebugHandler and
// Client.DebugHandler serve a live view of all of it: a self-updating page
// of tables and charts.
//
// For development, DevCertificate makes a self-signed certificate that a
// server presents and its clients pin (DevCert.ClientTLS in the same
// process, PinnedClientTLS with its PEM in another).
package transport

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/internal/wire"
)

// ALPN is the TLS application protocol netclock speaks. The server accepts
// no other; a peer offering none of it fails the TLS handshake (ErrALPN).
const ALPN = "netclock/1"

// wireVersion is the protocol version a peer speaks: v, or by default
// wire.ProtocolVersion (tests speak others).
func wireVersion(v uint16) uint16 {
	if v == 0 {
		return wire.ProtocolVersion
	}
	return v
}

// Errors of the handshake and of the API. Errors returned by this package
// wrap one of them with %w, and keep the underlying quic-go error in the
// chain.
var (
	// ErrVersionMismatch: client and server speak different protocol
	// versions.
	ErrVersionMismatch = errors.New("transport: protocol version mismatch")
	// ErrTickRateMismatch: the client wants a tick rate the server does
	// not run at (see ClientConfig.AcceptServerRate).
	ErrTickRateMismatch = errors.New("transport: tick rate mismatch")
	// ErrServerFull: the server has ServerConfig.MaxClients clients.
	ErrServerFull = errors.New("transport: server full")
	// ErrRefused: the server refused the connection before its TLS
	// handshake (QUIC's CONNECTION_REFUSED): too many connections from
	// this address, too many handshakes a second, the server at capacity,
	// or its admission hook (ServerConfig.MaxClientsPerSource,
	// HandshakeRate, MaxClients, Admit). A Reconnect retries it with
	// backoff.
	ErrRefused = errors.New("transport: connection refused by the server")
	// ErrALPN: the peer does not speak netclock's application protocol
	// (ALPN "netclock/1"); the TLS handshake failed.
	ErrALPN = errors.New("transport: peer does not speak " + ALPN + " (TLS ALPN mismatch)")
	// ErrCertificateMismatch: the server's certificate is not one the
	// client pins (TLSConfig with RootCAs: PinnedClientTLS,
	// DevCert.ClientTLS, a private CA), nor signed by one: another server
	// answered, or its certificate was made anew (a DevCertificate is new
	// each run unless saved). The TLS handshake failed; crypto/x509's
	// error is in the chain. Reconnect does not retry it.
	ErrCertificateMismatch = errors.New("transport: the server's certificate does not match the pinned certificate")
	// ErrProtocol: the peer broke the protocol (a malformed hello or
	// frame, or no hello in time).
	ErrProtocol = errors.New("transport: protocol violation")
	// ErrInvalidConfig wraps every configuration error.
	ErrInvalidConfig = errors.New("transport: invalid config")
	// ErrServerClosed is returned by Serve after Close.
	ErrServerClosed = errors.New("transport: server closed")
	// ErrClosed is returned by a Client's methods after Close.
	ErrClosed = errors.New("transport: client closed")
	// ErrTooLarge: a message payload exceeds MaxUnreliablePayload
	// (unreliable) or MaxReliablePayload (reliable), or QUIC could not fit
	// a datagram in a packet on this path.
	ErrTooLarge = errors.New("transport: message too large")
	// ErrNotConnected: the client has no connection now (it is
	// reconnecting); the message was not sent.
	ErrNotConnected = errors.New("transport: not connected")
	// ErrUnknownClient: Server.Send was given a ClientID that is not
	// connected (never was, or has disconnected).
	ErrUnknownClient = errors.New("transport: unknown client")
	// ErrBackpressure: a reliable message (or, in ModeStream, an
	// unreliable one) could not be handed to QUIC whole without waiting,
	// because the peer is not reading fast enough (QUIC flow control);
	// nothing of it was sent. Sends never wait: try again later, or drop
	// it.
	ErrBackpressure = errors.New("transport: peer is not reading fast enough")
)

// Application error codes netclock closes QUIC connections with. The peer
// sees them in a *quic.ApplicationError.
const (
	// CodeNoError: a normal close.
	CodeNoError quic.ApplicationErrorCode = 0x0
	// CodeProtocolViolation: a malformed hello or frame, or no hello in
	// time.
	CodeProtocolViolation quic.ApplicationErrorCode = 0x1
	// CodeVersionMismatch: the handshake found different protocol
	// versions.
	CodeVersionMismatch quic.ApplicationErrorCode = 0x2
	// CodeTickRateMismatch: the handshake found different tick rates.
	CodeTickRateMismatch quic.ApplicationErrorCode = 0x3
	// CodeServerFull: the server refused a client beyond MaxClients.
	CodeServerFull quic.ApplicationErrorCode = 0x4
	// CodeGoingAway: the server is shutting down.
	CodeGoingAway quic.ApplicationErrorCode = 0x5
)

// statusCode maps a refusal to the error code the connection closes with.
func statusCode(s wire.Status) quic.ApplicationErrorCode {
	switch s {
	case wire.StatusVersionMismatch:
		return CodeVersionMismatch
	case wire.StatusTickRateMismatch:
		return CodeTickRateMismatch
	case wire.StatusServerFull:
		return CodeServerFull
	}
	return CodeProtocolViolation
}

// codeError maps a close code received from the peer to a sentinel, or nil.
func codeError(c quic.ApplicationErrorCode) error {
	switch c {
	case CodeVersionMismatch:
		return ErrVersionMismatch
	case CodeTickRateMismatch:
		return ErrTickRateMismatch
	case CodeServerFull:
		return ErrServerFull
	case CodeProtocolViolation:
		return ErrProtocol
	}
	return nil
}

// alertNoApplicationProtocol is the QUIC transport error code of the TLS
// alert no_application_protocol (120): crypto errors are 0x100 + alert.
const alertNoApplicationProtocol quic.TransportErrorCode = 0x100 + 120

// isALPNError reports whether err is a TLS handshake failure over ALPN.
func isALPNError(err error) bool {
	var te *quic.TransportError
	return errors.As(err, &te) && te.ErrorCode == alertNoApplicationProtocol
}

// Mode is how pings travel on a connection.
type Mode int

const (
	// ModeDatagram: QUIC datagrams, the default.
	ModeDatagram Mode = iota + 1
	// ModeStream: frames on a second bidirectional stream, the fallback
	// when the peers did not both enable datagrams.
	ModeStream
)

// String returns "datagram" or "stream".
func (m Mode) String() string {
	switch m {
	case ModeDatagram:
		return "datagram"
	case ModeStream:
		return "stream"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// modeOf returns the mode both ends of conn derive from the negotiated
// transport parameters, so they agree without a message.
func modeOf(conn *quic.Conn) Mode {
	d := conn.ConnectionState().SupportsDatagrams
	if d.Local && d.Remote {
		return ModeDatagram
	}
	return ModeStream
}

// defaultHelloTimeout is how long either side waits for the other's hello
// when the config leaves HelloTimeout zero.
const defaultHelloTimeout = 5 * time.Second

// QUIC defaults both sides use unless their QUICConfig sets the field.
// quic-go's own defaults (no keep-alive, 30 s idle timeout) are tuned for
// request/response traffic; a netclock session wants a lost peer noticed
// within seconds, so that a client can reconnect (ClientConfig.Reconnect)
// and a server can free the slot. The idle timeout in effect is the smaller
// of the two sides'.
const (
	// defaultKeepAlivePeriod is how often an otherwise idle connection
	// sends a keep-alive packet (2 s). Pings keep a healthy client's
	// connection busy anyway; the keep-alive matters while pings are
	// lost or held up. A negative QUICConfig.KeepAlivePeriod disables it.
	defaultKeepAlivePeriod = 2 * time.Second
	// defaultMaxIdleTimeout is how long a connection may receive nothing
	// before it is closed as dead (10 s): five keep-alive periods.
	defaultMaxIdleTimeout = 10 * time.Second
)

// Flow-control windows of the server unless its QUICConfig sets them.
// quic-go's defaults (512 KiB per stream growing to 6 MiB, 15 MiB per
// connection) are sized for bulk transfers; netclock carries pings and game
// messages of at most 64 KiB, and whatever a client sends that is not read
// yet sits in these windows, so they bound what a client can make the
// server buffer. Clients keep quic-go's defaults: they trust their server.
const (
	// defaultStreamReceiveWindow is the initial and the largest receive
	// window of a stream on the server (96 KiB). A send never waits for
	// flow control, so a reliable message must fit whole in the credit
	// the client has; quic-go advertises more only once a quarter of the
	// window is consumed, so three quarters of it (72 KiB) must hold the
	// largest message (64 KiB and its header), or a client could be
	// refused it for ever (TestLargestReliableAfterAnyFill).
	defaultStreamReceiveWindow = 96 << 10
	// defaultConnectionReceiveWindow is the initial and the largest
	// receive window of a connection on the server, all streams together
	// (96 KiB; at least defaultStreamReceiveWindow, for the same reason).
	defaultConnectionReceiveWindow = 96 << 10
)

// Streams the protocol lets a peer open at once. The client opens two
// bidirectional streams (the hello, and the ping stream of the fallback)
// and one unidirectional stream for its reliable messages; the server opens
// one unidirectional stream only. A stream's slot is freed when it ends, so
// a side that replaces a failed message stream can open another. On the
// server these limits bound a client to one partially received message
// frame at a time.
const (
	serverMaxBidiStreams = 2
	serverMaxUniStreams  = 1
	clientMaxBidiStreams = -1 // quic-go: none
	clientMaxUniStreams  = 1
)

// quicConfig returns a clone of user (or a fresh config) with netclock's
// keep-alive and idle-timeout defaults filled in, and the stream limits of
// the protocol (bidi, uni) set whatever user says.
func quicConfig(user *quic.Config, bidi, uni int64) *quic.Config {
	q := &quic.Config{}
	if user != nil {
		q = user.Clone()
	}
	switch {
	case q.KeepAlivePeriod == 0:
		q.KeepAlivePeriod = defaultKeepAlivePeriod
	case q.KeepAlivePeriod < 0:
		q.KeepAlivePeriod = 0 // quic-go: no keep-alive
	}
	if q.MaxIdleTimeout == 0 {
		q.MaxIdleTimeout = defaultMaxIdleTimeout
	}
	q.MaxIncomingStreams, q.MaxIncomingUniStreams = bidi, uni
	return q
}

// serverQUICConfig is quicConfig for a server: its stream limits, and the
// server's flow-control windows unless user sets them.
func serverQUICConfig(user *quic.Config) *quic.Config {
	q := quicConfig(user, serverMaxBidiStreams, serverMaxUniStreams)
	if q.InitialStreamReceiveWindow == 0 {
		q.InitialStreamReceiveWindow = defaultStreamReceiveWindow
	}
	if q.MaxStreamReceiveWindow == 0 {
		q.MaxStreamReceiveWindow = max(q.InitialStreamReceiveWindow, defaultStreamReceiveWindow)
	}
	if q.InitialConnectionReceiveWindow == 0 {
		q.InitialConnectionReceiveWindow = defaultConnectionReceiveWindow
	}
	if q.MaxConnectionReceiveWindow == 0 {
		q.MaxConnectionReceiveWindow = max(q.InitialConnectionReceiveWindow, defaultConnectionReceiveWindow)
	}
	q.EnableDatagrams = true
	return q
}

// Stream error codes netclock resets or stops message streams with.
const (
	// streamCodeMalformed: a malformed message frame; the reader stopped
	// the stream.
	streamCodeMalformed quic.StreamErrorCode = 0x1
	// streamCodeTimeout: a message frame did not arrive whole within
	// the frame timeout; the reader stopped the stream.
	streamCodeTimeout quic.StreamErrorCode = 0x2
	// streamCodeDone: the reader needs nothing more on this stream (the
	// hello stream after the hello); whatever follows is discarded.
	streamCodeDone quic.StreamErrorCode = 0x3
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
