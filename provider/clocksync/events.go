package clocksync

import "fmt"

// Event says what the estimator detected in a sample.
type Event int

const (
	// EventNone: an ordinary sample.
	EventNone Event = iota
	// EventClockJump: one clock stepped; the window restarted. Also a
	// fall of one floor first held as a path change, once the other
	// floor's samples proved it was the clock.
	EventClockJump
	// EventPathChange: a one-way delay stepped; the offset held.
	EventPathChange
	// EventClockShift: a clock's rate changed (a slew started or ended):
	// the floors moved equally and oppositely over seconds, or the newest
	// drift bins bent away from the history in both directions alike. The
	// window keeps what followed.
	EventClockShift
	// EventStall: the sample's round trip was far above the floor (a
	// paused peer, a burst of queued pings), or far below it (a ping in
	// flight when the client's clock stepped back); it was set aside.
	EventStall
	// EventRestart: no sample for as long as the window; the estimator
	// started afresh, keeping the drift and the path asymmetry.
	EventRestart
)

// String returns the event's name as logs print it: "none", "clock-jump",
// "path-change" or "clock-shift" ("Event(n)" for an unknown value).
func (e Event) String() string {
	switch e {
	case EventNone:
		return "none"
	case EventClockJump:
		return "clock-jump"
	case EventPathChange:
		return "path-change"
	case EventClockShift:
		return "clock-shift"
	case EventStall:
		return "stall"
	case EventRestart:
		return "restart"
	}
	return fmt.Sprintf("Event(%d)", int(e))
}

// Stats are running counts of an Estimator.
type Stats struct {
	Samples     int64 // accepted samples
	Rejected    int64 // samples Observe rejected
	Duplicates  int64 // samples ignored as exact repeats
	Jumps       int64 // clock jumps detected
	PathChanges int64 // path changes detected, less those a clock shift found later explained
	ClockShifts int64 // slow clock moves (slews) detected
	Stalled     int64 // samples set aside as stalled (a round trip far above the floor)
	Straddled   int64 // samples set aside as sent before a backward step of the client's clock and answered after it (a round trip far below the floor; once the jump is taken, an uplink delta of the old clock)
	Restarts    int64 // fresh starts after a gap as long as the window
	AsymResets  int64 // path readings dropped because they put the asymmetry A beyond the round-trip floor by more than half of it while that floor was at its shortest; A then went to half the round trip on its side
}
