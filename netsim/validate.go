package netsim

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ValidationError is one problem found by a Validate method. Validate
// returns every problem it finds, joined with errors.Join; use errors.As to
// get the first one as a *ValidationError.
type ValidationError struct {
	// Path locates the bad value in JSON terms, e.g. "up.jitter.shape" or
	// "changes[2].loss".
	Path string
	// Msg says what is wrong and what is expected.
	Msg string
}

// Error returns "Path: Msg".
func (e *ValidationError) Error() string { return e.Path + ": " + e.Msg }

type validator struct{ errs []error }

func (v *validator) addf(path, format string, args ...any) {
	v.errs = append(v.errs, &ValidationError{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) err() error { return errors.Join(v.errs...) }

// prob checks a probability.
func (v *validator) prob(path string, p float64) {
	if math.IsNaN(p) || p < 0 || p > 1 {
		v.addf(path, "must be a probability in [0, 1], got %v", p)
	}
}

// delay checks a duration that must be in [0, MaxDelay].
func (v *validator) delay(path string, d time.Duration) {
	switch {
	case d < 0:
		v.addf(path, "must not be negative, got %v", d)
	case d > MaxDelay:
		v.addf(path, "must be at most %v, got %v", MaxDelay, d)
	}
}
