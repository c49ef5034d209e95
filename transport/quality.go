package transport

import (
	"fmt"
	"time"
)

// Quality grades a client's connection for its clock, like Mirror's
// ConnectionQuality, from its error bound, loss of the last 100 pings and
// jitter: Good within 2 ms, 2% and 10 ms, Fair within 10 ms, 10% and 40 ms.
// A grade drops at once; it rises after holding for 3 s at 80% of the limits.
type Quality uint8

// The grades.
const (
	QualityUnknown Quality = iota // not synced yet, or resyncing after a server restart
	QualityPoor                   // over a Fair limit, or not synchronized any more
	QualityFair                   // within every Fair limit
	QualityGood                   // within every Good limit
)

// The grades' limits (all three to be met) and a rise's margin and hold.
const (
	qualityGoodBound  = 2 * time.Millisecond
	qualityGoodLoss   = 0.02
	qualityGoodJitter = 10 * time.Millisecond
	qualityFairBound  = 10 * time.Millisecond
	qualityFairLoss   = 0.10
	qualityFairJitter = 40 * time.Millisecond
	qualityRiseMargin = 0.8
	qualityRiseHold   = 3 * time.Second
)

// String returns "unknown", "poor", "fair" or "good".
func (q Quality) String() string {
	switch q {
	case QualityUnknown:
		return "unknown"
	case QualityPoor:
		return "poor"
	case QualityFair:
		return "fair"
	case QualityGood:
		return "good"
	}
	return fmt.Sprintf("Quality(%d)", uint8(q))
}

// MarshalText encodes the quality as its String, for JSON and logs.
func (q Quality) MarshalText() ([]byte, error) { return []byte(q.String()), nil }

// QualityChange is a change of a client's Quality and what it was graded on.
type QualityChange struct {
	From, To           Quality
	At                 time.Duration // the client clock (Client.Clock)
	ErrorBound, Jitter time.Duration
	Loss               float64 // of the last 100 pings, 0 to 1
	Synchronized       bool    // ClientStats.Synchronized
}

// qualityInput is what a grade is computed from.
type qualityInput struct {
	at            time.Duration // the client clock
	valid, synced bool          // the estimate; ClientStats.Synchronized
	bound, jitter time.Duration
	loss          float64
}

// grade returns the grade of in with the limits scaled by margin.
func grade(in qualityInput, margin float64) Quality {
	switch {
	case !in.valid:
		return QualityUnknown
	case !in.synced:
		return QualityPoor
	}
	within := func(bound, jitter time.Duration, loss float64) bool {
		return in.bound <= time.Duration(float64(bound)*margin) &&
			in.jitter <= time.Duration(float64(jitter)*margin) &&
			in.loss <= loss*margin
	}
	switch {
	case within(qualityGoodBound, qualityGoodJitter, qualityGoodLoss):
		return QualityGood
	case within(qualityFairBound, qualityFairJitter, qualityFairLoss):
		return QualityFair
	}
	return QualityPoor
}

// qualityMeter is the hysteresis of Quality. Its state is the grade and,
// while a better grade holds with margin, since when (rising).
type qualityMeter struct {
	q         Quality
	rising    bool
	riseSince time.Duration
	riseTo    Quality
}

// update grades in and returns the grade, and whether it changed.
func (m *qualityMeter) update(in qualityInput) (Quality, bool) {
	raw := grade(in, 1)
	switch {
	case raw == QualityUnknown || m.q == QualityUnknown || raw < m.q:
		// Unknown either way, the first grade, or worse: at once.
		m.rising = false
		changed := raw != m.q
		m.q = raw
		return m.q, changed
	case raw == m.q:
		m.rising = false
		return m.q, false
	}
	// Better: it must hold with margin for qualityRiseHold.
	better := grade(in, qualityRiseMargin)
	if better <= m.q {
		m.rising = false
		return m.q, false
	}
	if !m.rising || better < m.riseTo {
		m.rising, m.riseSince, m.riseTo = true, in.at, better
	}
	if in.at-m.riseSince < qualityRiseHold {
		return m.q, false
	}
	m.rising = false
	m.q = m.riseTo
	return m.q, true
}
