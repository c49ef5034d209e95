// Package wire is netclock's wire format: the hellos of the handshake, the
// ping and pong datagrams, the stream frames of the fallback, and the user
// messages' encoding. Only package transport uses it; the layouts are
// documented here for implementers of other clients.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/netclock/netclock/nettime"
)

// The protocol. Every message has a fixed, big-endian layout. The
// handshake travels on the first bidirectional stream the client opens; the
// pings and pongs travel as QUIC datagrams (RFC 9221), or, when the peers did
// not negotiate datagrams, as frames on a second bidirectional stream.
//
//	ClientHello  "NCLK" version:u16 tickRate:u32                                  10 bytes
//	ServerHello  "NCLK" version:u16 status:u8 tickRate:u32 epoch:u64 time:i64     27 bytes
//	Ping         type=1:u8 version:u8 seq:u32 t1:i64                              14 bytes
//	             (+ a Report: 67 bytes; see report.go)
//	Pong         type=2:u8 version:u8 seq:u32 t1:i64 t2:i64 t3:i64                30 bytes
//	Frame        length:u16 payload                                    (stream fallback)
//	Message      type=3:u8 version:u8 stamp:13 payload                   15+n bytes
//	MessageFrame length:u32 Message                     (reliable messages, on streams)
//
// Magic and version lead every message so that any future version can be
// recognized, and refused cleanly, from its first bytes.
//
// User messages travel as a Message in a QUIC datagram (unreliable) or as
// MessageFrames on a unidirectional stream each side opens when it first
// sends a reliable message (reliable, in order). The stamp is the binary
// encoding of a nettime.Time (nettime.Time.AppendBinary: version=1:u8
// rate:u32 ns:i64; the zero Time is all zeros but the version); the frame
// length counts the Message, header included, and is at most
// MaxMessageFrameLen.

const (
	// ProtocolVersion is the version of the wire protocol this package
	// speaks: the version field of the hellos, and (as one byte) of the
	// time datagrams.
	ProtocolVersion uint16 = 1

	// Magic opens both hellos.
	Magic = "NCLK"
)

// Lengths of the encoded messages, in bytes.
const (
	ClientHelloLen = 10
	ServerHelloLen = 27
	PingLen        = 14
	PongLen        = 30

	// MaxFrameLen is the largest payload a stream frame may carry. It
	// bounds what a peer can make us buffer; today's payloads are at most
	// PingReportLen.
	MaxFrameLen = 1024
)

// Sentinel errors of the wire codec; parse errors wrap one of them.
var (
	// ErrMalformed: the bytes are not a message of the expected kind
	// (wrong length, magic or type, or an invalid field).
	ErrMalformed = errors.New("wire: malformed message")
	// ErrVersion: a well-formed message header carrying a protocol version
	// this package does not speak.
	ErrVersion = errors.New("wire: unsupported protocol version")
)

// Status is the outcome of the handshake, sent in the ServerHello.
type Status uint8

const (
	// StatusOK: the server accepted the client.
	StatusOK Status = 0
	// StatusVersionMismatch: the server does not speak the client's
	// protocol version.
	StatusVersionMismatch Status = 1
	// StatusTickRateMismatch: the client asked for a tick rate the
	// server does not run at.
	StatusTickRateMismatch Status = 2
	// StatusServerFull: the server already has as many clients as it
	// admits.
	StatusServerFull Status = 3
)

