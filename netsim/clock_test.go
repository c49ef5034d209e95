package netsim

import (
	"math/rand/v2"
	"testing"
	"time"
)

func mustClock(t testing.TB, s ClockSpec) *Clock {
	t.Helper()
	c, err := NewClock(s)
	if err != nil {
		t.Fatalf("NewClock: %v", err)
	}
	return c
}

func TestClockRead(t *testing.T) {
	const sec = time.Second
	cases := []struct {
		name string
		spec ClockSpec
		at   time.Duration
		want time.Duration
	}{
		{"perfect", ClockSpec{}, 123 * sec, 123 * sec},
		{"offset", ClockSpec{Offset: -5 * sec}, 10 * sec, 5 * sec},
		{"drift", ClockSpec{Offset: 5 * sec, DriftPPM: 50}, 60 * sec, 65*sec + 3*ms},
		{"negative drift", ClockSpec{DriftPPM: -78}, 3600 * sec, 3600*sec - 280800*time.Microsecond},
		{"before time 0", ClockSpec{Offset: sec, DriftPPM: 100}, -10 * sec, -9*sec - ms},
		{"jump before", ClockSpec{Jumps: []Jump{{At: 60 * sec, By: 2 * sec}}}, 60*sec - 1, 60*sec - 1},
		{"jump at", ClockSpec{Jumps: []Jump{{At: 60 * sec, By: 2 * sec}}}, 60 * sec, 62 * sec},
		{"jumps add", ClockSpec{Jumps: []Jump{{At: 70 * sec, By: -sec}, {At: 60 * sec, By: 2 * sec}}}, 80 * sec, 81 * sec},
		{"slew inside", ClockSpec{Slews: []Slew{{From: 60 * sec, To: 180 * sec, PPM: 500}}}, 120 * sec, 120*sec + 30*ms},
		{"slew after", ClockSpec{Slews: []Slew{{From: 60 * sec, To: 180 * sec, PPM: 500}}}, 1000 * sec, 1000*sec + 60*ms},
		{"slew before", ClockSpec{Slews: []Slew{{From: 60 * sec, To: 180 * sec, PPM: 500}}}, 59 * sec, 59 * sec},
		{"drift and slew", ClockSpec{DriftPPM: 10, Slews: []Slew{{From: 0, To: 100 * sec, PPM: -10}}}, 100 * sec, 100 * sec},
		{"sub-ns drift rounds", ClockSpec{DriftPPM: 1}, 499, 499},
		{"sub-ns drift rounds up", ClockSpec{DriftPPM: 1}, 500_000, 500_001},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustClock(t, tc.spec)
			if got := c.Read(tc.at); got != tc.want {
				t.Errorf("Read(%v) = %v, want %v", tc.at, got, tc.want)
			}
			if got := c.Offset(tc.at); got != tc.want-tc.at {
				t.Errorf("Offset(%v) = %v, want %v", tc.at, got, tc.want-tc.at)
			}
		})
	}
}

func TestClockRatePPM(t *testing.T) {
	c := mustClock(t, ClockSpec{DriftPPM: 20, Slews: []Slew{{From: time.Second, To: 2 * time.Second, PPM: 500}}})
	for _, tc := range []struct {
		at   time.Duration
		want float64
	}{{0, 20}, {time.Second, 520}, {2*time.Second - 1, 520}, {2 * time.Second, 20}} {
		if got := c.RatePPM(tc.at); got != tc.want {
			t.Errorf("RatePPM(%v) = %v, want %v", tc.at, got, tc.want)
		}
	}
}

// clockSpecs covers the shapes TrueTime must invert.
var clockSpecs = map[string]ClockSpec{
	"perfect":       {},
	"offset-drift":  {Offset: 4700 * ms, DriftPPM: 78},
	"negative":      {Offset: -8 * time.Second, DriftPPM: -500},
	"fast":          {Offset: time.Hour, DriftPPM: 200_000},
	"slow":          {Offset: -time.Hour, DriftPPM: -400_000},
	"slews":         {Offset: time.Second, DriftPPM: 30, Slews: []Slew{{From: 10 * time.Second, To: 40 * time.Second, PPM: 500}, {From: 20 * time.Second, To: 25 * time.Second, PPM: -50_000}}},
	"forward-jump":  {Offset: 2 * time.Second, DriftPPM: -40, Jumps: []Jump{{At: 30 * time.Second, By: 2 * time.Second}}},
	"backward-jump": {Offset: 2 * time.Second, DriftPPM: 40, Jumps: []Jump{{At: 30 * time.Second, By: -3 * time.Second}}},
	"everything": {Offset: -3 * time.Second, DriftPPM: 55,
		Jumps: []Jump{{At: 20 * time.Second, By: time.Second}, {At: 50 * time.Second, By: -500 * ms}},
		Slews: []Slew{{From: 10 * time.Second, To: 60 * time.Second, PPM: -300}}},
}

