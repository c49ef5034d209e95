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

// DefaultTickRate is ServerConfig.TickRate's default, in ticks per second.
const DefaultTickRate = ticksys.DefaultTickRate

// defaultFrameTimeout is ServerConfig.FrameTimeout's default.
const defaultFrameTimeout = 10 * time.Second

// ServerConfig configures a Server.
type ServerConfig struct {
	// TickRate is the session's tick rate (ticks per second). Default: 60.
	TickRate uint32
	// Start is the server clock when Serve starts it. Default: 0.
	Start time.Duration
	// TLSConfig holds the server's certificate. Required.
	TLSConfig *tls.Config
	// QUICConfig overrides quic-go's defaults. Default: quic-go's, with a
	// 2 s keep-alive, a 10 s idle timeout and 96 KiB receive windows
	// (below 86 KiB the largest reliable messages may never fit).
	QUICConfig *quic.Config
	// Logger receives connection, handshake and reset events. Default: none.
	Logger *slog.Logger
	// Admission (0: default; negative: none; see the README): clients
	// connected (500 per CPU; then ErrServerFull), connections per IP (32;
	// raise it for LAN parties and carrier NAT), new handshakes a second
	// (100 per CPU; past half the burst, a QUIC Retry first). Admit, if
	// set, may refuse more; it must be fast. Refusals get ErrRefused.
	MaxClients, MaxClientsPerSource, HandshakeRate int
	Admit                                          func(AdmissionRequest) error
	// HelloTimeout bounds a new connection's hello. Default: 5 s.
	HelloTimeout time.Duration
	// StatelessResetKey lets a restarted server end its previous run's
	// connections at once. Keep it secret and the same across restarts
	// (32 bytes from crypto/rand, stored like the TLS key). Default:
	// derived from TLSConfig.Certificates[0]'s key (random if none).
	StatelessResetKey *quic.StatelessResetKey
	// FrameTimeout bounds a reliable message's arrival after its first
	// byte (then its stream is stopped). Default: 10 s.
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
