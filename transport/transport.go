// Package transport carries netclock's time protocol over QUIC (quic-go): a
// versioned handshake that agrees on the tick rate, then ping/pong exchanges
// whose four timestamps feed the client's clock estimator.
//
// A Server owns the authoritative clock and tick system; it answers every
// ping on the connection's own goroutine, stamping the receive time right
// after the datagram arrives and the send time right before the pong leaves,
// so one slow client never delays another's timestamps. A Client measures
// the server clock with a start burst and a steady ping rate, steers a
// provider.Client by the estimate, and, once synced, exposes a
// ticksys.System running at the server's tick rate.
//
// Pings travel as QUIC datagrams (RFC 9221): unreliable, so a lost ping is
// simply a missing sample, never a retransmitted (and therefore late) one.
// If the peers did not both enable datagrams, they fall back to frames on a
// second bidirectional stream, which works but suffers head-of-line blocking
// under loss; ClientStats.Mode and ServerStats.StreamClients report it.
//
// The wire format is in wire.go; TLS helpers for development in tls.go.
package transport

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/quic-go/quic-go"
)

// Errors of the handshake and of the API. Errors returned by this package
// wrap one of them (or one of the wire codec's, ErrMalformed and
// ErrVersion) with %w, and keep the underlying quic-go error in the chain.
var (
	// ErrVersionMismatch: client and server speak different protocol
	// versions.
	ErrVersionMismatch = errors.New("transport: protocol version mismatch")
	// ErrTickRateMismatch: the client wants a tick rate the server does
	// not run at (see ClientConfig.AcceptServerRate).
	ErrTickRateMismatch = errors.New("transport: tick rate mismatch")
	// ErrServerFull: the server has ServerConfig.MaxClients clients.
	ErrServerFull = errors.New("transport: server full")
	// ErrALPN: the peer does not speak netclock's application protocol
	// (ALPN "netclock/1"); the TLS handshake failed.
	ErrALPN = errors.New("transport: peer does not speak " + ALPN + " (TLS ALPN mismatch)")
	// ErrProtocol: the peer broke the protocol (a malformed hello or
	// frame, or no hello in time).
	ErrProtocol = errors.New("transport: protocol violation")
	// ErrInvalidConfig wraps every configuration error.
	ErrInvalidConfig = errors.New("transport: invalid config")
	// ErrServerClosed is returned by Serve after Close.
	ErrServerClosed = errors.New("transport: server closed")
	// ErrClosed is returned by a Client's methods after Close.
	ErrClosed = errors.New("transport: client closed")
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
func statusCode(s Status) quic.ApplicationErrorCode {
	switch s {
	case StatusVersionMismatch:
		return CodeVersionMismatch
	case StatusTickRateMismatch:
		return CodeTickRateMismatch
	case StatusServerFull:
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

// DefaultHelloTimeout is how long either side waits for the other's hello
// when the config leaves HelloTimeout zero.
const DefaultHelloTimeout = 5 * time.Second

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