func TestClockTrueTimeInverts(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for name, spec := range clockSpecs {
		t.Run(name, func(t *testing.T) {
			c := mustClock(t, spec)
			for i := range 10_000 {
				// Local values around and across every breakpoint.
				tt := time.Duration(r.Int64N(int64(120*time.Second))) - 30*time.Second
				if i%4 == 0 {
					tt = 20*time.Second*time.Duration(r.IntN(4)) + time.Duration(r.IntN(5)) - 2
				}
				x := c.Read(tt)
				u := c.TrueTime(x)
				// First passage: the clock reads x or more at u, and less
				// just before.
				if c.Read(u) < x || c.Read(u-1) >= x {
					t.Fatalf("TrueTime(%v) = %v: Read there %v, just before %v", x, u, c.Read(u), c.Read(u-1))
				}
				if u > tt {
					t.Fatalf("TrueTime(Read(%v)) = %v, after the time that read it", tt, u)
				}
				if len(spec.Jumps) == 0 && tt-u > 1 {
					t.Fatalf("no jumps: TrueTime(Read(%v)) = %v, want within 1ns", tt, u)
				}
				// A timer set at tt-5ms for x fires at u (first passage
				// after tt-5ms), never later than tt.
				after := tt - 5*ms
				v := c.TrueTimeAfter(x, after)
				if v < after || v > tt || c.Read(v) < x || (v > after && c.Read(v-1) >= x) {
					t.Fatalf("TrueTimeAfter(%v, %v) = %v (tt %v)", x, after, v, tt)
				}
			}
		})
	}
}

func TestClockTrueTimeExactWhenFast(t *testing.T) {
	// A clock that runs at least at the true rate is injective between
	// jumps: TrueTime(Read(t)) == t exactly.
	c := mustClock(t, ClockSpec{Offset: 7 * time.Second, DriftPPM: 80})
	for tt := time.Duration(-1000); tt < 1000; tt++ {
		if u := c.TrueTime(c.Read(tt)); u != tt {
			t.Fatalf("TrueTime(Read(%v)) = %v", tt, u)
		}
	}
	for tt := time.Duration(0); tt < 3*time.Hour; tt += 1234567891 {
		if u := c.TrueTime(c.Read(tt)); u != tt {
			t.Fatalf("TrueTime(Read(%v)) = %v", tt, u)
		}
	}
}

func TestClockJumps(t *testing.T) {
	const sec = time.Second
	fwd := mustClock(t, ClockSpec{Jumps: []Jump{{At: 60 * sec, By: 2 * sec}}})
	// Local times skipped by the jump fire at the jump.
	for _, x := range []time.Duration{60 * sec, 61 * sec, 62*sec - 1, 62 * sec} {
		if got := fwd.TrueTime(x); got != 60*sec {
			t.Errorf("forward jump: TrueTime(%v) = %v, want 60s", x, got)
		}
	}
	if got := fwd.TrueTime(62*sec + 1); got != 60*sec+1 {
		t.Errorf("forward jump: TrueTime(62s+1ns) = %v", got)
	}
	back := mustClock(t, ClockSpec{Jumps: []Jump{{At: 60 * sec, By: -2 * sec}}})
	// 59s is read twice: at true 59s and again at true 61s.
	if got := back.TrueTime(59 * sec); got != 59*sec {
		t.Errorf("backward jump: TrueTime(59s) = %v, want 59s", got)
	}
	if got := back.TrueTimeAfter(59*sec, 60*sec); got != 61*sec {
		t.Errorf("backward jump: TrueTimeAfter(59s, 60s) = %v, want 61s", got)
	}
	if got := back.TrueTimeAfter(10*sec, 100*sec); got != 100*sec {
		t.Errorf("TrueTimeAfter of a past reading = %v, want the after time", got)
	}
	if got := back.TrueTime(MaxTime); got != MaxTime {
		t.Errorf("unreachable reading: TrueTime = %v, want MaxTime", got)
	}
}

func TestClockMonotoneBetweenJumps(t *testing.T) {
	for name, spec := range clockSpecs {
		c := mustClock(t, spec)
		jumpAt := map[time.Duration]bool{}
		for _, j := range spec.Jumps {
			jumpAt[j.At] = true
		}
		r := rand.New(rand.NewPCG(3, 4))
		prev, prevT := c.Read(-40*time.Second), -40*time.Second
		for tt := prevT; tt < 100*time.Second; tt += time.Duration(1 + r.IntN(50_000_000)) {
			crossed := false
			for at := range jumpAt {
				if prevT < at && at <= tt {
					crossed = true
				}
			}
			if x := c.Read(tt); x < prev && !crossed {
				t.Fatalf("%s: Read(%v) = %v < Read(%v) = %v", name, tt, x, prevT, prev)
			} else {
				prev, prevT = x, tt
			}
		}
		// Nanosecond steps across slew boundaries.
		for _, s := range spec.Slews {
			for _, edge := range []time.Duration{s.From, s.To} {
				for tt := edge - 100; tt < edge+100; tt++ {
					if c.Read(tt+1) < c.Read(tt) {
						t.Fatalf("%s: decreasing at %v", name, tt)
					}
				}
			}
		}
	}
}

func TestClockValidate(t *testing.T) {
	cases := []struct {
		name string
		spec ClockSpec
		want string
	}{
		{"nan drift", ClockSpec{DriftPPM: nanF()}, "clock.driftPPM"},
		{"huge drift", ClockSpec{DriftPPM: 600_000}, "at most 500000"},
		{"slew order", ClockSpec{Slews: []Slew{{From: 2, To: 1, PPM: 1}}}, "clock.slews[0]: to (1ns) must be after from (2ns)"},
		{"slew sum", ClockSpec{DriftPPM: 300_000, Slews: []Slew{{From: 1, To: 2, PPM: -300_000}}}, "at most 500000"},
		{"big offset", ClockSpec{Offset: MaxClockStep + 1}, "|offset|"},
		{"jump range", ClockSpec{Jumps: []Jump{{At: MaxTime + 1, By: 1}}}, "clock.jumps[0].at"},
	}
	for _, tc := range cases {
		err := tc.spec.Validate()
		if err == nil || !contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate() = %v, want an error containing %q", tc.name, err, tc.want)
		}
		if _, err := NewClock(tc.spec); err == nil {
			t.Errorf("%s: NewClock accepted it", tc.name)
		}
	}
}
