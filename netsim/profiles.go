package netsim

import (
	"slices"
	"time"
)

const ms = time.Millisecond

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }

// unity is a link in Unity's "delay ± jitter" preset convention: uniform in
// [delay-jitter, delay+jitter), loss in percent.
func unity(delay, jitter time.Duration, lossPct float64) LinkSpec {
	return LinkSpec{
		Base:   delay - jitter,
		Jitter: JitterSpec{Kind: JitterUniform, Spread: 2 * jitter},
		Loss:   lossPct / 100,
	}
}

// unreal is a link through one Unreal network emulator: lag uniform in
// [lo, hi), loss in percent.
func unreal(lo, hi time.Duration, lossPct float64) LinkSpec {
	return LinkSpec{
		Base:   lo,
		Jitter: JitterSpec{Kind: JitterUniform, Spread: hi - lo},
		Loss:   lossPct / 100,
	}
}

// client is a client clock with an offset and a drift.
func client(offset time.Duration, ppm float64) ClockSpec {
	return ClockSpec{Offset: offset, DriftPPM: ppm}
}

// Frame timings: a desktop game at 60 Hz and a mobile game at 30 Hz.
var (
	desktopFrames = FrameSpec{Interval: DefaultFrameInterval, Jitter: 1 * ms, HitchProb: 0.001, HitchDuration: 100 * ms}
	mobileFrames  = FrameSpec{Interval: 33_333_333 * time.Nanosecond, Jitter: 3 * ms, HitchProb: 0.003, HitchDuration: 150 * ms}
)

