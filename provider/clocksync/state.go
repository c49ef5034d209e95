package clocksync

import "fmt"

// State is what the estimator stands on, as a servo's state says what it
// is doing: a user can show it and a test can assert it.
type State int

const (
	// StateInit: no sample yet; the Estimate is not valid.
	StateInit State = iota
	// StateAcquire: converging after a start, a clock jump, a clock shift
	// or a silence as long as the window. The offset follows the floors
	// freely; path changes are not tracked yet.
	StateAcquire
	// StateLocked: tracking on the path the offset was measured on (the
	// first one, or one the path has come back to). The bound is the
	// statistical one.
	StateLocked
	// StateHeld: the path changed one way since the offset was measured,
	// and the offset is held across the change: the asymmetry term was
	// inferred, and its uncertainty is part of the bound.
	StateHeld
	// StateStalled: the latest samples came back far slower than the
	// floor (a paused peer) and are set aside; the estimate is the one
	// from before, its bound growing with the drift's uncertainty.
	StateStalled
)

// String returns the state's name: init, acquire, locked, held, stalled.
func (s State) String() string {
	switch s {
	case StateInit:
		return "init"
	case StateAcquire:
		return "acquire"
	case StateLocked:
		return "locked"
	case StateHeld:
		return "held"
	case StateStalled:
		return "stalled"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// State returns the estimator's state.
func (e *Estimator) State() State {
	switch {
	case !e.est.Valid:
		return StateInit
	case e.gatedRun > 0:
		return StateStalled
	case e.acquiring > 0:
		return StateAcquire
	case e.asymErr > 0:
		return StateHeld
	}
	return StateLocked
}
