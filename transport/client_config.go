package transport

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"math"
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
	// defaultBurstPings is the number of pings of the start burst.
	defaultBurstPings = 10
	// defaultBurstInterval is the time between the burst's pings (20 ms).
	defaultBurstInterval = 20 * time.Millisecond
	// defaultPingInterval is the time between pings after the burst
	// (100 ms: 10 Hz).
	defaultPingInterval = 100 * time.Millisecond
	// defaultSyncTimeout is how long after the first ping the client
	// syncs with whatever samples it has, when pongs of the burst were
	// lost (1 s).
	defaultSyncTimeout = time.Second
	// defaultReconnectMin is the first reconnect backoff (250 ms).
	defaultReconnectMin = 250 * time.Millisecond
	// defaultReconnectMax caps the reconnect backoff (10 s).
	defaultReconnectMax = 10 * time.Second
	// defaultDriftAlarmPPM is the drift beyond which the client logs a
	// drift alarm (500 ppm: 30 ms a minute, far beyond any healthy
	// crystal's ±100 ppm).
	defaultDriftAlarmPPM = 500.0
	// defaultMessageBuffer is the capacity of Client.Messages.
	defaultMessageBuffer = 256
)

// ClientConfig configures a Client. The zero value gives the defaults, but
// TLSConfig must trust the server (DevCert.ClientTLS for development).
type ClientConfig struct {
	// TLSConfig verifies the server. Default: the system roots, with
	// ServerName from the address dialed. A clone is used, with NextProtos
	// set to ALPN. Nothing here skips verification.
	TLSConfig *tls.Config
	// QUICConfig overrides quic-go's defaults. Default: quic-go's, except
	// KeepAlivePeriod 2 s (negative disables it) and MaxIdleTimeout 10 s,
	// so a lost server is noticed within seconds. A clone is used, with
	// EnableDatagrams from DisableDatagrams and the protocol's stream
	// limits. HandshakeIdleTimeout (quic-go's 5 s) bounds each reconnect
	// attempt to a server that does not answer.
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
	// (the dial context bounds it too). Default: 5 s.
	HelloTimeout time.Duration
	// DisableDatagrams makes the client ping over the stream fallback.
	// For networks or peers where QUIC datagrams fail; datagrams are
	// better (a lost ping is a missing sample, not a late one).
	DisableDatagrams bool
	// Logger receives the handshake, sync, clock-jump, path-change,
	// drift-alarm, reconnect and reset events. Default: discard.
	Logger *slog.Logger

	// Reconnect makes the client redial the same address when its
	// connection is lost (idle timeout, the server gone or going away)
	// instead of stopping. It retries with exponential backoff (see
	// ReconnectMin) for as long as the client is open, and gives up only
	// on errors no retry can fix (version or tick rate mismatch, ALPN,
	// TLS certificate); then the client stops with that error. A server
	// with the same session epoch keeps the estimate (its clock did not
	// change); a new epoch means it restarted: the estimator restarts,
	// and after a fresh burst the System is reinitialized, which fires a
	// ResetEvent with ticksys.ReasonReinitialize (see Client.Run and
	// Client.Advance). A reconnecting client must find the same tick rate.
	// Dial itself does not retry: its error is returned. While the client
	// reconnects, sends fail with ErrNotConnected and Stats().Connected is
	// false. Default: false, the client stops when the connection ends.
	Reconnect bool
	// ReconnectMin is the backoff before the first redial; each failed
	// attempt doubles it, up to ReconnectMax. Every wait is drawn
	// uniformly from [b/2, b] for backoff b, so clients that lost the same
	// server do not redial in step. Default: 250ms.
	ReconnectMin time.Duration
	// ReconnectMax caps the backoff. Default: 10s (at least ReconnectMin).
	ReconnectMax time.Duration

	// OnMessage, if set, receives the server's messages instead of the
	// Messages channel. It runs on the client's goroutines: reliable
	// messages in order on one goroutine, unreliable ones on another, so
	// it must be safe for concurrent use, and it must return: a blocked
	// OnMessage holds up the reliable stream and Close.
	OnMessage func(Message)
	// MessageBuffer is the capacity of the Messages channel. A full
	// channel drops unreliable messages (counted in
	// ClientStats.MessagesDropped) and holds up reliable ones.
	// Default: 256.
	MessageBuffer int

	// OnQualityChange, if set, is called each time the connection's
	// Quality changes (see Quality for the grades, thresholds and
	// hysteresis; at most a change per ping, and a rise only after
	// QualityRiseHold). Like OnMessage it is a callback fixed at Dial,
	// for the life of the client, across reconnects; ClientStats.Quality
	// is the same value to poll. It is never called concurrently; it runs
	// on the goroutine that sends the pings (or, when the connection is
	// lost, the one that reconnects), so it must return promptly (hand the change to the game's
	// own goroutine): while it runs no ping is sent, and Close waits for
	// it. Default: none.
	OnQualityChange func(QualityChange)

	// DriftAlarmPPM is the drift, in ppm, beyond which the client logs a
	// warning (once per crossing: it logs again, at Info, when |drift|
	// falls back below 90% of it). Default: 500. Negative: no alarm.
	DriftAlarmPPM float64

	protocolVersion uint16 // for tests: speak another version; 0 = wire.ProtocolVersion
}

func (cfg ClientConfig) resolve() (ClientConfig, error) {
	if cfg.TickRate != 0 {
		if err := nettime.ValidateRate(cfg.TickRate); err != nil {
			return cfg, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
	}
	switch {
	case cfg.BurstPings == 0:
		cfg.BurstPings = defaultBurstPings
	case cfg.BurstPings < 0:
		cfg.BurstPings = 0
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"BurstInterval", &cfg.BurstInterval, defaultBurstInterval},
		{"PingInterval", &cfg.PingInterval, defaultPingInterval},
		{"SyncTimeout", &cfg.SyncTimeout, defaultSyncTimeout},
		{"HelloTimeout", &cfg.HelloTimeout, defaultHelloTimeout},
		{"ReconnectMin", &cfg.ReconnectMin, defaultReconnectMin},
		{"ReconnectMax", &cfg.ReconnectMax, defaultReconnectMax},
	} {
		if *d.v < 0 {
			return cfg, fmt.Errorf("%w: %s %v is negative", ErrInvalidConfig, d.name, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	cfg.ReconnectMax = max(cfg.ReconnectMax, cfg.ReconnectMin)
	switch {
	case cfg.MessageBuffer < 0:
		return cfg, fmt.Errorf("%w: MessageBuffer %d is negative", ErrInvalidConfig, cfg.MessageBuffer)
	case cfg.MessageBuffer == 0:
		cfg.MessageBuffer = defaultMessageBuffer
	}
	switch {
	case math.IsNaN(cfg.DriftAlarmPPM) || math.IsInf(cfg.DriftAlarmPPM, 0):
		return cfg, fmt.Errorf("%w: DriftAlarmPPM %v", ErrInvalidConfig, cfg.DriftAlarmPPM)
	case cfg.DriftAlarmPPM == 0:
		cfg.DriftAlarmPPM = defaultDriftAlarmPPM
	}
	if cfg.Logger == nil {
		cfg.Logger = discardLogger()
	}
	return cfg, nil
}
