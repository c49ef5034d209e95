package ticksys

import (
	"testing"
	"time"

	"github.com/netclock/netclock/provider"
)

// BenchmarkAdvanceNoTick measures a frame in which no tick passes: the cost
// every frame of a game running faster than its tick rate pays.
func BenchmarkAdvanceNoTick(b *testing.B) {
	s, _ := New(Config{})
	s.OnNetworkTick(func(TickEvent) {})
	b.ReportAllocs()
	for b.Loop() {
		s.Advance(0)
	}
}

// BenchmarkAdvanceNoTickClient is the same with the client provider steering.
func BenchmarkAdvanceNoTickClient(b *testing.B) {
	now := time.Duration(0)
	c, _ := provider.NewSteered(provider.SteeredConfig{Clock: func() time.Duration { return now }})
	c.SetEstimate(provider.Estimate{Valid: true, Offset: time.Hour, DriftPPM: 30, Uplink: 20 * time.Millisecond})
	s, _ := New(Config{Provider: c})
	s.OnNetworkTick(func(TickEvent) {})
	b.ReportAllocs()
	for b.Loop() {
		s.Advance(0)
	}
}

// BenchmarkAdvanceOneTick measures a frame that fires one tick event.
func BenchmarkAdvanceOneTick(b *testing.B) {
	s, _ := New(Config{TickRate: 100})
	s.OnNetworkTick(func(TickEvent) {})
	b.ReportAllocs()
	for b.Loop() {
		s.Advance(10 * time.Millisecond)
	}
}