// String returns the status's name, as in logs.
func (s Status) String() string {
	switch s {
	case StatusOK:
		return "ok"
	case StatusVersionMismatch:
		return "version-mismatch"
	case StatusTickRateMismatch:
		return "tick-rate-mismatch"
	case StatusServerFull:
		return "server-full"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// ClientHello opens the handshake.
type ClientHello struct {
	// Version is the client's protocol version. Zero encodes as
	// ProtocolVersion.
	Version uint16
	// TickRate is the tick rate the client wants, in ticks per second;
	// 0 accepts the server's.
	TickRate uint32
}

// ServerHello answers a ClientHello.
type ServerHello struct {
	// Version is the server's protocol version. Zero encodes as
	// ProtocolVersion.
	Version uint16
	// Status is the outcome; the server closes the connection after any
	// status but StatusOK.
	Status Status
	// TickRate is the server's tick rate, in ticks per second.
	TickRate uint32
	// Epoch is chosen at random each time a server starts: a client that
	// reconnects and sees another epoch knows the server restarted.
	Epoch uint64
	// ServerTime is the server clock (time since tick 0) when the hello
	// was written.
	ServerTime time.Duration
}

// Ping is a time request: the client's send time T1 on its own clock.
type Ping struct {
	// Seq numbers the pings of a connection from 0; it lets the client
	// match pongs and count losses, duplicates and reordering.
	Seq uint32
	// ClientSend is T1, the client clock reading when the ping was sent.
	ClientSend time.Duration
	// Report, if not nil, is the client's sync report, which rides on
	// about one ping a second.
	Report *Report
}

// Message is a user message as it travels: the sender's stamp and the
// payload.
type Message struct {
	// Stamp is the network time the message belongs to; the zero Time
	// means unstamped.
	Stamp nettime.Time
	// Payload is the message.
	Payload []byte
}

// Pong answers a Ping with the server's receive and send times, completing
// the NTP quadruple once the client stamps its receive time.
type Pong struct {
	// Seq and ClientSend echo the ping's.
	Seq        uint32
	ClientSend time.Duration
	// ServerReceive is T2, the server clock when the ping arrived.
	ServerReceive time.Duration
	// ServerSend is T3, the server clock when the pong left.
	ServerSend time.Duration
	// HasFeedback says whether the pong carries Feedback (PongFeedbackLen
	// bytes instead of PongLen; see feedback.go).
	HasFeedback bool
	// Feedback is the server's summary of the client's stamped arrivals.
	Feedback Feedback
}

const (
	typePing    = 1
	typePong    = 2
	typeMessage = 3
)

// HelloPrefixLen is the length of a hello's magic and version: readable
// whatever the version.
const HelloPrefixLen = 6

func wireVersion(v uint16) uint16 {
	if v == 0 {
		return ProtocolVersion
	}
	return v
}

// AppendClientHello appends the encoding of h to b.
func AppendClientHello(b []byte, h ClientHello) []byte {
	b = append(b, Magic...)
	b = binary.BigEndian.AppendUint16(b, wireVersion(h.Version))
	return binary.BigEndian.AppendUint32(b, h.TickRate)
}

// ParseClientHello decodes a ClientHello. It returns an error wrapping
// ErrVersion, together with a hello holding only the Version, if b starts
// with a valid header of another protocol version (whatever follows), and
// an error wrapping ErrMalformed for anything else that is not exactly a
// ClientHello of this version.
func ParseClientHello(b []byte) (ClientHello, error) {
	v, err := parseHelloPrefix(b, "client hello")
	if err != nil {
		return ClientHello{Version: v}, err
	}
	if len(b) != ClientHelloLen {
		return ClientHello{}, fmt.Errorf("%w: client hello of %d bytes, want %d", ErrMalformed, len(b), ClientHelloLen)
	}
	return ClientHello{Version: v, TickRate: binary.BigEndian.Uint32(b[6:])}, nil
}

// AppendServerHello appends the encoding of h to b.
func AppendServerHello(b []byte, h ServerHello) []byte {
	b = append(b, Magic...)
	b = binary.BigEndian.AppendUint16(b, wireVersion(h.Version))
	b = append(b, byte(h.Status))
	b = binary.BigEndian.AppendUint32(b, h.TickRate)
	b = binary.BigEndian.AppendUint64(b, h.Epoch)
	return binary.BigEndian.AppendUint64(b, uint64(h.ServerTime))
}

// ParseServerHello decodes a ServerHello, with errors as ParseClientHello.
// A status this package does not know is ErrMalformed.
func ParseServerHello(b []byte) (ServerHello, error) {
	v, err := parseHelloPrefix(b, "server hello")
	if err != nil {
		return ServerHello{Version: v}, err
	}
	if len(b) != ServerHelloLen {
		return ServerHello{}, fmt.Errorf("%w: server hello of %d bytes, want %d", ErrMalformed, len(b), ServerHelloLen)
	}
	h := ServerHello{
		Version:    v,
		Status:     Status(b[6]),
		TickRate:   binary.BigEndian.Uint32(b[7:]),
		Epoch:      binary.BigEndian.Uint64(b[11:]),
		ServerTime: time.Duration(binary.BigEndian.Uint64(b[19:])),
	}
	if h.Status > StatusServerFull {
		return ServerHello{}, fmt.Errorf("%w: server hello status %d", ErrMalformed, b[6])
	}
	return h, nil
}

// parseHelloPrefix checks the magic and returns the version, with an error
// wrapping ErrVersion if it is not ProtocolVersion.
func parseHelloPrefix(b []byte, what string) (uint16, error) {
	if len(b) < HelloPrefixLen {
		return 0, fmt.Errorf("%w: %s of %d bytes", ErrMalformed, what, len(b))
	}
	if string(b[:4]) != Magic {
		return 0, fmt.Errorf("%w: %s magic %q, want %q", ErrMalformed, what, b[:4], Magic)
	}
	v := binary.BigEndian.Uint16(b[4:])
	if v != ProtocolVersion {
		return v, fmt.Errorf("%w: %s version %d, want %d", ErrVersion, what, v, ProtocolVersion)
	}
	return v, nil
}

// AppendPing appends the encoding of p to b: PingLen bytes, or
// PingReportLen with a Report.
func AppendPing(b []byte, p Ping) []byte {
	b = append(b, typePing, byte(ProtocolVersion))
	b = binary.BigEndian.AppendUint32(b, p.Seq)
	b = binary.BigEndian.AppendUint64(b, uint64(p.ClientSend))
	if p.Report != nil {
		b = AppendReport(b, *p.Report)
	}
	return b
}

// ParsePing decodes a Ping, with its Report if it has one. Errors wrap
// ErrVersion for a ping of another version, ErrMalformed for anything else
// that is not exactly a Ping of PingLen or PingReportLen bytes with a
// valid report (see ParseReport).
func ParsePing(b []byte) (Ping, error) {
	n := PingLen
	if len(b) == PingReportLen {
		n = PingReportLen
	}
	if err := parseDatagramHeader(b, typePing, n); err != nil {
		return Ping{}, err
	}
	p := Ping{
		Seq:        binary.BigEndian.Uint32(b[2:]),
		ClientSend: time.Duration(binary.BigEndian.Uint64(b[6:])),
	}
	if n == PingReportLen {
		r, err := ParseReport(b[PingLen:])
		if err != nil {
			return Ping{}, fmt.Errorf("ping: %w", err)
		}
		p.Report = &r
	}
	return p, nil
}

// AppendPong appends the encoding of p to b.
func AppendPong(b []byte, p Pong) []byte {
	b = append(b, typePong, byte(ProtocolVersion))
	b = binary.BigEndian.AppendUint32(b, p.Seq)
	b = binary.BigEndian.AppendUint64(b, uint64(p.ClientSend))
	b = binary.BigEndian.AppendUint64(b, uint64(p.ServerReceive))
	b = binary.BigEndian.AppendUint64(b, uint64(p.ServerSend))
	if p.HasFeedback {
		b = appendFeedback(b, p.Feedback)
	}
	return b
}

// ParsePong decodes a Pong of PongLen bytes, or of PongFeedbackLen with its
// Feedback, with errors as ParsePing.
func ParsePong(b []byte) (Pong, error) {
	n := PongLen
	if len(b) == PongFeedbackLen {
		n = PongFeedbackLen
	}
	if err := parseDatagramHeader(b, typePong, n); err != nil {
		return Pong{}, err
	}
	p := Pong{
		Seq:           binary.BigEndian.Uint32(b[2:]),
		ClientSend:    time.Duration(binary.BigEndian.Uint64(b[6:])),
		ServerReceive: time.Duration(binary.BigEndian.Uint64(b[14:])),
		ServerSend:    time.Duration(binary.BigEndian.Uint64(b[22:])),
	}
	if n == PongFeedbackLen {
		f, err := parseFeedback(b[PongLen:])
		if err != nil {
			return Pong{}, err
		}
		p.Feedback, p.HasFeedback = f, true
	}
	return p, nil
}

func parseDatagramHeader(b []byte, typ byte, n int) error {
	name := "ping"
	if typ == typePong {
		name = "pong"
	}
	switch {
	case len(b) < 2:
		return fmt.Errorf("%w: %s of %d bytes", ErrMalformed, name, len(b))
	case b[0] != typ:
		return fmt.Errorf("%w: message type %d, want %d (%s)", ErrMalformed, b[0], typ, name)
	case b[1] != byte(ProtocolVersion):
		return fmt.Errorf("%w: %s version %d, want %d", ErrVersion, name, b[1], ProtocolVersion)
	case len(b) != n:
		return fmt.Errorf("%w: %s of %d bytes, want %d", ErrMalformed, name, len(b), n)
	}
	return nil
}

// AppendFrame appends payload as a stream frame: its length, then itself.
// It panics if payload is longer than MaxFrameLen (a programming error:
// every message is far shorter).
func AppendFrame(b, payload []byte) []byte {
	if len(payload) > MaxFrameLen {
		panic(fmt.Sprintf("wire: frame payload of %d bytes exceeds %d", len(payload), MaxFrameLen))
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(payload)))
	return append(b, payload...)
}

// ParseFrame splits the first frame off b, returning its payload (aliasing
// b) and the bytes after it. The error wraps ErrMalformed if b holds less
// than a whole frame or the length exceeds MaxFrameLen.
func ParseFrame(b []byte) (payload, rest []byte, err error) {
	if len(b) < 2 {
		return nil, b, fmt.Errorf("%w: frame header of %d bytes", ErrMalformed, len(b))
	}
	n := int(binary.BigEndian.Uint16(b))
	if n > MaxFrameLen {
		return nil, b, fmt.Errorf("%w: frame of %d bytes exceeds %d", ErrMalformed, n, MaxFrameLen)
	}
	if len(b)-2 < n {
		return nil, b, fmt.Errorf("%w: frame of %d bytes truncated to %d", ErrMalformed, n, len(b)-2)
	}
	return b[2 : 2+n], b[2+n:], nil
}

// Sizes of user messages, in bytes.
const (
	// StampLen is the length of an encoded stamp (a nettime.Time).
	StampLen = 13
	// MessageHeaderLen is the length of a Message's header: type,
	// version and stamp.
	MessageHeaderLen = 2 + StampLen
	// MaxReliablePayload is the largest payload of a reliable message
	// (64 KiB). It bounds what a peer can make us buffer per frame.
	MaxReliablePayload = 64 << 10
	// MaxDatagramMessageLen is the largest unreliable message on the wire,
	// header included: it fits a QUIC datagram in a 1200-byte packet, the
	// size every QUIC path carries, with room for QUIC's headers.
	MaxDatagramMessageLen = 1100
	// MaxUnreliablePayload is the largest payload of an unreliable
	// message: MaxDatagramMessageLen less the header (1085 bytes).
	MaxUnreliablePayload = MaxDatagramMessageLen - MessageHeaderLen
	// MaxMessageFrameLen is the largest length a MessageFrame may carry:
	// a Message with MaxReliablePayload bytes of payload.
	MaxMessageFrameLen = MessageHeaderLen + MaxReliablePayload
	// messageFrameHeaderLen is the length prefix of a MessageFrame.
	messageFrameHeaderLen = 4
)

// AppendMessage appends the wire encoding of m to b. Callers bound the payload
// (MaxUnreliablePayload, MaxReliablePayload); ParseMessage rejects more
// than MaxReliablePayload.
func AppendMessage(b []byte, m Message) []byte {
	b = append(b, typeMessage, byte(ProtocolVersion))
	b, _ = m.Stamp.AppendBinary(b) // never fails
	return append(b, m.Payload...)
}

// ParseMessage decodes a Message: Stamp and Payload, which aliases b. Errors
// wrap ErrVersion for a message of another version, ErrMalformed for
// anything else that is not a Message: a short header, an invalid stamp (a
// bad rate or out of range: nettime's error is wrapped too), a payload over
// MaxReliablePayload.
func ParseMessage(b []byte) (Message, error) {
	switch {
	case len(b) < 2:
		return Message{}, fmt.Errorf("%w: message of %d bytes", ErrMalformed, len(b))
	case b[0] != typeMessage:
		return Message{}, fmt.Errorf("%w: message type %d, want %d (message)", ErrMalformed, b[0], typeMessage)
	case b[1] != byte(ProtocolVersion):
		return Message{}, fmt.Errorf("%w: message version %d, want %d", ErrVersion, b[1], ProtocolVersion)
	case len(b) < MessageHeaderLen:
		return Message{}, fmt.Errorf("%w: message of %d bytes, shorter than its %d-byte header",
			ErrMalformed, len(b), MessageHeaderLen)
	case len(b)-MessageHeaderLen > MaxReliablePayload:
		return Message{}, fmt.Errorf("%w: message payload of %d bytes exceeds %d",
			ErrMalformed, len(b)-MessageHeaderLen, MaxReliablePayload)
	}
	var stamp nettime.Time
	if err := stamp.UnmarshalBinary(b[2:MessageHeaderLen]); err != nil {
		return Message{}, fmt.Errorf("%w: message stamp: %w", ErrMalformed, err)
	}
	return Message{Stamp: stamp, Payload: b[MessageHeaderLen:]}, nil
}

// AppendMessageFrame appends m as a stream frame, its length then itself.
func AppendMessageFrame(b []byte, m Message) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(MessageHeaderLen+len(m.Payload)))
	return AppendMessage(b, m)
}

