package transport

import (
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/ticksys"
)

func TestBackoff(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		name    string
		n       int
		lo, hi  time.Duration
		u       float64
		want    time.Duration
		comment string
	}{
		{"first, no jitter drawn", 0, 250 * ms, 10 * time.Second, 0, 125 * ms, "b/2"},
		{"first, top", 0, 250 * ms, 10 * time.Second, 0.999999, 250 * ms, "almost b"},
		{"second", 1, 250 * ms, 10 * time.Second, 0.5, 375 * ms, "b=500ms"},
		{"fifth", 4, 250 * ms, 10 * time.Second, 0, 2 * time.Second, "b=4s"},
		{"capped", 6, 250 * ms, 10 * time.Second, 0, 5 * time.Second, "b=16s → 10s"},
		{"capped far out", 1000, 250 * ms, 10 * time.Second, 0.5, 7500 * ms, "no overflow"},
		{"min = max", 3, time.Second, time.Second, 0, 500 * ms, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := backoff(tc.n, tc.lo, tc.hi, tc.u)
			if diff := got - tc.want; diff < -time.Microsecond || diff > time.Microsecond {
				t.Errorf("backoff(%d, %v, %v, %v) = %v, want %v (%s)", tc.n, tc.lo, tc.hi, tc.u, got, tc.want, tc.comment)
			}
		})
	}
	// Waits never exceed the cap and grow monotonically at fixed jitter.
	prev := time.Duration(0)
	for n := range 64 {
		b := backoff(n, defaultReconnectMin, defaultReconnectMax, 0.5)
		if b < prev || b > defaultReconnectMax {
			t.Fatalf("backoff(%d) = %v after %v", n, b, prev)
		}
		prev = b
	}
}

