// Package transport carries netclock's time over QUIC. A Server owns the
// authoritative clock and tick system and answers pings (QUIC datagrams,
// stamped on arrival and departure); a Client estimates the server clock
// from them and, once synced, runs a ticksys.System in step with it. Game
// messages (Message) share the connection, stamped with their network time.
//
// Names: SharedTime is the server clock now (Server.SharedTime, estimated
// by Client.SharedTime); the System's PredictedTime and ServerTime are
// NGO's predicted and server time, ahead of and behind it; Client.Clock is
// the client's own, unsynchronized clock.
//
// A Server withstands hostile peers (admission limits, bounded memory per
// connection, stateless resets: see the README). Clients grade their link
// (Quality) and report their sync (ClientInfo.Report), live in DebugHandler.
package transport

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/internal/wire"
)

// ALPN is the TLS application protocol netclock speaks (ErrALPN otherwise).
const ALPN = "netclock/1"

// wireVersion is the protocol version a peer speaks: v, or by default
// wire.ProtocolVersion (tests speak others).
func wireVersion(v uint16) uint16 {
	if v == 0 {
		return wire.ProtocolVersion
	}
	return v
}

// Errors of this package wrap one of these, keeping quic-go's in the chain.
var (
	ErrVersionMismatch  = errors.New("transport: protocol version mismatch")
	ErrTickRateMismatch = errors.New("transport: tick rate mismatch")               // see ClientConfig.AcceptServerRate
	ErrServerFull       = errors.New("transport: server full")                      // ServerConfig.MaxClients
	ErrRefused          = errors.New("transport: connection refused by the server") // by admission or Admit; Reconnect retries
	ErrALPN             = errors.New("transport: peer does not speak " + ALPN + " (TLS ALPN mismatch)")
	// ErrCertificateMismatch: not the pinned certificate nor signed by it (another server, or a new DevCertificate).
	ErrCertificateMismatch = errors.New("transport: the server's certificate does not match the pinned certificate")
	ErrProtocol            = errors.New("transport: protocol violation") // a malformed hello or frame
	ErrInvalidConfig       = errors.New("transport: invalid config")
	ErrServerClosed        = errors.New("transport: server closed") // Serve after Close
	ErrClosed              = errors.New("transport: client closed")
	ErrTooLarge            = errors.New("transport: message too large") // or too large for this path
	ErrNotConnected        = errors.New("transport: not connected")     // reconnecting: not sent
	ErrUnknownClient       = errors.New("transport: unknown client")
	ErrBackpressure        = errors.New("transport: peer is not reading fast enough") // flow control full: nothing sent
)

// CodeGoingAway is the QUIC error code of a Server's shutdown (Client.Err).
const CodeGoingAway quic.ApplicationErrorCode = 0x5

// QUIC application error codes of the other closes.
const (
	codeNoError           quic.ApplicationErrorCode = 0x0
	codeProtocolViolation quic.ApplicationErrorCode = 0x1
	codeVersionMismatch   quic.ApplicationErrorCode = 0x2
	codeTickRateMismatch  quic.ApplicationErrorCode = 0x3
	codeServerFull        quic.ApplicationErrorCode = 0x4
)

// statusCode maps a refusal to the error code the connection closes with.
func statusCode(s wire.Status) quic.ApplicationErrorCode {
	switch s {
	case wire.StatusVersionMismatch:
		return codeVersionMismatch
	case wire.StatusTickRateMismatch:
		return codeTickRateMismatch
	case wire.StatusServerFull:
		return codeServerFull
	}
	return codeProtocolViolation
}

// codeError maps a close code received from the peer to a sentinel, or nil.
func codeError(c quic.ApplicationErrorCode) error {
	switch c {
	case codeVersionMismatch:
		return ErrVersionMismatch
	case codeTickRateMismatch:
		return ErrTickRateMismatch
	case codeServerFull:
		return ErrServerFull
	case codeProtocolViolation:
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

// Modes: datagrams unless the peers did not both enable them.
const (
	ModeDatagram Mode = iota + 1 // QUIC datagrams
	ModeStream                   // the fallback: a stream, head-of-line blocked
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
