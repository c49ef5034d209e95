package transport

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/provider/clocksync"
)

// Defaults of ClientConfig, used where a field is zero. The start burst
// gives the estimator ten samples in 200 ms, enough for a first estimate
// whose error is bounded by the best of ten round trips; the steady rate
// then refines it over the estimator's window, for 14+30 bytes of QUIC
// datagram payload a round trip.
const (
	// DefaultBurstPings is the number of pings of the start burst.
	DefaultBurstPings = 10
	// DefaultBurstInterval is the time between the burst's pings (20 ms).
	DefaultBurstInterval = 20 * time.Millisecond
	// DefaultPingInterval is the time between pings after the burst
	// (100 ms: 10 Hz).
	DefaultPingInterval = 100 * time.Millisecond
	// DefaultSyncTimeout is how long after the first ping the client
	// syncs with whatever samples it has, when pongs of the burst were
	// lost (1 s).
	DefaultSyncTimeout = time.Second
)

// ClientConfig configures a Client. The zero value gives the defaults, but
// TLSConfig must trust the server (DevCert.ClientTLS for development).
type ClientConfig struct {
	// TLSConfig verifies the server. Default: the system roots, with
	// ServerName from the address dialed. A clone is used, with NextProtos
	// set to ALPN. Nothing here skips verification.
	TLSConfig *tls.Config
	// QUICConfig overrides quic-go's defaults. Default: quic-go's
	// defaults. EnableDatagrams is set from DisableDatagrams.
	QUICConfig *quic.Config
	// TickRate is the tick rate the client wants, in ticks per second. A
	// server at another rate refuses the client with ErrTickRateMismatch,
	// unless AcceptServerRate is set. Default (0): accept the server's.
	TickRate uint32
	// AcceptServerRate makes the client run at the server's tick rate
	// even if it differs from TickRate (logged as a warning).
	AcceptServerRate bool
	// Provider configures the provider.Client that steers the client's
	// System. Its Clock is the client clock: the pings' T1 and T4 are read
	// from it. Default: provider's defaults (the monotonic clock since
	// process start).
	Provider provider.ClientConfig
	// Estimator configures the clock estimator. Default: clocksync's
	// defaults.
	Estimator clocksync.Config
	// BurstPings is the number of pings of the start burst; the client
	// syncs once that many samples were observed. Default: 10.
	// Negative: no burst, sync on the first sample.
	BurstPings int
	// BurstInterval is the time between the burst's pings. Default: 20ms.
	BurstInterval time.Duration
	// PingInterval is the time between pings after the burst.
	// Default: 100ms (10 Hz).
	PingInterval time.Duration
	// SyncTimeout is how long after the first ping the client syncs with
	// fewer than BurstPings samples (at least one is needed).
	// Default: 1s.
	SyncTimeout time.Duration
	// HelloTimeout bounds the handshake after the QUIC connection is up
	// (the dial context bounds it too). Default: DefaultHelloTimeout (5s).
	HelloTimeout time.Duration
	// DisableDatagrams makes the client ping over the stream fallback.
	// For networks or peers where QUIC datagrams fail; datagrams are
	// better (a lost ping is a missing sample, not a late one).
	DisableDatagrams bool
	// Logger receives the handshake, sync, clock-jump, path-change and
	// reset events. Default: discard.
	Logger *slog.Logger

	protocolVersion uint16 // for tests: speak another version; 0 = ProtocolVersion
}

func (cfg ClientConfig) resolve() (ClientConfig, error) {
	if cfg.TickRate != 0 {
		if err := nettime.ValidateRate(cfg.TickRate); err != nil {
			return cfg, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
	}
	switch {
	case cfg.BurstPings == 0:
		cfg.BurstPings = DefaultBurstPings
	case cfg.BurstPings < 0:
		cfg.BurstPings = 0
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"BurstInterval", &cfg.BurstInterval, DefaultBurstInterval},
		{"PingInterval", &cfg.PingInterval, DefaultPingInterval},
		{"SyncTimeout", &cfg.SyncTimeout, DefaultSyncTimeout},
		{"HelloTimeout", &cfg.HelloTimeout, DefaultHelloTimeout},
	} {
		if *d.v < 0 {
			return cfg, fmt.Errorf("%w: %s %v is negative", ErrInvalidConfig, d.name, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = discardLogger()
	}
	return cfg, nil
}
