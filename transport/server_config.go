package transport

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/ticksys"
)

// DefaultTickRate is the server's tick rate, in ticks per second, when
// ServerConfig.TickRate is zero.
const DefaultTickRate = ticksys.DefaultTickRate

// defaultFrameTimeout is ServerConfig.FrameTimeout's default.
const defaultFrameTimeout = 10 * time.Second

// ServerConfig configures a Server.
type ServerConfig struct {
	// TickRate is the server's tick rate in ticks per second, announced
	// in the handshake. Default: 60.
	TickRate uint32
	// Start is the server time (since tick 0) at which the server clock
	// starts when Serve is called. Default: 0.
	Start time.Duration
	// TLSConfig holds the server's certificate. Required. The server uses
	// a clone with NextProtos set to ALPN; see DevCertificate for
	// development.
	TLSConfig *tls.Config
	// QUICConfig overrides quic-go's defaults. Default: quic-go's, except
	// KeepAlivePeriod 2 s (negative disables it) and MaxIdleTimeout 10 s,
	// so a vanished client is dropped within seconds, and receive windows
	// of 96 KiB per stream and per connection (initial and largest), which
	// bound what a client can make the server buffer; below 86 KiB, a
	// client's largest reliable messages may never fit (ErrBackpressure). A
	// clone is used; EnableDatagrams and the stream limits are the
	// protocol's whatever it says.
	QUICConfig *quic.Config
	// Logger receives connection, handshake and reset events.
	// Default: discard.
	Logger *slog.Logger
	// MaxClients caps the clients connected at once; more are refused
	// after the TLS handshake (ErrServerFull on the
	// client). It also bounds the connections in all: at most MaxClients
	// plus HandshakeRate (handshakes in flight) exist at once, the rest
	// are refused before their handshake (ErrRefused). Default (0):
	// 500 per CPU the process may use (runtime.GOMAXPROCS when the server
	// is created; on 2 cores, 1000 clients at 10 Hz took 0.7 core and
	// 76 KiB each). Negative: no limit.
	MaxClients int
	// MaxClientsPerSource caps the connections, handshaking or connected,
	// from one IP address; more are refused before their TLS handshake
	// (ErrRefused on the client). Clients behind one NAT share an address:
	// raise it for LAN parties and carrier-grade NAT. Default (0):
	// 32. Negative: no limit.
	MaxClientsPerSource int
	// HandshakeRate caps the connection attempts the server lets start a
	// TLS handshake, per second, all sources together, with bursts of one
	// second's worth; more are refused before their handshake (ErrRefused).
	// When half the burst is used, or many handshakes are in flight, new
	// attempts must first prove their source address with a QUIC Retry
	// (quic-go's Transport.VerifySourceAddress), one more round trip, so
	// spoofed addresses cannot use up the budget. Default (0):
	// 100 per CPU (a TLS handshake costs well under a millisecond of
	// CPU). Negative: no limit (and
	// no Retry).
	HandshakeRate int
	// Admit, if set, is asked about every connection attempt the limits
	// above let through, before its TLS handshake: an error refuses it
	// (ErrRefused on the client). It runs on quic-go's packet-handling
	// goroutine, so it must be fast and must not block. Default: none.
	Admit func(AdmissionRequest) error
	// HelloTimeout is how long a new connection may take to send its
	// hello. Default: 5 s.
	HelloTimeout time.Duration

	// StatelessResetKey lets the server end, with its first packet, the
	// connections a previous run of it left behind (QUIC stateless reset,
	// RFC 9000 §10.3): a client of a server that crashed and restarted, or
	// a client that was suspended past its idle timeout, learns at once
	// that its connection is gone, reports not synchronized
	// (ClientStats.Synchronized) and reconnects, instead of waiting out
	// the idle timeout on a dead timeline. It must be the same across the
	// server's restarts and secret: generate 32 bytes once with
	// crypto/rand, store them like the TLS key (a file readable by the
	// server only, or a secret store), and load them at every start.
	// Servers sharing an address (behind one load balancer) share it.
	// Default (nil): derived from the private key of
	// TLSConfig.Certificates[0], stable as long as the certificate's key
	// is; with no static certificate, random per run (resets then only
	// reach clients of connections this run forgot).
	StatelessResetKey *quic.StatelessResetKey
	// FrameTimeout is how long a reliable message may take to arrive
	// whole once its first byte has: a client that starts a frame and
	// stalls has its message stream stopped (counted in
	// ServerStats.Malformed), which bounds how long a partial frame is
	// held. Default: 10 s (64 KiB at 52 kbit/s).
	FrameTimeout time.Duration

	protocolVersion uint16               // for tests: speak another version; 0 = wire.ProtocolVersion
	admissionClock  func() time.Duration // for tests: the rate limiter's clock; nil = monotonic
}

func (cfg ServerConfig) resolve() (ServerConfig, error) {
	if cfg.TLSConfig == nil {
		return cfg, fmt.Errorf("%w: ServerConfig.TLSConfig is required", ErrInvalidConfig)
	}
	if cfg.TickRate == 0 {
		cfg.TickRate = DefaultTickRate
	}
	if err := nettime.ValidateRate(cfg.TickRate); err != nil {
		return cfg, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	procs := runtime.GOMAXPROCS(0)
	for _, l := range []struct {
		v   *int
		def int
	}{
		{&cfg.MaxClients, defaultMaxClientsPerCPU * procs},
		{&cfg.MaxClientsPerSource, defaultMaxClientsPerSource},
		{&cfg.HandshakeRate, defaultHandshakeRatePerCPU * procs},
	} {
		if *l.v == 0 {
			*l.v = l.def
		}
	}
	if cfg.HelloTimeout < 0 {
		return cfg, fmt.Errorf("%w: HelloTimeout %v is negative", ErrInvalidConfig, cfg.HelloTimeout)
	}
	if cfg.FrameTimeout < 0 {
		return cfg, fmt.Errorf("%w: FrameTimeout %v is negative", ErrInvalidConfig, cfg.FrameTimeout)
	}
	if cfg.FrameTimeout == 0 {
		cfg.FrameTimeout = defaultFrameTimeout
	}
	if cfg.HelloTimeout == 0 {
		cfg.HelloTimeout = defaultHelloTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = discardLogger()
	}
	return cfg, nil
}