func TestPermanent(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"version", fmt.Errorf("x: %w", ErrVersionMismatch), true},
		{"tick rate", fmt.Errorf("x: %w", ErrTickRateMismatch), true},
		{"alpn", fmt.Errorf("x: %w", ErrALPN), true},
		{"bad certificate", fmt.Errorf("dial: %w", &quic.TransportError{ErrorCode: 0x100 + 42}), true},
		{"server full", fmt.Errorf("x: %w", ErrServerFull), false},
		{"protocol", fmt.Errorf("x: %w", ErrProtocol), false},
		{"refused", fmt.Errorf("dial: %w", &quic.TransportError{ErrorCode: quic.ConnectionRefused, Remote: true}), false},
		{"idle timeout", fmt.Errorf("dial: %w", &quic.IdleTimeoutError{}), false},
		{"handshake timeout", fmt.Errorf("dial: %w", &quic.HandshakeTimeoutError{}), false},
		{"going away", &quic.ApplicationError{ErrorCode: CodeGoingAway, Remote: true}, false},
		{"other", errors.New("boom"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := permanent(tc.err); got != tc.want {
				t.Errorf("permanent(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestQUICConfigDefaults(t *testing.T) {
	type got struct{ KeepAlive, Idle, Handshake time.Duration }
	for _, tc := range []struct {
		name string
		user *quic.Config
		want got
	}{
		{"nil", nil, got{defaultKeepAlivePeriod, defaultMaxIdleTimeout, 0}},
		{"empty", &quic.Config{}, got{defaultKeepAlivePeriod, defaultMaxIdleTimeout, 0}},
		{"user's kept", &quic.Config{KeepAlivePeriod: time.Second, MaxIdleTimeout: 3 * time.Second,
			HandshakeIdleTimeout: time.Second}, got{time.Second, 3 * time.Second, time.Second}},
		{"keep-alive off", &quic.Config{KeepAlivePeriod: -1}, got{0, defaultMaxIdleTimeout, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := quicConfig(tc.user, 2, 1)
			if q == tc.user {
				t.Fatal("the user's config was not cloned")
			}
			if d := cmp.Diff(tc.want, got{q.KeepAlivePeriod, q.MaxIdleTimeout, q.HandshakeIdleTimeout}); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestClientConfigResolve(t *testing.T) {
	type got struct {
		Min, Max time.Duration
		Buffer   int
		Drift    float64
		Spread   time.Duration
	}
	def := got{defaultReconnectMin, defaultReconnectMax, defaultMessageBuffer, defaultDriftAlarmPPM, defaultPingInterval / defaultPingSpreadDiv}
	with := func(f func(*got)) got {
		g := def
		f(&g)
		return g
	}
	for _, tc := range []struct {
		name    string
		cfg     ClientConfig
		want    got
		wantErr bool
	}{
		{"defaults", ClientConfig{}, def, false},
		{"max below min", ClientConfig{ReconnectMin: time.Second, ReconnectMax: time.Millisecond},
			with(func(g *got) { g.Min, g.Max = time.Second, time.Second }), false},
		{"drift alarm off", ClientConfig{DriftAlarmPPM: -1, MessageBuffer: 1},
			with(func(g *got) { g.Buffer, g.Drift = 1, -1 }), false},
		{"negative min", ClientConfig{ReconnectMin: -1}, got{}, true},
		{"negative buffer", ClientConfig{MessageBuffer: -1}, got{}, true},
		{"NaN drift", ClientConfig{DriftAlarmPPM: math.NaN()}, got{}, true},
		{"spin", ClientConfig{MaxSpin: ticksys.MaxMaxSpin}, def, false},
		{"negative spin", ClientConfig{MaxSpin: -1}, got{}, true},
		{"spin too long", ClientConfig{MaxSpin: ticksys.MaxMaxSpin + 1}, got{}, true},
		{"spread follows the interval", ClientConfig{PingInterval: 50 * time.Millisecond},
			with(func(g *got) { g.Spread = 5 * time.Millisecond }), false},
		{"spread off", ClientConfig{PingSpread: -1}, with(func(g *got) { g.Spread = 0 }), false},
		{"spread set", ClientConfig{PingSpread: 50 * time.Millisecond}, with(func(g *got) { g.Spread = 50 * time.Millisecond }), false},
		{"spread over half the interval", ClientConfig{PingSpread: 51 * time.Millisecond}, got{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tc.cfg.resolve()
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("err = %v, want ErrInvalidConfig", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got{cfg.ReconnectMin, cfg.ReconnectMax, cfg.MessageBuffer, cfg.DriftAlarmPPM, cfg.PingSpread}); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestServerConfigMaxSpin: the driver's spin is validated with the config.
func TestServerConfigMaxSpin(t *testing.T) {
	tlsConf := &tls.Config{}
	for _, tc := range []struct {
		spin time.Duration
		ok   bool
	}{{0, true}, {2 * time.Millisecond, true}, {ticksys.MaxMaxSpin, true}, {-1, false}, {ticksys.MaxMaxSpin + 1, false}} {
		cfg, err := ServerConfig{TLSConfig: tlsConf, MaxSpin: tc.spin}.resolve()
		switch {
		case tc.ok && (err != nil || cfg.MaxSpin != tc.spin):
			t.Errorf("MaxSpin %v: %v, MaxSpin %v", tc.spin, err, cfg.MaxSpin)
		case !tc.ok && !errors.Is(err, ErrInvalidConfig):
			t.Errorf("MaxSpin %v: err %v, want ErrInvalidConfig", tc.spin, err)
		}
	}
}

// TestDriftAlarm feeds the alarm a sequence of drifts: it logs once per
// crossing, with hysteresis.
func TestDriftAlarm(t *testing.T) {
	for _, tc := range []struct {
		name       string
		threshold  float64
		drifts     []float64
		wantAlarms int64
		wantOn     bool
		wantLogs   []string // "alarm" or "clear", in order
	}{
		{"quiet", 0, []float64{0, 30, -80, 120}, 0, false, nil},
		{"one crossing", 0, []float64{100, 600, 700, 800}, 1, true, []string{"alarm"}},
		{"negative drift", 0, []float64{-501}, 1, true, []string{"alarm"}},
		{"noise at the threshold", 0, []float64{501, 499, 501, 460, 505}, 1, true, []string{"alarm"}},
		{"back and again", 0, []float64{600, 300, 600}, 2, true, []string{"alarm", "clear", "alarm"}},
		{"custom threshold", 50, []float64{40, 60, 46}, 1, true, []string{"alarm"}},
		{"custom threshold clears", 50, []float64{60, 44}, 1, false, []string{"alarm", "clear"}},
		{"disabled", -1, []float64{1e6}, 0, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			cfg, err := ClientConfig{DriftAlarmPPM: tc.threshold, Logger: logs.logger()}.resolve()
			if err != nil {
				t.Fatal(err)
			}
			c := &Client{cfg: cfg, log: cfg.Logger}
			c.link.Store(&link{session: Session{Epoch: 42}})
			c.checkDriftLocked(provider.Estimate{DriftPPM: 1e6}) // invalid: ignored
			for _, d := range tc.drifts {
				c.checkDriftLocked(provider.Estimate{Valid: true, Offset: time.Second, DriftPPM: d})
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				switch {
				case strings.Contains(line, "drift alarm"):
					got = append(got, "alarm")
					for _, want := range []string{"level=WARN", "epoch=42", "offset=1s", "drift_ppm=", "threshold_ppm="} {
						if !strings.Contains(line, want) {
							t.Errorf("alarm line lacks %q: %s", want, line)
						}
					}
				case strings.Contains(line, "drift back below"):
					got = append(got, "clear")
				}
			}
			if d := cmp.Diff(tc.wantLogs, got); d != "" {
				t.Errorf("log events (-want +got):\n%s\n%s", d, logs.String())
			}
			if c.driftAlarms != tc.wantAlarms || c.driftAlarm != tc.wantOn {
				t.Errorf("%d alarms, on %v; want %d, %v", c.driftAlarms, c.driftAlarm, tc.wantAlarms, tc.wantOn)
			}
		})
	}
}
