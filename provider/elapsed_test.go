package provider

import (
	"testing"
	"time"

	"github.com/netclock/netclock/nettime"
)

// TestClockIsTheOnlyElapsedTime: AdvanceTime moves the times by what the
// Clock moved since the previous call, whatever dt says, with and without
// an estimate; a clock stepping back holds them.
func TestClockIsTheOnlyElapsedTime(t *testing.T) {
	tests := []struct {
		name  string
		clock time.Duration // how far the clock moves before the call
		dt    time.Duration // what the game loop passes
		want  time.Duration // how far the times move
	}{
		{"dt agrees", 16 * time.Millisecond, 16 * time.Millisecond, 16 * time.Millisecond},
		{"fixed dt after a hitch", 230 * time.Millisecond, time.Second / 60, 230 * time.Millisecond},
		{"stale ticker dt", 5 * time.Millisecond, 240 * time.Millisecond, 5 * time.Millisecond},
		{"zero dt", 10 * time.Millisecond, 0, 10 * time.Millisecond},
		{"negative dt", 10 * time.Millisecond, -time.Second, 10 * time.Millisecond},
		{"clock steps back", -50 * time.Millisecond, 16 * time.Millisecond, 0},
	}
	for _, valid := range []bool{false, true} {
		for _, tc := range tests {
			c, clk := newTestClient(t, SteeredConfig{HardResetOnly: true}) // no slew: exact moves
			if valid {
				c.SetEstimate(est(clk.now, time.Second, 0))
			}
			p, s := nettime.New(rate, time.Second), nettime.New(rate, time.Second)
			c.InitializeClient(&p, &s)
			p0, s0 := p, s
			clk.now += tc.clock
			if !c.AdvanceTime(&p, &s, tc.dt) {
				t.Errorf("valid=%v %s: a hard reset", valid, tc.name)
				continue
			}
			if gp, gs := p.Sub(p0), s.Sub(s0); gp != tc.want || gs != tc.want {
				t.Errorf("valid=%v %s: times moved %v/%v, want %v", valid, tc.name, gp, gs, tc.want)
			}
		}
	}
}

// TestFirstAdvanceWithoutInitializeUsesDt: a provider used bare, without
// InitializeClient, has no previous clock reading for its first frame.
func TestFirstAdvanceWithoutInitializeUsesDt(t *testing.T) {
	c, clk := newTestClient(t, SteeredConfig{})
	p, s := nettime.New(rate, 0), nettime.New(rate, 0)
	c.AdvanceTime(&p, &s, 7*time.Millisecond)
	clk.now += 20 * time.Millisecond
	c.AdvanceTime(&p, &s, time.Hour)
	if got, want := p.Duration(), 27*time.Millisecond; got != want || s.Duration() != want {
		t.Errorf("times %v/%v after 7ms dt and a 20ms clock move, want %v", p, s, want)
	}
}
