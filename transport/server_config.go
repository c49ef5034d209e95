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

// defaultFrameTimeout is ServerConfig.FrameTimeout's default.
const defaultFrameTimeout = 10 * time.Second

// ServerConfig configures a Server.
type ServerConfig struct {
	TickRate  uint32        // ticks per second; default ticksys.DefaultTickRate (60)
	Start     time.Duration // the server clock when Serve starts it; default 0
	TLSConfig *tls.Config   // the server's certificate; required
	// QUICConfig: default quic-go's, with a 2 s keep-alive, a 10 s idle timeout
	// and 96 KiB receive windows (the largest messages need 86 KiB).
	QUICConfig *quic.Config
	Logger     *slog.Logger // connection, handshake and reset events; default none
	// Admission (0: default; negative: none; see the README): clients
	// connected (500 per CPU, then ErrServerFull), connections per IP (32),
	// new handshakes a second (100 per CPU; a Retry past half the burst).
	// Admit, if set, may refuse more, fast. Refusals get ErrRefused.
	MaxClients, MaxClientsPerSource, HandshakeRate int
	Admit                                          func(AdmissionRequest) error
	HelloTimeout                                   time.Duration // bounds a new connection's hello; default 5 s
	// StatelessResetKey (secret, the same across restarts: see the README)
	// lets a restarted server end its last run's connections at once.
	// Default: derived from TLSConfig.Certificates[0]'s key, or random.
	StatelessResetKey *quic.StatelessResetKey
	FrameTimeout      time.Duration // bounds a reliable message's arrival from its first byte (else its stream stops); default 10 s
	// MaxSpin is the tick driver's ticksys.DriverConfig.MaxSpin: up to
	// this much CPU per tick spent busy-waiting for the tick start, for
	// punctual ticks on a machine slow to wake a thread. Default 0: never
	// spin; at most ticksys.MaxMaxSpin.
	MaxSpin time.Duration
}

func (cfg ServerConfig) resolve() (ServerConfig, error) {
	if cfg.TLSConfig == nil {
		return cfg, fmt.Errorf("%w: ServerConfig.TLSConfig is required", ErrInvalidConfig)
	}
	if cfg.MaxSpin < 0 || cfg.MaxSpin > ticksys.MaxMaxSpin {
		return cfg, fmt.Errorf("%w: ServerConfig.MaxSpin %v outside [0, %v]", ErrInvalidConfig, cfg.MaxSpin, ticksys.MaxMaxSpin)
	}
	if cfg.TickRate == 0 {
		cfg.TickRate = ticksys.DefaultTickRate
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
