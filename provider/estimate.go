package provider

import (
	"fmt"
	"time"
)

// Sample is one ping/pong exchange: the NTP quadruple. Client times are
// readings of the client's monotonic clock, server times readings of the
// server's (its time since tick 0).
type Sample struct {
	ClientSend    time.Duration // T1: client sends the ping
	ServerReceive time.Duration // T2: server receives it
	ServerSend    time.Duration // T3: server sends the pong
	ClientReceive time.Duration // T4: client receives the pong
}

// Offset returns the sample's offset of the server clock from the client
// clock, ((T2-T1)+(T3-T4))/2: the true offset plus half the difference of the
// uplink and downlink delays.
func (s Sample) Offset() time.Duration {
	return (s.ServerReceive-s.ClientSend)/2 + (s.ServerSend-s.ClientReceive)/2
}

// RTT returns the round-trip time without the server's processing time,
// (T4-T1)-(T3-T2).
func (s Sample) RTT() time.Duration {
	return (s.ClientReceive - s.ClientSend) - (s.ServerSend - s.ServerReceive)
}

// Validate reports whether the sample is physically possible: the client
// receives after it sends, the server sends after it receives, and the
// server's hold time is no longer than the round trip.
func (s Sample) Validate() error {
	switch {
	case s.ClientReceive < s.ClientSend:
		return fmt.Errorf("provider: sample received (%v) before sent (%v)", s.ClientReceive, s.ClientSend)
	case s.ServerSend < s.ServerReceive:
		return fmt.Errorf("provider: server sent (%v) before it received (%v)", s.ServerSend, s.ServerReceive)
	case s.RTT() < 0:
		return fmt.Errorf("provider: server held the ping %v, longer than the round trip %v",
			s.ServerSend-s.ServerReceive, s.ClientReceive-s.ClientSend)
	}
	return nil
}

// Estimate is what a clock estimator knows about the server clock, as seen
// from the client clock. The client provider steers by it.
type Estimate struct {
	// Valid is false until the estimator has enough samples; an invalid
	// estimate is ignored.
	Valid bool
	// At is the client clock reading the estimate refers to.
	At time.Duration
	// Offset is the server clock minus the client clock at At.
	Offset time.Duration
	// DriftPPM is how much faster the server clock runs than the client
	// clock, in parts per million: server time advances by
	// dt*(1+DriftPPM/1e6) per dt of client time.
	DriftPPM float64
	// Uplink and Downlink are the one-way delays client→server and
	// server→client. Only their sum is observable; the split is the
	// estimator's best guess.
	Uplink, Downlink time.Duration
	// Jitter is the typical variation of the round-trip time.
	Jitter time.Duration
	// ErrorBound bounds |true offset − Offset| at At, excluding any fixed
	// path asymmetry, which no ping can observe. 0 means unknown.
	ErrorBound time.Duration
	// ErrorGrowthPPM is how fast the bound widens away from At, in parts
	// per million of the elapsed client time: the drift's uncertainty.
	// Without new samples (an outage, a stalled peer) the bound keeps
	// growing at this rate; see BoundAt.
	ErrorGrowthPPM float64
}

// BoundAt returns the error bound of ServerTime(clientNow): ErrorBound
// widened by ErrorGrowthPPM for the time since At. It is 0 (unknown) while
// ErrorBound is.
func (e Estimate) BoundAt(clientNow time.Duration) time.Duration {
	if e.ErrorBound <= 0 {
		return 0
	}
	elapsed := clientNow - e.At
	if elapsed < 0 {
		elapsed = -elapsed
	}
	return e.ErrorBound + time.Duration(float64(elapsed)*e.ErrorGrowthPPM/1e6)
}

// ServerTime returns the estimated server clock reading at the client clock
// reading clientNow, extrapolated from At with the drift.
func (e Estimate) ServerTime(clientNow time.Duration) time.Duration {
	elapsed := clientNow - e.At
	return clientNow + e.Offset + time.Duration(float64(elapsed)*e.DriftPPM/1e6)
}

// RTT returns Uplink + Downlink.
func (e Estimate) RTT() time.Duration { return e.Uplink + e.Downlink }