// ParseMessageFrame splits the first MessageFrame off b and decodes its
// Message (whose Payload aliases b), returning the bytes after it. Errors
// wrap ErrMalformed if b holds less than a whole frame or the length is
// outside [MessageHeaderLen, MaxMessageFrameLen], and otherwise are
// ParseMessage's.
func ParseMessageFrame(b []byte) (m Message, rest []byte, err error) {
	n, err := messageFrameLen(b)
	if err != nil {
		return Message{}, b, err
	}
	if len(b)-messageFrameHeaderLen < n {
		return Message{}, b, fmt.Errorf("%w: message frame of %d bytes truncated to %d",
			ErrMalformed, n, len(b)-messageFrameHeaderLen)
	}
	end := messageFrameHeaderLen + n
	m, err = ParseMessage(b[messageFrameHeaderLen:end])
	if err != nil {
		return Message{}, b, err
	}
	return m, b[end:], nil
}

// messageFrameLen reads and checks a MessageFrame's length prefix.
func messageFrameLen(b []byte) (int, error) {
	if len(b) < messageFrameHeaderLen {
		return 0, fmt.Errorf("%w: message frame header of %d bytes", ErrMalformed, len(b))
	}
	n := binary.BigEndian.Uint32(b)
	if n < MessageHeaderLen || n > MaxMessageFrameLen {
		return 0, fmt.Errorf("%w: message frame length %d outside [%d, %d]",
			ErrMalformed, n, MessageHeaderLen, MaxMessageFrameLen)
	}
	return int(n), nil
}

// IsMessage reports whether datagram b claims to be a Message (its type
// byte), as opposed to a ping or pong.
func IsMessage(b []byte) bool { return len(b) > 0 && b[0] == typeMessage }
