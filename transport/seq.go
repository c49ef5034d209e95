package transport

import (
	"time"
)

// seqWindow is how many recent pings a client remembers to match pongs
// against: 25.6 s at 10 Hz, far beyond any useful round trip.
const seqWindow = 256

// seqTracker matches pongs to pings by sequence number. Sequence numbers
// are 64-bit inside and 32-bit on the wire; a pong's is resolved against
// the newest ping, which is unambiguous within seqWindow.
type seqTracker struct {
	slots    [seqWindow]pingSlot
	next     uint64 // the next ping's sequence number
	highest  uint64 // 1 + the highest answered, 0 if none
	answered uint64 // distinct pings answered
}

type pingSlot struct {
	seq      uint64
	t1       time.Duration
	sent     bool
	answered bool
}

type pongVerdict int

const (
	pongNew pongVerdict = iota
	pongDuplicate
	pongStale    // never sent, or older than the window
	pongMismatch // T1 echo differs: not our ping
)

func (t *seqTracker) send(t1 time.Duration) uint32 {
	s := t.next
	t.next++
	t.slots[s%seqWindow] = pingSlot{seq: s, t1: t1, sent: true}
	return uint32(s)
}

func (t *seqTracker) answer(seq uint32, t1 time.Duration) pongVerdict {
	ago := uint32(t.next) - seq // 1 for the newest ping
	if ago == 0 || ago > seqWindow {
		return pongStale
	}
	full := t.next - uint64(ago)
	sl := &t.slots[full%seqWindow]
	switch {
	case !sl.sent || sl.seq != full:
		return pongStale
	case sl.t1 != t1:
		return pongMismatch
	case sl.answered:
		return pongDuplicate
	}
	sl.answered = true
	t.answered++
	t.highest = max(t.highest, full+1)
	return pongNew
}

// lost returns the pings below the highest answered one without a pong.
func (t *seqTracker) lost() int64 { return int64(t.highest - t.answered) }

// lossWindow is how many recent pings the loss rate is computed over (10 s
// at 10 Hz).
const lossWindow = 100

// recentLoss returns the fraction of the last lossWindow pings below the
// highest answered one that have no pong: the recent round-trip loss. Pings
// newer than the highest answered are in flight, not lost.
func (t *seqTracker) recentLoss() float64 {
	lo := t.highest - min(lossWindow, t.highest)
	var lost, total int
	for s := lo; s < t.highest; s++ {
		sl := &t.slots[s%seqWindow]
		if !sl.sent || sl.seq != s {
			continue
		}
		total++
		if !sl.answered {
			lost++
		}
	}
	if total == 0 {
		return 0
	}
	return float64(lost) / float64(total)
}
