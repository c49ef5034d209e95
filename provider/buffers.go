package provider

import (
	"math"
	"slices"
	"time"
)

// BufferPolicy sizes a Steered provider's two buffers: ServerBuffer, how far
// predicted time runs ahead of the estimated moment an input sent now
// reaches the server, and ClientBuffer, how far server time stays behind the
// newest state the client can have received (see SteeredConfig).
//
// A Steered provider calls its policy under its own lock, so a policy is
// never called concurrently through one Steered and must not call it back.
// Changes of the buffers it returns are slewed by the Steered, never
// stepped (see Steered).
type BufferPolicy interface {
	// ObserveSample is called with each ping sample the Steered is given
	// (Steered.ObserveSample) and the estimate in use at that moment.
	ObserveSample(s Sample, e Estimate)
	// ObserveFeedback is called with each arrival summary the server
	// returns (Steered.ObserveFeedback).
	ObserveFeedback(f Feedback)
	// Buffers returns ServerBuffer and ClientBuffer for a tick of length
	// tick, both non-negative.
	Buffers(tick time.Duration) (server, client time.Duration)
}

// FixedBuffers is the NGO-style policy: constant buffers, whatever the
// network does. Its zero value is netclock's fixed default: ServerBuffer
// two ticks, ClientBuffer one tick.
type FixedBuffers struct {
	// Server is ServerBuffer. Zero: two ticks. Negative: none.
	Server time.Duration
	// Client is ClientBuffer. Zero: one tick. Negative: none.
	Client time.Duration
}

// ObserveSample does nothing: fixed buffers ignore the network.
func (FixedBuffers) ObserveSample(Sample, Estimate) {}

// ObserveFeedback does nothing.
func (FixedBuffers) ObserveFeedback(Feedback) {}

// Buffers returns the fixed buffers, defaults filled in.
func (f FixedBuffers) Buffers(tick time.Duration) (server, client time.Duration) {
	return buffer(f.Server, 2*tick), buffer(f.Client, tick)
}

func buffer(configured, def time.Duration) time.Duration {
	switch {
	case configured == 0:
		return def
	case configured < 0:
		return 0
	}
	return configured
}

// FeedbackWindow is how many of a client's most recent stamped arrivals an
// ArrivalWindow summarizes.
const FeedbackWindow = 128

// Feedback is what a server measured about one client's stamped messages:
// how long before the start of the tick each was stamped for it arrived
// (its margin; negative: late, the tick was already simulated), over the
// client's last FeedbackWindow arrivals. The transport returns it to the
// client in every pong; an adaptive BufferPolicy steers the lead by it, as
// Netcode for Entities steers by its command age.
type Feedback struct {
	// Total counts the client's stamped arrivals since it connected,
	// modulo 2^32: a client tells a new window from one it has seen.
	Total uint32
	// Count is how many arrivals the summary covers (at most
	// FeedbackWindow); 0: none yet, the rest is meaningless.
	Count int
	// Late is how many of them arrived after their tick started.
	Late int
	// P1, P5 and P50 are the 1st, 5th and 50th percentiles (nearest rank)
	// of the margins: with a lead of L − P1, 99% of these would have been
	// just on time.
	P1, P5, P50 time.Duration
}

// ArrivalWindow keeps one client's recent arrival margins on a server and
// summarizes them as a Feedback. Its zero value is ready to use; it holds
// a fixed 2 KiB whatever the client sends and never allocates. It is not
// safe for concurrent use.
type ArrivalWindow struct {
	ring    [FeedbackWindow]time.Duration
	scratch [FeedbackWindow]time.Duration
	n, next int
	total   uint32
}

// Add records a message that arrived margin before the start of the tick
// it was stamped for (negative: late).
func (w *ArrivalWindow) Add(margin time.Duration) {
	w.ring[w.next] = margin
	w.next = (w.next + 1) % FeedbackWindow
	w.n = min(w.n+1, FeedbackWindow)
	w.total++
}

// Feedback summarizes the window.
func (w *ArrivalWindow) Feedback() Feedback {
	f := Feedback{Total: w.total, Count: w.n}
	if w.n == 0 {
		return f
	}
	s := w.scratch[:w.n]
	copy(s, w.ring[:w.n])
	slices.Sort(s)
	for _, m := range s {
		if m >= 0 {
			break
		}
		f.Late++
	}
	f.P1, f.P5, f.P50 = sortedRank(s, 0.01), sortedRank(s, 0.05), sortedRank(s, 0.5)
	return f
}

// sortedRank returns the q-quantile (nearest rank) of the sorted, non-empty s.
func sortedRank(s []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(s))+0.999999999) - 1
	return s[max(0, min(len(s)-1, i))]
}

// delayWindow is a ring of the last delays of one direction, with a
// scratch copy to take quantiles without allocating.
type delayWindow struct {
	ring, scratch []time.Duration
	n, next       int
}

func newDelayWindow(size int) delayWindow {
	return delayWindow{ring: make([]time.Duration, size), scratch: make([]time.Duration, size)}
}

func (w *delayWindow) reset() { w.n, w.next = 0, 0 }

func (w *delayWindow) add(d time.Duration) {
	w.ring[w.next] = d
	w.next = (w.next + 1) % len(w.ring)
	w.n = min(w.n+1, len(w.ring))
}

// tailQuantile returns the q-quantile of the window, which must not be
// empty, extrapolated from the delays beyond its 1 − m·(1 − q) quantile u
// (m at most 1/(2(1 − q)): u no lower than the median) as an exponential
// tail: u + (mean of their excess over u) × ln m.
func (w *delayWindow) tailQuantile(q, m float64) time.Duration {
	s := w.scratch[:w.n]
	copy(s, w.ring[:w.n])
	slices.Sort(s)
	if m = min(m, 0.5/(1-q)); m <= 1 {
		return sortedRank(s, q)
	}
	i := max(0, min(len(s)-1, int((1-m*(1-q))*float64(len(s))+0.999999999)-1))
	return expTail(s[i], s[i+1:], m)
}

// expTail extrapolates a quantile m times further into the tail than the
// threshold u, from the values beyond u, as an exponential tail: u plus
// their mean excess over u times ln m (u itself without any).
func expTail(u time.Duration, beyond []time.Duration, m float64) time.Duration {
	return u + time.Duration(float64(meanExcess(u, beyond))*math.Log(m))
}

// meanExcess is the mean of beyond's excess over u (0 for none): the
// scale of an exponential tail beyond u.
func meanExcess(u time.Duration, beyond []time.Duration) time.Duration {
	if len(beyond) == 0 {
		return 0
	}
	var excess time.Duration
	for _, x := range beyond {
		excess += x - u
	}
	return excess / time.Duration(len(beyond))
}

// quantile returns the q-quantile (nearest rank) of the window, which must
// not be empty.
func (w *delayWindow) quantile(q float64) time.Duration {
	s := w.scratch[:w.n]
	copy(s, w.ring[:w.n])
	slices.Sort(s)
	return sortedRank(s, q)
}
