// Package harness is netclock's accuracy harness: a deterministic,
// virtual-time simulation that runs netclock's estimator, provider and tick
// system side by side with every seed system on the same simulated network,
// and measures each against ground truth.
package harness

import "time"

// Msg is a message between the client and server halves of a System. Its
// fields mean what the System says; the harness only carries it.
type Msg struct {
	// Kind tells the system's message types apart.
	Kind uint8
	// Seq is a sequence number, such as a ping's.
	Seq uint64
	// T1: client send (client clock). T2, T3: server receive and send
	// (server clock).
	T1, T2, T3 time.Duration
	// Value is a system-defined payload, such as a replicated server time.
	Value time.Duration
	// Tick is a system-defined tick number, such as NGO's server tick.
	Tick int64
}

// Link sends a message to the other half, over the simulated network. The
// message leaves at the moment Send is called.
type Link interface {
	// Send puts m on the simulated network now; it may arrive late,
	// twice or never, as the profile says.
	Send(m Msg)
}

// Client is the client half of a System. Every method is called with the
// client clock reading now; the harness calls them in virtual-time order.
type Client interface {
	// Frame runs once per client frame; dt is the frame time on the
	// client clock. Systems that stamp at frame boundaries (Unreal) act on
	// received messages here.
	Frame(now, dt time.Duration)
	// Receive delivers a message from the server the moment it arrives.
	Receive(m Msg, now time.Duration)
	// Shared returns the system's current idea of the server clock — what
	// it shows the game — called right after each Frame.
	Shared(now time.Duration) time.Duration
	// Bound returns the system's error bound on Shared, and false if the
	// system publishes none.
	Bound(now time.Duration) (time.Duration, bool)
}

// Server is the server half of a System. Every method is called with the
// server clock reading now.
type Server interface {
	// Frame runs once per server frame (the server's tick).
	Frame(now time.Duration)
	// Receive delivers a message from a client the moment it arrives.
	Receive(m Msg, now time.Duration)
}

// Kind says what a System is there for.
type Kind string

// The kinds of systems.
const (
	// KindNetclock is netclock itself.
	KindNetclock Kind = "netclock"
	// KindSeed is a system of the seed documents, at its documented rate.
	KindSeed Kind = "seed"
	// KindReference is a textbook filter run at netclock's rate and
	// window, to compare estimators at equal data.
	KindReference Kind = "reference"
)

// System is one clock-synchronization scheme under test.
type System struct {
	// Name is the name the harness reports, such as "netclock" or "ngo".
	Name string
	// Kind labels the system as netclock, a seed or a reference filter.
	Kind Kind
	// Ping is the period of the system's steady requests (for ue-vanilla,
	// of the server's replication); 0 means once at connect (sutphin-rtt2).
	// Change it with WithPing.
	Ping time.Duration
	// New builds both halves: toServer carries the client's messages,
	// toClient the server's.
	New func(toServer, toClient Link) (Client, Server)

	newAt func(ping time.Duration, toServer, toClient Link) (Client, Server)
}

// WithPing returns s running its requests every ping instead (ping > 0), so
// that systems can be compared at equal data. Systems built outside this
// package are returned unchanged.
func (s System) WithPing(ping time.Duration) System {
	if s.newAt == nil || ping <= 0 {
		return s
	}
	newAt := s.newAt
	s.Ping = ping
	s.New = func(toServer, toClient Link) (Client, Server) { return newAt(ping, toServer, toClient) }
	return s
}

// system builds a System whose New runs at its default ping.
func system(name string, kind Kind, ping time.Duration, newAt func(ping time.Duration, toServer, toClient Link) (Client, Server)) System {
	s := System{Name: name, Kind: kind, newAt: newAt}
	s = s.WithPing(ping)
	if ping == 0 {
		s.New = func(toServer, toClient Link) (Client, Server) { return newAt(0, toServer, toClient) }
	}
	return s
}

// Pacer is implemented by clients that send on a timer of their own, as
// netclock's transport does, instead of from Frame. The harness calls Ping
// on true time (the machine's real time, not the client clock a test may
// step), first at the start, then each returned delay later; never while
// the client is suspended (a due call runs at the resume).
type Pacer interface {
	// Ping sends what is due at client clock reading now and returns the
	// true-time delay until the next call.
	Ping(now time.Duration) (next time.Duration)
}

// Frame rates of the simulated peers.
const (
	ServerFrame = time.Second / 60 // the server's tick: Unreal's and NGO's server stamp times here
)
