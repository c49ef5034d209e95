package harness

import (
	"container/heap"
	"slices"
	"time"
)

// OracleLead is the tick-start oracle: the smallest constant send lead that
// puts a fraction q of the inputs on time when each input leaves exactly L
// before its tick. An input sent L before its tick is on time when its
// one-way delay is at most L, so it is the q-quantile (nearest rank) of the
// delays. It reorders delays. It ignores when a game can send (at its
// frames, up to a frame after a tick began, later after a stall); see
// OracleFrameLead for the oracle of a frame-driven client.
func OracleLead(delays []float64, q float64) float64 { return selectQuantile(delays, q) }

// OracleInterpDelay is the smallest constant interpolation delay that
// starves at most a fraction q of the frames: a frame with need n (true
// server time − newest snapshot received, both read at the client's frame,
// which is when a game reads the network) is fed at delay D when n ≤ D.
// It reorders needs.
func OracleInterpDelay(needs []float64, q float64) float64 { return selectQuantile(needs, 1-q) }

// MaxOracleLead is the largest lead OracleFrameLead considers.
const MaxOracleLead = 10 * time.Second

// FrameSend is one client frame as the frame oracle sees it: the true
// server time at the frame, and when a message sent at that frame reached
// the server (server clock), unless it was lost.
type FrameSend struct {
	At, Arrived time.Duration
	Lost        bool
}

// OracleFrameLead is the oracle of a frame-driven client: the smallest
// constant lead L ≥ 0 such that, had the client's predicted time been true
// server time + L at each of its frames (stalls included), sending the
// input of each tick at the first frame whose predicted time reached the
// tick's start, a fraction q or more of the delivered inputs would have
// arrived no later than their tick's start. frames are in time order (At
// ascending); ticks are the tick start times measured (server clock,
// ascending), and a tick whose first such frame's message was lost counts
// neither way. margin is how long before its tick each delivered input
// then arrived, on average: the figure to compare with a model's mean
// input lead. ok is false when no lead up to MaxOracleLead reaches q
// (the sweep's cost grows with the lead).
//
// The on-time fraction need not grow with L (an earlier frame may meet a
// worse delay), so the sweep visits every lead at which some tick changes
// frame, in increasing order, and stops at the first that reaches q.
func OracleFrameLead(frames []FrameSend, ticks []time.Duration, q float64) (lead, margin time.Duration, ok bool) {
	if len(frames) == 0 || len(ticks) == 0 {
		return 0, 0, false
	}
	// cur[k] is tick k's sending frame at the current lead (len(frames):
	// not sent, no frame after its start).
	cur := make([]int, len(ticks))
	var delivered, onTime int
	count := func(k, sign int) {
		f := cur[k]
		if f >= len(frames) || frames[f].Lost {
			return
		}
		delivered += sign
		if frames[f].Arrived <= ticks[k] {
			onTime += sign
		}
	}
	var h breakHeap
	for k, t := range ticks {
		cur[k], _ = slices.BinarySearchFunc(frames, t, func(f FrameSend, t time.Duration) int { return cmpDur(f.At, t) })
		count(k, 1)
		if cur[k] > 0 {
			// Frame cur−1 sends tick k once L ≥ t − its time.
			h = append(h, breakpoint{t - frames[cur[k]-1].At, k})
		}
	}
	heap.Init(&h)
	reached := func() bool { return delivered > 0 && float64(onTime)/float64(delivered) >= q }
	for !reached() {
		if len(h) == 0 || h[0].lead > MaxOracleLead {
			return 0, 0, false
		}
		lead = h[0].lead
		for len(h) > 0 && h[0].lead == lead {
			k := h[0].tick
			count(k, -1)
			cur[k]--
			count(k, 1)
			if cur[k] > 0 {
				h[0].lead = ticks[k] - frames[cur[k]-1].At
				heap.Fix(&h, 0)
			} else {
				heap.Pop(&h)
			}
		}
	}
	var sum time.Duration
	for k, f := range cur {
		if f < len(frames) && !frames[f].Lost {
			sum += ticks[k] - frames[f].Arrived
		}
	}
	return lead, sum / time.Duration(delivered), true
}

func cmpDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// breakpoint: at lead, tick moves to the frame before its current one.
type breakpoint struct {
	lead time.Duration
	tick int
}

type breakHeap []breakpoint

func (h breakHeap) Len() int           { return len(h) }
func (h breakHeap) Less(i, j int) bool { return h[i].lead < h[j].lead }
func (h breakHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *breakHeap) Push(x any)        { *h = append(*h, x.(breakpoint)) }
func (h *breakHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
