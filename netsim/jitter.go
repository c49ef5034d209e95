package netsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// MaxDelay is the largest delay any part of a link may add (one hour). Every
// configured delay must be at most MaxDelay, and every random delay component
// is clamped to it, so arrival times never overflow.
const MaxDelay = time.Hour

// JitterKind names a jitter distribution.
type JitterKind string

// The jitter kinds. Every kind draws a non-negative extra delay that is added
// to the link's Base delay, so Base is always the minimum one-way delay (the
// propagation floor) and jitter is the queueing on top of it.
const (
	// JitterNone adds nothing. The empty kind means the same.
	JitterNone JitterKind = "none"
	// JitterUniform draws uniformly from [0, Spread).
	//
	// Unity's "delay ± jitter" presets (delay D, jitter J, each direction
	// uniform in [D-J, D+J]) are Base = D-J, Spread = 2J. Unreal's "lag
	// between min and max" is Base = min, Spread = max-min.
	JitterUniform JitterKind = "uniform"
	// JitterTriangular draws Spread*(U1+U2)/2: a triangle on [0, Spread)
	// peaking at Spread/2. It is the sum of two uniform delays of Spread/2
	// each, e.g. two network emulators in series.
	JitterTriangular JitterKind = "triangular"
	// JitterNormal draws from a normal distribution of mean Mean and
	// standard deviation StdDev truncated to [0, ∞) (redrawn while
	// negative). With Mean 0 it is a half-normal of mean StdDev*sqrt(2/π).
	JitterNormal JitterKind = "normal"
	// JitterExponential draws from an exponential distribution of mean
	// Mean: the waiting time of a memoryless queue.
	JitterExponential JitterKind = "exponential"
	// JitterPareto draws from a Pareto type II (Lomax) distribution starting
	// at 0: Scale*((1-U)^(-1/Shape) - 1). Heavy tailed; Shape must be > 1,
	// the mean is Scale/(Shape-1), the variance is finite only for Shape > 2.
	JitterPareto JitterKind = "pareto"
	// JitterEmpirical draws from a measured histogram (Histogram): a bin
	// by its count, then uniformly within the bin, minus the histogram's
	// floor (its lowest populated bin), so Base stays the minimum delay.
	// With the built-in 5G histograms the jitter has a soft floor, a second
	// mode and a tail, as real radio links do.
	JitterEmpirical JitterKind = "empirical"
)

// JitterKinds lists the accepted jitter kinds (besides the empty kind, which
// means JitterNone).
var JitterKinds = []JitterKind{JitterNone, JitterUniform, JitterTriangular, JitterNormal, JitterExponential, JitterPareto, JitterEmpirical}

// JitterSpec describes the random per-packet extra delay of a link. Each
// packet draws independently. The zero value adds no jitter. A parameter
// that its kind does not use must be zero (Validate rejects it), so a
// misplaced parameter is never silently ignored.
type JitterSpec struct {
	// Kind is the distribution; empty means JitterNone.
	Kind JitterKind

	// Spread is the width of the uniform and triangular distributions.
	Spread time.Duration

	// Mean is the mean of the exponential distribution, and the mean of
	// the normal distribution before truncation (default 0).
	Mean time.Duration

	// StdDev is the standard deviation of the normal distribution before
	// truncation.
	StdDev time.Duration

	// Scale is the scale of the Pareto distribution.
	Scale time.Duration

	// Shape is the shape (tail index α) of the Pareto distribution; it
	// must be greater than 1. Smaller is heavier: 1.5 has a finite mean and
	// an infinite variance.
	Shape float64

	// Cap, if positive, is the largest extra delay drawn: larger draws are
	// clamped to it. Zero means no cap (besides MaxDelay). Any kind.
	Cap time.Duration

	// Histogram is the distribution of the empirical kind: a built-in one
	// (BuiltinHistogram) or one of your own (ParseHistogram).
	Histogram *Histogram
}

// Validate reports whether j is a usable jitter spec.
func (j JitterSpec) Validate() error {
	var v validator
	j.validate(&v, "jitter")
	return v.err()
}

