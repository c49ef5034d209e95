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
	"github.com/netclock/netclock/ticksys"
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
	// defaultPingSpreadDiv: the steady pings spread by a tenth of their
	// interval either way: at 10 Hz over 20 ms, a cable upstream's grant
	// (2 ms) or a satellite's frame (20 ms).
	defaultPingSpreadDiv = 10
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

// ClientConfig configures a Client. Zero fields take the defaults, but
// TLSConfig must trust the server (PinnedClientTLS, DevCert.ClientTLS).
type ClientConfig struct {
	TLSConfig        *tls.Config            // verifies the server; default: the system roots
	QUICConfig       *quic.Config           // default: quic-go's, with a 2 s keep-alive, 10 s idle timeout
	TickRate         uint32                 // the rate the client wants; default: the server's
	AcceptServerRate bool                   // take the server's rate instead of being refused (ErrTickRateMismatch)
	Provider         provider.SteeredConfig // the System's provider's; its Clock is the client clock
	Estimator        clocksync.Config       // the clock estimator's
	// Pings: a burst of BurstPings (10; negative: none) BurstInterval
	// apart (20 ms), then every PingInterval (100 ms). The client syncs
	// after the burst, or SyncTimeout (1 s) after the first ping.
	BurstPings                  int
	BurstInterval, PingInterval time.Duration
	// PingSpread spreads the steady pings: each interval is PingInterval
	// plus an offset within ±PingSpread, spread evenly over it by the
	// ping's number (the same sequence every run, as the accuracy harness
	// paces it; default PingInterval/10; negative: none; at most
	// PingInterval/2). A link that sends on its own period (a cable
	// upstream's 2 ms grant, a satellite's 20 ms frame) delays pings sent
	// at a multiple of it all alike, by a wait no two-way measurement can
	// see: a hidden asymmetry.
	PingSpread       time.Duration
	SyncTimeout      time.Duration
	HelloTimeout     time.Duration // bounds the handshake once QUIC is up; default 5 s
	DisableDatagrams bool          // ping over a stream, where datagrams fail
	Logger           *slog.Logger  // sync, clock, reconnect and reset events
	// Reconnect redials a lost connection (not Dial's), with jittered
	// backoff from ReconnectMin (250 ms) doubling to ReconnectMax (10 s),
	// until Close or an error no retry fixes (version, tick rate, ALPN,
	// certificate). A restarted server reinitializes the System.
	Reconnect                  bool
	ReconnectMin, ReconnectMax time.Duration
	// OnMessage, if set, takes the messages instead of Messages (reliable
	// ones in order on one goroutine, unreliable ones on another); it holds
	// up the reliable stream and Close: it must return.
	OnMessage     func(Message)
	MessageBuffer int // Messages' capacity (256); when full, unreliable ones drop, reliable ones wait
	// OnQualityChange, if set, is called at each change of Quality, never
	// concurrently; it holds up pings and Close: it must return promptly.
	OnQualityChange func(QualityChange)
	DriftAlarmPPM   float64 // the |drift| (ppm) above which the client warns; default 500, negative: none
	// MaxSpin is Run's ticksys.DriverConfig.MaxSpin: up to this much CPU
	// per tick spent busy-waiting for the tick start, for punctual ticks
	// on a machine slow to wake a thread. Default 0: never spin; at most
	// ticksys.MaxMaxSpin.
	MaxSpin time.Duration
}

func (cfg ClientConfig) resolve() (ClientConfig, error) {
	if cfg.MaxSpin < 0 || cfg.MaxSpin > ticksys.MaxMaxSpin {
		return cfg, fmt.Errorf("%w: ClientConfig.MaxSpin %v outside [0, %v]", ErrInvalidConfig, cfg.MaxSpin, ticksys.MaxMaxSpin)
	}
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
	case cfg.PingSpread == 0:
		cfg.PingSpread = cfg.PingInterval / defaultPingSpreadDiv
	case cfg.PingSpread < 0:
		cfg.PingSpread = 0
	case cfg.PingSpread > cfg.PingInterval/2:
		return cfg, fmt.Errorf("%w: PingSpread %v is more than half of PingInterval %v", ErrInvalidConfig, cfg.PingSpread, cfg.PingInterval)
	}
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
