// Package netsim is a deterministic, seeded model of a network path and of
// the two clocks at its ends, for testing clock synchronization.
//
// It serves two users with the same definitions:
//
//   - the accuracy harness, which runs in virtual time: it calls
//     Link.SendAppend with simulated true times and simulates hours of
//     ping/pong traffic in well under a second;
//   - a real-time link emulator wrapping a net.PacketConn (Conn), which
//     calls the same Link with time.Since(start) and holds each datagram
//     until its arrival time.
//
// The named profiles (Profiles, ProfileByName) are the only definition of
// each profile in the code base; build links and clocks from them rather than
// copying numbers.
//
// # Model
//
// True time is the simulation's ideal time line: a time.Duration since the
// start of the run. Everything in this package is a function of true time;
// nothing reads a real clock except the wall-clock emulator (Conn,
// NewWallClock), which takes true time from the monotonic clock.
//
// A Clock (from a ClockSpec) maps true time to a local reading: an offset, a
// constant drift in ppm, jumps (steps of the reading), slews (NTP-style
// temporary rate changes), frequency wander (the drift as a random walk)
// and suspends (the clock stops while the machine sleeps, as Linux's
// CLOCK_MONOTONIC does). Clock.Read is exact to the nanosecond;
// Clock.TrueTime and Clock.TrueTimeAfter invert it ("when will this clock
// read X").
//
// A Link (from a LinkSpec, one per direction; "up" is client to server)
// turns a send time into zero, one or two arrival times. The delay of a
// packet is
//
//	wait + Base + flap + step + queue + bloat + jitter [+ ReorderDelay]
//
// with every term non-negative, so Base is the minimum delay and everything
// else is queueing. Jitter is drawn per packet from a distribution
// (JitterKinds), possibly a measured histogram (the built-in 5G ones, or
// your own); Queue is a bufferbloat queue correlated in time; Bloat is a
// queue that competing traffic builds over seconds and drains slowly; Steps
// are periodic path changes (satellite handovers); Flap alternates the floor
// between two routes; Periodic holds packets until the next service instant
// (a Wi-Fi beacon in power save, a cellular scheduling grant). Loss is random (Loss) and
// bursty (Burst, a Gilbert–Elliott chain). Packets can be held back
// (Reorder) or duplicated (Duplicate). Delivery is not FIFO: a packet that
// draws less jitter overtakes its predecessor, as on a real UDP path.
// Changes switch the base delay, jitter, loss, queue, steps, reordering,
// duplication or periodic service at given times, per direction, at once or
// as a linear ramp, and cause outages.
//
// Frames (from a FrameSpec) generates the client game loop's frame
// durations: a nominal interval, uniform jitter and occasional hitches.
//
// # Wall-clock emulation
//
// Conn puts a profile's path between a real client process and its peers:
// NewConn(inner, profile, seed) wraps the client's socket, delays, drops and
// duplicates what the client writes through the uplink and what it reads
// through the downlink, exactly as the harness's Links would for the same
// seed and send times, with true time = time since NewConn (Conn.Start),
// so the profile's changes and outages happen on schedule. Only the client
// is wrapped; the server uses a plain socket. One scheduler goroutine with a
// min-heap of datagrams in flight and a single timer hands each copy on at
// its arrival time; a reader goroutine drains the wrapped socket; ReadFrom
// honours read deadlines and Close (quic-go relies on both). Conn has only
// the methods of net.PacketConn, so QUIC stacks use plain ReadFrom/WriteTo
// and cannot bypass it. Under testing/synctest the timing is exact; in real
// time copies are handed on late by the scheduling latency, never early.
// NewWallClock and NewWallClockAt(spec, conn.Start()) give the client a
// clock with the profile's offset, drift, jumps and slews on the same time
// line, so the true error of a clock estimate is known exactly.
//
// # Conventions of the presets
//
// Unity's presets give "delay ± jitter", uniform in [delay-jitter,
// delay+jitter] in each direction. Here that is Base = delay-jitter and a
// uniform jitter of Spread = 2*jitter: Home Broadband 32±12 ms is Base 20ms,
// Spread 24ms. Unreal's profiles give a lag uniform in [min, max]: Base =
// min, Spread = max-min.
//
// Unreal's emulator sits inside each engine instance and delays both that
// instance's outgoing packets (PktLagMin/Max, PktLoss) and its incoming
// packets (PktIncomingLagMin/Max, PktIncomingLoss); the editor's Average and
// Bad profiles fill in both sides with the same values. When one end
// emulates (the "ue-average" and "ue-bad" profiles), each direction passes
// through exactly one emulator: uniform lag per direction. With the emulation target "Everyone" (server and
// clients emulate, as in seed 001's measurements; "ue-bad-both"), each
// direction passes through the sender's outgoing and the receiver's incoming
// emulator: the lag is the sum of two uniforms (a triangle on
// [2*min, 2*max]) and the loss 1-(1-p)^2. Unreal releases delayed packets on
// engine ticks, adding up to a frame per emulator; that quantization is not
// modelled.
//
// # Determinism
//
// A Link, Frames or profile run is a pure function of its spec, its seed and
// the sequence of calls. Each random feature of a link draws from its own
// sub-stream of the seed (math/rand/v2 PCG), and draws the same amount for
// every packet whether or not the packet is delivered, so changing one
// parameter (say the loss rate) leaves the other features' draws unchanged.
// Profile.NewLinks derives the uplink's and downlink's seeds from one seed.
//
// # Named profiles
//
// Every named profile gives the client clock an offset of a few seconds and
// a drift of 20-80 ppm (unless the profile is about the clock), so an offset
// is never accidentally zero; the server clock is true time. Desktop
// profiles run the client at 60 Hz ±1ms with a 100ms hitch every ~1000
// frames, mobile ones at 30 Hz ±3ms with a 150ms hitch every ~333 frames.
//
//	lan                0.2ms ±0.05ms
//	fiber              10ms ±1ms (Unity Home Fiber)
//	cable              25ms ±5ms (Unity Home Cable)
//	dsl                30ms ±10ms (Unity Home DSL)
//	broadband          32ms ±12ms, 2% loss (Unity Home Broadband)
//	congested          ≈50ms ±50ms, 1% loss, as floor + uniform + bufferbloat queue
//	wifi               2ms + exponential 3ms, bursty loss, reordering, duplicates
//	mobile-5g          30ms ±20ms, 4% loss (Unity Mobile 5G)
//	mobile-4g          100ms ±20ms, 4% loss, half of it in bursts (Unity Mobile 4G)
//	mobile-3g          360ms ±30ms, 7% loss (Unity Mobile 3G)
//	mobile-2g          520ms ±50ms, 7% loss (Unity Mobile 2G)
//	leo-satellite      100ms ±10ms + 0-8ms handover steps every 15s
//	ue-average         Unreal Average on one end: 30-60ms, 1% per direction
//	ue-bad             Unreal Bad on one end: 100-200ms, 5% per direction
//	ue-bad-both        Unreal Bad on both ends: 200-400ms triangular, 9.75%
//	asymmetric-jitter  20ms both ways; uplink exponential jitter mean 15ms
//	fixed-asymmetry    uplink 40ms, downlink 10ms, jitter 0.5ms
//	latency-step       broadband; at 60s both directions +40ms
//	uplink-step        broadband; at 60s uplink +30ms
//	outage-10s         fiber; no traffic from 60s to 70s; client drift 50ppm
//	clock-jump         fiber; client clock jumps +2s at 60s
//	clock-slew         fiber; client clock slews +500ppm from 60s to 180s
//	drift-500ppm       broadband; client drift 500ppm
//
// # Random scenarios
//
// RandomProfile(seed) draws a realistic scenario from a documented
// distribution (see its doc comment): every feature above, combined at
// random, with events placed in a 20-minute run (RandomHorizon). The
// accuracy command's suite runs hundreds of them.
//
// # JSON format
//
// A profile file is one JSON object (ParseProfile, LoadProfile). Keys are
// the lower-camel-case forms of the Go field names, as below (matched
// case-insensitively, like encoding/json). Unknown keys are errors, so a
// typo never silently drops a setting; so is trailing data. Omitted keys
// take their zero values (no delay, no loss, perfect clock, 60 Hz frames);
// only "name" is required.
//
// Durations are strings in Go's time.ParseDuration format: "10ms", "1.5ms",
// "250us" (or "250µs"), "2s", "1m30s", "-3.2s". A plain JSON number is also
// accepted and means nanoseconds (1500000 is 1.5ms); it must be a whole
// number. Probabilities are numbers in [0, 1] (0.02 is 2%). Clock rates are
// in ppm.
//
//	{
//	  "name": "my-dsl",
//	  "description": "DSL with a bufferbloated uplink and a route change",
//	  "up": {
//	    "base": "20ms",
//	    "jitter": {"kind": "uniform", "spread": "20ms"},
//	    "queue": {"mean": "15ms", "stdDev": "10ms", "tau": "2s"},
//	    "loss": 0.01,
//	    "burst": {"pGoodToBad": 0.005, "pBadToGood": 0.25, "lossInBad": 1}
//	  },
//	  "down": {
//	    "base": "20ms",
//	    "jitter": {"kind": "pareto", "scale": "2ms", "shape": 2.5, "cap": "200ms"},
//	    "steps": {"interval": "15s", "max": "8ms"},
//	    "reorder": 0.01, "reorderDelay": "5ms",
//	    "duplicate": 0.001
//	  },
//	  "client": {
//	    "offset": "-4.25s", "driftPPM": 35,
//	    "jumps": [{"at": "5m", "by": "2s"}],
//	    "slews": [{"from": "10m", "to": "12m", "ppm": -500}]
//	  },
//	  "server": {},
//	  "frames": {"interval": "16.666667ms", "jitter": "1ms", "hitchProb": 0.001, "hitchDuration": "100ms"},
//	  "changes": [
//	    {"at": "60s", "direction": "up", "base": "50ms"},
//	    {"at": "90s", "direction": "both", "jitter": {"kind": "exponential", "mean": "10ms"}, "loss": 0.05},
//	    {"at": "120s", "direction": "both", "outage": "10s"}
//	  ]
//	}
//
// Jitter kinds and their parameters (a parameter of another kind is an
// error): "none"; "uniform" and "triangular": spread; "normal": mean
// (default 0) and stdDev; "exponential": mean; "pareto": scale and shape
// (> 1); "empirical": histogram (a built-in name, "5g-midband-uplink" or
// "5g-midband-downlink") or bins ([[lower bound ms, count], ...], the last
// row closing the last bin, as in ParseHistogram's text format). Every kind
// accepts cap. A change sets absolute values ("base": "50ms" is the new base
// delay, not an increment) for "up", "down" or "both", from "at" on; it may
// set base, jitter, loss, queue, steps, reorder, reorderDelay, duplicate and
// periodic, and "ramp": "10s" moves its numeric values linearly over 10s;
// "outage" drops everything sent in [at, at+outage). A zero queue or a
// periodic with period "0s" switches them off.
//
// More link keys: "periodic": {"period": "102.4ms", "phase": "3ms"};
// "bloat": {"max": "300ms", "rise": "5s", "drain": "20s", "busy": "40s",
// "idle": "60s"}; "flap": {"extra": "15ms", "minHold": "30s", "maxHold":
// "60s"}. More clock keys: "suspends": [{"at": "5m", "for": "30s"}] (client
// only); "wander": {"ppmPerMinute": 0.5, "step": "1s", "limitPPM": 100,
// "seed": 3}.
//
// Duplicate keys in an object (also differing only in case, as encoding/json
// matches them) are errors.
//
// Errors name the offending key path, e.g.
//
//	netsim: parse profile: up.jitter: unknown field "sprd" (known fields: kind, spread, mean, stdDev, scale, shape, cap)
//	netsim: invalid profile my-dsl:
//	up.jitter.shape: pareto shape must be a finite number greater than 1 (a shape <= 1 has an infinite mean), got 0.8
package netsim
