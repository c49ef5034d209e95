package ticksys

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWakeMargin(t *testing.T) {
	const us = time.Microsecond
	repeat := func(n int, d time.Duration) []time.Duration {
		s := make([]time.Duration, n)
		for i := range s {
			s[i] = d
		}
		return s
	}
	tests := []struct {
		name  string
		max   time.Duration
		overs []time.Duration
		want  time.Duration
	}{
		{"no samples yet: the cap", 2 * time.Millisecond, nil, 2 * time.Millisecond},
		{"never spins", 0, repeat(10, time.Millisecond), 0},
		{"on time: one bucket", 2 * time.Millisecond, repeat(50, 0), 50 * us},
		{"early counts as on time", 2 * time.Millisecond, repeat(50, -time.Millisecond), 50 * us},
		{"the bucket's upper edge", 2 * time.Millisecond, repeat(100, 100*us), 150 * us},
		{"1 in 100 late is ignored", 2 * time.Millisecond, append(repeat(99, 100*us), 1500*us), 150 * us},
		{"2 in 100 late are not", 2 * time.Millisecond, append(repeat(98, 100*us), 1500*us, 1600*us), 1550 * us},
		{"capped", time.Millisecond, append(repeat(98, 100*us), 1500*us, 1600*us), time.Millisecond},
		{"a huge oversleep is the last bucket", time.Second, repeat(10, time.Minute), marginBuckets * marginBucket},
		{"few samples: the largest", 2 * time.Millisecond, []time.Duration{10 * us, 700 * us, 20 * us}, 750 * us},
		{"old samples are forgotten", 2 * time.Millisecond, append(repeat(10, 1900*us), repeat(marginWindow, 30*us)...), 50 * us},
		{"the window holds the newest", 2 * time.Millisecond, append(repeat(marginWindow, 30*us), repeat(10, 1900*us)...), 1950 * us},
	}
	for _, tt := range tests {
		m := wakeMargin{max: tt.max}
		for _, o := range tt.overs {
			m.observe(o)
		}
		if got := m.margin(); got != tt.want {
			t.Errorf("%s: margin %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDriverConfigValidate(t *testing.T) {
	tests := []struct {
		spin time.Duration
		ok   bool
	}{
		{0, true},
		{300 * time.Microsecond, true},
		{MaxMaxSpin, true},
		{-time.Nanosecond, false},
		{MaxMaxSpin + 1, false},
	}
	for _, tt := range tests {
		cfg := DriverConfig{MaxSpin: tt.spin}
		err := cfg.validate()
		if !tt.ok {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("MaxSpin %v: error %v, want ErrInvalidConfig", tt.spin, err)
			}
			continue
		}
		if err != nil || cfg.MaxSpin != tt.spin || cfg.Clock == nil {
			t.Errorf("MaxSpin %v: %v, MaxSpin %v, clock %v; want it unchanged and SystemClock", tt.spin, err, cfg.MaxSpin, cfg.Clock)
		}
	}
	s := mustNew(t, Config{})
	if err := s.Run(context.Background(), DriverConfig{MaxSpin: time.Second}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Run with MaxSpin 1s = %v, want ErrInvalidConfig", err)
	}
}