// Profiles returns the named profiles, freshly built (callers may modify
// them). See the package documentation for the list.
func Profiles() []Profile {
	// Fiber and broadband as used by the scenario profiles.
	fiber := unity(10*ms, 1*ms, 0)
	broadband := unity(32*ms, 12*ms, 2)

	ps := []Profile{
		{
			Name:        "lan",
			Description: "Wired LAN: 0.2ms ±0.05ms uniform each way, no loss.",
			Up:          unity(200*time.Microsecond, 50*time.Microsecond, 0),
			Down:        unity(200*time.Microsecond, 50*time.Microsecond, 0),
			Client:      client(3700*ms, 31),
		},
		{
			Name:        "fiber",
			Description: "Unity preset Home Fiber: 10ms ±1ms uniform each way, no loss.",
			Up:          fiber,
			Down:        fiber,
			Client:      client(-5200*ms, -42),
		},
		{
			Name:        "cable",
			Description: "Unity preset Home Cable: 25ms ±5ms uniform each way, no loss.",
			Up:          unity(25*ms, 5*ms, 0),
			Down:        unity(25*ms, 5*ms, 0),
			Client:      client(8100*ms, 24),
		},
		{
			Name:        "dsl",
			Description: "Unity preset Home DSL: 30ms ±10ms uniform each way, no loss.",
			Up:          unity(30*ms, 10*ms, 0),
			Down:        unity(30*ms, 10*ms, 0),
			Client:      client(-2900*ms, 67),
		},
		{
			Name:        "broadband",
			Description: "Unity preset Home Broadband: 32ms ±12ms uniform each way, 2% loss.",
			Up:          broadband,
			Down:        broadband,
			Client:      client(6400*ms, -58),
		},
		{
			Name: "congested",
			Description: "Unity preset congested broadband (50ms ±50ms, 1% loss) made realistic: a 5ms floor, " +
				"a per-packet uniform 0-40ms and a bufferbloat queue (mean 25ms, sd 20ms, correlation time 2s); " +
				"mean about 51ms, range about 5-110ms.",
			Up:     congested(),
			Down:   congested(),
			Client: client(-7600*ms, 73),
		},
		{
			Name:        "wifi",
			Description: "Busy home Wi-Fi: 2ms floor, exponential jitter of mean 3ms, 0.5% random loss plus interference bursts, 0.5% reordering by 4ms, 0.1% duplicates.",
			Up:          wifi(),
			Down:        wifi(),
			Client:      client(5500*ms, -36),
		},
		{
			Name:        "mobile-5g",
			Description: "Unity preset Mobile 5G: 30ms ±20ms uniform each way, 4% loss.",
			Up:          unity(30*ms, 20*ms, 4),
			Down:        unity(30*ms, 20*ms, 4),
			Client:      client(2300*ms, -27),
			Frames:      mobileFrames,
		},
		{
			Name: "mobile-4g",
			Description: "Unity preset Mobile 4G: 100ms ±20ms uniform each way, 4% loss, " +
				"split into 2% random loss and 2% in bursts of 4 packets on average (Gilbert-Elliott).",
			Up:     mobile4G(),
			Down:   mobile4G(),
			Client: client(4900*ms, 45),
			Frames: mobileFrames,
		},
		{
			Name:        "mobile-3g",
			Description: "Unity preset Mobile 3G: 360ms ±30ms uniform each way, 7% loss.",
			Up:          unity(360*ms, 30*ms, 7),
			Down:        unity(360*ms, 30*ms, 7),
			Client:      client(-3300*ms, -71),
			Frames:      mobileFrames,
		},
		{
			Name:        "mobile-2g",
			Description: "Unity preset Mobile 2G: 520ms ±50ms uniform each way, 7% loss.",
			Up:          unity(520*ms, 50*ms, 7),
			Down:        unity(520*ms, 50*ms, 7),
			Client:      client(9200*ms, 38),
			Frames:      mobileFrames,
		},
		{
			Name: "leo-satellite",
			Description: "Unity preset LEO satellite (100ms ±10ms uniform each way, no loss) plus handovers: " +
				"every 15s the path delay steps to a new value 0-8ms above the floor, independently per direction.",
			Up:     leo(),
			Down:   leo(),
			Client: client(-6100*ms, 52),
		},
		{
			Name: "ue-average",
			Description: "Unreal profile Average on one end (the client): lag uniform 30-60ms and 1% loss on its outgoing " +
				"and on its incoming packets, so each direction passes one emulator.",
			Up:     unreal(30*ms, 60*ms, 1),
			Down:   unreal(30*ms, 60*ms, 1),
			Client: client(3100*ms, 29),
		},
		{
			Name: "ue-bad",
			Description: "Unreal profile Bad on one end (the client): lag uniform 100-200ms and 5% loss on its outgoing " +
				"and on its incoming packets, so each direction passes one emulator.",
			Up:     unreal(100*ms, 200*ms, 5),
			Down:   unreal(100*ms, 200*ms, 5),
			Client: client(-4400*ms, -63),
		},
		{
			Name: "ue-bad-both",
			Description: "Unreal profile Bad with emulation target Everyone, as in seed 001's measurements: both ends " +
				"emulate, so each direction passes the sender's outgoing and the receiver's incoming emulator: " +
				"lag = U(100,200)+U(100,200) ms, a triangle on 200-400ms peaking at 300ms, and loss 1-0.95^2 = 9.75%.",
			Up:     ueBadBoth(),
			Down:   ueBadBoth(),
			Client: client(7700*ms, 41),
		},
		{
			Name: "asymmetric-jitter",
			Description: "Same 20ms floor both ways, but the uplink queues (exponential jitter, mean 15ms) while the " +
				"downlink is nearly clean (uniform 0-0.2ms). Averaging offset estimators are biased by ~7.5ms; " +
				"per-direction minimum filters are not.",
			Up:     LinkSpec{Base: 20 * ms, Jitter: JitterSpec{Kind: JitterExponential, Mean: 15 * ms}},
			Down:   LinkSpec{Base: 20 * ms, Jitter: JitterSpec{Kind: JitterUniform, Spread: 200 * time.Microsecond}},
			Client: client(-8300*ms, 35),
		},
		{
			Name: "fixed-asymmetry",
			Description: "Uplink floor 40ms, downlink floor 10ms, uniform jitter 0-0.5ms: the physical limit case. " +
				"No two-way algorithm can see a fixed asymmetry; every one is off by (40-10)/2 = 15ms.",
			Up:     LinkSpec{Base: 40 * ms, Jitter: JitterSpec{Kind: JitterUniform, Spread: 500 * time.Microsecond}},
			Down:   LinkSpec{Base: 10 * ms, Jitter: JitterSpec{Kind: JitterUniform, Spread: 500 * time.Microsecond}},
			Client: client(2600*ms, -48),
		},
		{
			Name:        "latency-step",
			Description: "Broadband (32ms ±12ms, 2% loss), then at 60s a route change adds 40ms in both directions (floor 20ms -> 60ms).",
			Up:          broadband,
			Down:        broadband,
			Client:      client(-5900*ms, 57),
			Changes:     []Change{{At: 60 * time.Second, Direction: DirBoth, Base: ptr(broadband.Base + 40*ms)}},
		},
		{
			Name:        "uplink-step",
			Description: "Broadband (32ms ±12ms, 2% loss), then at 60s the uplink alone gains 30ms (floor 20ms -> 50ms): an asymmetric route change.",
			Up:          broadband,
			Down:        broadband,
			Client:      client(6800*ms, -33),
			Changes:     []Change{{At: 60 * time.Second, Direction: DirUp, Base: ptr(broadband.Base + 30*ms)}},
		},
		{
			Name:        "outage-10s",
			Description: "Fiber (10ms ±1ms), total outage of both directions from 60s to 70s, client clock drifting 50ppm (0.5ms lost per 10s).",
			Up:          fiber,
			Down:        fiber,
			Client:      client(-3800*ms, 50),
			Changes:     []Change{{At: 60 * time.Second, Direction: DirBoth, Outage: 10 * time.Second}},
		},
		{
			Name:        "clock-jump",
			Description: "Fiber (10ms ±1ms); at 60s the client's clock jumps forward 2s (suspend/resume, VM migration).",
			Up:          fiber,
			Down:        fiber,
			Client: ClockSpec{Offset: 4200 * ms, DriftPPM: 22,
				Jumps: []Jump{{At: 60 * time.Second, By: 2 * time.Second}}},
		},
		{
			Name:        "clock-slew",
			Description: "Fiber (10ms ±1ms); from 60s to 180s the client's clock is slewed at +500ppm (an NTP correction at the kernel's maximum rate), gaining 60ms.",
			Up:          fiber,
			Down:        fiber,
			Client: ClockSpec{Offset: -6600 * ms, DriftPPM: -26,
				Slews: []Slew{{From: 60 * time.Second, To: 180 * time.Second, PPM: 500}}},
		},
		{
			Name:        "drift-500ppm",
			Description: "Broadband (32ms ±12ms, 2% loss) with a client clock drifting 500ppm (30ms per minute), the bad end of consumer hardware.",
			Up:          broadband,
			Down:        broadband,
			Client:      client(5100*ms, 500),
		},
	}
	for i := range ps {
		if ps[i].Frames == (FrameSpec{}) {
			ps[i].Frames = desktopFrames
		}
		ps[i] = ps[i].Clone() // no shared pointers between profiles
	}
	return ps
}