func (j JitterSpec) validate(v *validator, path string) {
	used := map[string]bool{}
	switch j.Kind {
	case "", JitterNone:
	case JitterUniform, JitterTriangular:
		used["spread"] = true
	case JitterNormal:
		used["mean"], used["stdDev"] = true, true
	case JitterExponential:
		used["mean"] = true
	case JitterEmpirical:
		if j.Histogram == nil {
			v.addf(path+".histogram", "is required for jitter kind empirical: a built-in name (%s) or bins", strings.Join(HistogramNames(), ", "))
		} else {
			j.Histogram.validate(v, path+".histogram")
		}
	case JitterPareto:
		used["scale"], used["shape"] = true, true
		if math.IsNaN(j.Shape) || j.Shape <= 1 || math.IsInf(j.Shape, 0) {
			v.addf(path+".shape", "pareto shape must be a finite number greater than 1 (a shape <= 1 has an infinite mean), got %v", j.Shape)
		}
	default:
		v.addf(path+".kind", "unknown jitter kind %q: want one of none, uniform, triangular, normal, exponential, pareto, empirical", j.Kind)
		return
	}
	kind := j.Kind
	if kind == "" {
		kind = JitterNone
	}
	durs := []struct {
		name string
		d    time.Duration
	}{{"spread", j.Spread}, {"mean", j.Mean}, {"stdDev", j.StdDev}, {"scale", j.Scale}}
	for _, f := range durs {
		if !used[f.name] {
			if f.d != 0 {
				v.addf(path+"."+f.name, "is not a parameter of jitter kind %q; remove it or change the kind", kind)
			}
			continue
		}
		v.delay(path+"."+f.name, f.d)
	}
	if j.Kind != JitterEmpirical && j.Histogram != nil {
		v.addf(path+".histogram", "is not a parameter of jitter kind %q; remove it or change the kind", kind)
	}
	if !used["shape"] && j.Shape != 0 {
		v.addf(path+".shape", "is not a parameter of jitter kind %q; remove it or change the kind", kind)
	}
	v.delay(path+".cap", j.Cap)
}

// String returns a short description such as "uniform(spread=24ms)".
func (j JitterSpec) String() string {
	var s string
	switch j.Kind {
	case "", JitterNone:
		return "none"
	case JitterUniform, JitterTriangular:
		s = fmt.Sprintf("%s(spread=%v", j.Kind, j.Spread)
	case JitterNormal:
		s = fmt.Sprintf("normal(mean=%v, stdDev=%v", j.Mean, j.StdDev)
	case JitterExponential:
		s = fmt.Sprintf("exponential(mean=%v", j.Mean)
	case JitterPareto:
		s = fmt.Sprintf("pareto(scale=%v, shape=%v", j.Scale, j.Shape)
	case JitterEmpirical:
		s = fmt.Sprintf("empirical(%v", j.Histogram)
	default:
		s = fmt.Sprintf("%q(", string(j.Kind))
	}
	if j.Cap > 0 {
		s += fmt.Sprintf(", cap=%v", j.Cap)
	}
	return s + ")"
}

// sample draws one extra delay. It never returns a negative value and never
// more than the cap (or MaxDelay).
func (j *JitterSpec) sample(r *rand.Rand) time.Duration {
	var x float64
	switch j.Kind {
	case "", JitterNone:
		return 0
	case JitterUniform:
		x = float64(j.Spread) * r.Float64()
	case JitterTriangular:
		x = float64(j.Spread) * 0.5 * (r.Float64() + r.Float64())
	case JitterNormal:
		m, sd := float64(j.Mean), float64(j.StdDev)
		x = m
		if sd > 0 {
			// Rejection: with Mean >= 0 each draw is accepted with
			// probability >= 1/2, so 64 failures never happen in practice.
			x = 0
			for range 64 {
				if y := m + sd*r.NormFloat64(); y >= 0 {
					x = y
					break
				}
			}
		}
	case JitterExponential:
		x = float64(j.Mean) * r.ExpFloat64()
	case JitterPareto:
		u := 1 - r.Float64() // (0, 1]
		x = float64(j.Scale) * (math.Pow(u, -1/j.Shape) - 1)
	case JitterEmpirical:
		x = j.Histogram.sample(r)
	}
	return clampDelay(x, j.Cap)
}

// clampDelay converts a non-negative float number of nanoseconds to a
// Duration in [0, cap] (cap <= 0 means MaxDelay).
func clampDelay(x float64, limit time.Duration) time.Duration {
	if limit <= 0 || limit > MaxDelay {
		limit = MaxDelay
	}
	if !(x > 0) { // also NaN
		return 0
	}
	if x >= float64(limit) {
		return limit
	}
	return time.Duration(x)
}
