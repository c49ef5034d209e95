package transport

import (
	"fmt"
	"time"
)

// Quality grades a client's connection for its clock: what a game shows
// as a connection indicator (Mirror's ConnectionQuality plays this part;
// FishNet users build one from its RTT updates). It is computed from the error bound, the round-trip
// ping loss over the last 100 pings and the jitter (see the thresholds
// below), with hysteresis: it drops as soon as a threshold is crossed, and
// rises only after the better grade has held with a margin for
// QualityRiseHold. ClientStats.Quality, ClientInfo.Quality and
// ClientConfig.OnQualityChange report it.
type Quality uint8

const (
	// QualityUnknown: not synced yet (Client.Synced: the start burst is
	// being observed), and after a reconnect to a restarted server until
	// the client resynced.
	QualityUnknown Quality = iota
	// QualityPoor: over a Fair threshold, or not synchronized (the link
	// down or the server silent) after having been.
	QualityPoor
	// QualityFair: within every Fair threshold.
	QualityFair
	// QualityGood: within every Good threshold.
	QualityGood
)

// Thresholds of the grades: a connection is Good when all three of its
// error bound, loss and jitter are within the Good limits, Fair when all
// are within the Fair ones, Poor otherwise. The bound matters most for a
// clock: 2 ms is an eighth of a 60 Hz tick, invisible; 10 ms is most of
// half a tick, where inputs start to land a tick off. Loss of 2% and
// jitter of 10 ms are what home broadband shows on a good day (Unity's
// Home Broadband preset: 32±12 ms, 2%); 10% and 40 ms are past Unreal's
// "Bad" profile (100–200 ms, 5%) in loss, near it in jitter. For scale:
// Mirror's simple heuristic grades by RTT and jitter only (good up to
// 200 ms RTT and 200 ms jitter, fair up to 400 and 500); netclock grades
// what the clock suffers from, and leaves RTT to the game.
const (
	// QualityGoodBound is the largest error bound of a Good connection.
	QualityGoodBound = 2 * time.Millisecond
	// QualityGoodLoss is the largest ping loss of a Good connection, as a
	// fraction of the last 100 pings.
	QualityGoodLoss = 0.02
	// QualityGoodJitter is the largest jitter of a Good connection.
	QualityGoodJitter = 10 * time.Millisecond
	// QualityFairBound is the largest error bound of a Fair connection.
	QualityFairBound = 10 * time.Millisecond
	// QualityFairLoss is the largest ping loss of a Fair connection.
	QualityFairLoss = 0.10
	// QualityFairJitter is the largest jitter of a Fair connection.
	QualityFairJitter = 40 * time.Millisecond
)

// Hysteresis of Quality: to rise a grade, the bound, loss and jitter must
// all be below QualityRiseMargin times the better grade's limits, for
// QualityRiseHold without a break. Dropping a grade is immediate.
const (
	// QualityRiseMargin scales the better grade's limits a rise must
	// stay within.
	QualityRiseMargin = 0.8
	// QualityRiseHold is how long it must stay within them.
	QualityRiseHold = 3 * time.Second
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

// QualityChange is the event of a client's Quality changing.
type QualityChange struct {
	// From and To are the grades before and after.
	From, To Quality
	// At is the client clock (ClientConfig.Provider.Clock) when the
	// change was seen.
	At time.Duration
	// ErrorBound, Jitter and Loss are the values it was graded on; Loss
	// is the fraction of the last 100 pings lost (0 to 1).
	ErrorBound, Jitter time.Duration
	Loss               float64
	// Synchronized is ClientStats.Synchronized then.
	Synchronized bool
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
	case within(QualityGoodBound, QualityGoodJitter, QualityGoodLoss):
		return QualityGood
	case within(QualityFairBound, QualityFairJitter, QualityFairLoss):
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
	// Better: it must hold with margin for QualityRiseHold.
	better := grade(in, QualityRiseMargin)
	if better <= m.q {
		m.rising = false
		return m.q, false
	}
	if !m.rising || better < m.riseTo {
		m.rising, m.riseSince, m.riseTo = true, in.at, better
	}
	if in.at-m.riseSince < QualityRiseHold {
		return m.q, false
	}
	m.rising = false
	m.q = m.riseTo
	return m.q, true
}
