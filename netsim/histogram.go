package netsim

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The measured 5G one-way delay histograms (see histograms/5g-midband/README.md
// for their source and licence; the files are redistributed unmodified).
//
//go:embed histograms/5g-midband/*.csv
var histogramFiles embed.FS

// Names of the built-in histograms (JitterSpec.Histogram, "histogram" in
// JSON).
const (
	// Histogram5GUplink is measured 5G standalone mid-band uplink delay
	// (device to controller): a soft floor near 3.7ms, most mass 4-8ms, a
	// tail to 14ms.
	Histogram5GUplink = "5g-midband-uplink"
	// Histogram5GDownlink is the matching downlink (controller to device):
	// floor near 3ms, a second mode, a tail to 17ms.
	Histogram5GDownlink = "5g-midband-downlink"
)

var builtinHistogramFiles = map[string]string{
	Histogram5GUplink:   "histograms/5g-midband/5G-midband-Uplink_PD-Wireless-5G-2a.csv",
	Histogram5GDownlink: "histograms/5g-midband/5G-midband-Downlink_PD-Wireless-5G-2a.csv",
}

// HistogramNames lists the built-in histograms.
func HistogramNames() []string { return []string{Histogram5GUplink, Histogram5GDownlink} }

// HistogramBin is one bin of an empirical delay histogram: values from Lower
// up to the next bin's Lower, with relative weight Count.
type HistogramBin struct {
	// Lower is the bin's lower bound.
	Lower time.Duration
	// Count is the bin's relative count (any non-negative scale).
	Count float64
}

// Histogram is an empirical distribution of one-way delay, sampled by the
// "empirical" jitter kind. The last bin only closes the one before it (its
// Count is ignored), as in the text format. A Histogram must not be modified
// once a link uses it.
type Histogram struct {
	// Name is a built-in histogram's name, or empty for a custom one.
	Name string
	// Bins are the bins in increasing order of Lower; at least two.
	Bins []HistogramBin

	once  sync.Once
	cum   []float64 // cumulative weight at the end of bin i
	floor int       // first bin with a positive count
}

var (
	builtinOnce       sync.Once
	builtinHistograms map[string]*Histogram
)

// BuiltinHistogram returns the built-in histogram of the given name (see
// HistogramNames).
func BuiltinHistogram(name string) (*Histogram, bool) {
	builtinOnce.Do(func() {
		builtinHistograms = map[string]*Histogram{}
		for n, file := range builtinHistogramFiles {
			data, err := histogramFiles.ReadFile(file)
			if err != nil {
				panic("netsim: embedded histogram missing: " + err.Error())
			}
			h, err := ParseHistogram(bytes.NewReader(data))
			if err != nil {
				panic("netsim: embedded histogram " + n + ": " + err.Error())
			}
			h.Name = n
			builtinHistograms[n] = h
		}
	})
	h, ok := builtinHistograms[name]
	return h, ok
}

// ParseHistogram reads a histogram in the text format: one bin per line,
// "lower_bound_ms<TAB>count" (any white space separates), the last line
// closing the last bin. Blank lines and lines starting with # are skipped.
func ParseHistogram(r io.Reader) (*Histogram, error) {
	h := &Histogram{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		f := strings.Fields(s)
		if len(f) != 2 {
			return nil, fmt.Errorf("histogram line %d: want \"lower_bound_ms<TAB>count\", got %q", line, s)
		}
		lo, err1 := strconv.ParseFloat(f[0], 64)
		n, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("histogram line %d: want two numbers, got %q", line, s)
		}
		if math.IsNaN(lo) || math.IsInf(lo, 0) || math.Abs(lo) > float64(MaxDelay/time.Millisecond) {
			return nil, fmt.Errorf("histogram line %d: lower bound %v ms out of range", line, lo)
		}
		h.Bins = append(h.Bins, HistogramBin{Lower: time.Duration(math.Round(lo * 1e6)), Count: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	if err := h.Validate(); err != nil {
		return nil, err
	}
	return h, nil
}

// Validate reports whether h is a usable histogram.
func (h *Histogram) Validate() error {
	var v validator
	h.validate(&v, "histogram")
	return v.err()
}

func (h *Histogram) validate(v *validator, path string) {
	if h.Name != "" && len(h.Bins) == 0 {
		v.addf(path, "unknown histogram %q: want one of %s, or bins", h.Name, strings.Join(HistogramNames(), ", "))
		return
	}
	if h.Name != "" && len(h.Bins) == 1 && h.Bins[0].Lower == -1 {
		v.addf(path, "give either a histogram name or bins, not both")
		return
	}
	if len(h.Bins) < 2 {
		v.addf(path, "needs at least two rows (the last closes the last bin), got %d", len(h.Bins))
		return
	}
	total := 0.0
	for i, b := range h.Bins {
		if i > 0 && b.Lower <= h.Bins[i-1].Lower {
			v.addf(fmt.Sprintf("%s[%d]", path, i), "lower bounds must increase, got %v after %v", b.Lower, h.Bins[i-1].Lower)
			return
		}
		if b.Lower < 0 || b.Lower > MaxDelay {
			v.addf(fmt.Sprintf("%s[%d]", path, i), "lower bound must be in [0, %v], got %v", MaxDelay, b.Lower)
		}
		if math.IsNaN(b.Count) || math.IsInf(b.Count, 0) || b.Count < 0 || b.Count > 1e300 {
			v.addf(fmt.Sprintf("%s[%d]", path, i), "count must be a finite number >= 0, got %v", b.Count)
			return
		}
		if i < len(h.Bins)-1 {
			total += b.Count
		}
	}
	if !(total > 0) {
		v.addf(path, "all counts are zero")
	}
}

func (h *Histogram) init() {
	h.once.Do(func() {
		n := len(h.Bins) - 1
		h.cum = make([]float64, n)
		h.floor = -1
		s := 0.0
		for i := range n {
			s += h.Bins[i].Count
			h.cum[i] = s
			if h.floor < 0 && h.Bins[i].Count > 0 {
				h.floor = i
			}
		}
	})
}

// Floor returns the smallest delay the histogram produces: the lower bound
// of its first bin with a positive count.
func (h *Histogram) Floor() time.Duration {
	h.init()
	return h.Bins[h.floor].Lower
}

// sample draws a delay above the floor: a bin by weight, then uniformly
// within it. It takes exactly two draws from r.
func (h *Histogram) sample(r *rand.Rand) float64 {
	h.init()
	u, w := r.Float64(), r.Float64()
	total := h.cum[len(h.cum)-1]
	i, _ := slices.BinarySearch(h.cum, u*total)
	// BinarySearch finds the first cum >= u*total; skip empty bins.
	i = min(i, len(h.cum)-1)
	for i < len(h.cum)-1 && h.Bins[i].Count == 0 {
		i++
	}
	lo, hi := float64(h.Bins[i].Lower), float64(h.Bins[i+1].Lower)
	return lo + w*(hi-lo) - float64(h.Bins[h.floor].Lower)
}

// String names h: its built-in name or "custom(N bins)".
func (h *Histogram) String() string {
	if h.Name != "" {
		return h.Name
	}
	return fmt.Sprintf("custom(%d bins)", len(h.Bins)-1)
}