func congested() LinkSpec {
	return LinkSpec{
		Base:   5 * ms,
		Jitter: JitterSpec{Kind: JitterUniform, Spread: 40 * ms},
		Queue:  &QueueSpec{Mean: 25 * ms, StdDev: 20 * ms, Tau: 2 * time.Second},
		Loss:   0.01,
	}
}

func wifi() LinkSpec {
	return LinkSpec{
		Base:         2 * ms,
		Jitter:       JitterSpec{Kind: JitterExponential, Mean: 3 * ms, Cap: 200 * ms},
		Loss:         0.005,
		Burst:        &GilbertElliott{PGoodToBad: 0.002, PBadToGood: 0.3, LossInBad: 0.7},
		Reorder:      0.005,
		ReorderDelay: 4 * ms,
		Duplicate:    0.001,
	}
}

func mobile4G() LinkSpec {
	l := unity(100*ms, 20*ms, 2)
	// Bad 0.005/(0.005+0.25) = 1.96% of the time, losing everything:
	// total loss 1 - 0.98*0.9804 = 3.9%.
	l.Burst = &GilbertElliott{PGoodToBad: 0.005, PBadToGood: 0.25, LossInBad: 1}
	return l
}

func leo() LinkSpec {
	l := unity(100*ms, 10*ms, 0)
	l.Steps = &StepSpec{Interval: 15 * time.Second, Max: 8 * ms}
	return l
}

func ueBadBoth() LinkSpec {
	return LinkSpec{
		Base:   200 * ms,
		Jitter: JitterSpec{Kind: JitterTriangular, Spread: 200 * ms},
		Loss:   1 - 0.95*0.95,
	}
}

// ProfileByName returns the named profile with the given name.
func ProfileByName(name string) (Profile, bool) {
	for _, p := range Profiles() {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// ProfileNames returns the names of the named profiles, in the order of
// Profiles.
func ProfileNames() []string {
	var names []string
	for _, p := range Profiles() {
		names = append(names, p.Name)
	}
	return slices.Clip(names)
}
