// Package metrics exports netclock's statistics to Prometheus: a collector
// for a transport.Server and one for a transport.Client, with the client's
// clock estimate (offset, error bound, drift, round trip, one-way delays,
// jitter) and counts (resets, estimator events, pings, reconnects, bytes).
//
// The collectors read the statistics through functions, once per scrape,
// so they hold no state of their own and never block the game:
//
//	reg.MustRegister(metrics.NewServerCollector(srv.Stats))
//	reg.MustRegister(metrics.NewClientCollector(c.Stats, c.Estimate))
//
// Names follow Prometheus conventions: every metric is prefixed netclock_,
// durations are in seconds, ratios are plain ratios (a drift of 1 ppm is
// 1e-6), counters end in _total. A process with several clients or servers
// registers each through prometheus.WrapRegistererWith with a label that
// tells them apart.
//
// The core packages do not import this one: only programs that want
// Prometheus pay for its dependency.
package metrics

import "github.com/prometheus/client_golang/prometheus"

const namespace = "netclock"

// series is one time series of a collector: how to read its value from a
// snapshot S, and whether the snapshot has one at all.
type series[S any] struct {
	desc   *prometheus.Desc
	kind   prometheus.ValueType
	labels []string // values of desc's variable labels
	value  func(S) (float64, bool)
}

// collector reads a snapshot once per scrape and reports its series.
type collector[S any] struct {
	snapshot func() S
	series   []series[S]
}

func (c *collector[S]) Describe(ch chan<- *prometheus.Desc) {
	var last *prometheus.Desc
	for _, s := range c.series {
		if s.desc != last { // series of one family share their Desc
			ch <- s.desc
			last = s.desc
		}
	}
}

func (c *collector[S]) Collect(ch chan<- prometheus.Metric) {
	snap := c.snapshot()
	for _, s := range c.series {
		if v, ok := s.value(snap); ok {
			ch <- prometheus.MustNewConstMetric(s.desc, s.kind, v, s.labels...)
		}
	}
}

// family builds the series of one metric family.
type family[S any] struct {
	c    *collector[S]
	desc *prometheus.Desc
	kind prometheus.ValueType
}

func (c *collector[S]) family(subsystem, name, help string, kind prometheus.ValueType, label ...string) family[S] {
	return family[S]{c: c, kind: kind,
		desc: prometheus.NewDesc(prometheus.BuildFQName(namespace, subsystem, name), help, label, nil)}
}

// add adds the family's series with the given label values (as many as the
// family has labels).
func (f family[S]) add(value func(S) (float64, bool), labels ...string) family[S] {
	f.c.series = append(f.c.series, series[S]{desc: f.desc, kind: f.kind, labels: labels, value: value})
	return f
}

// always wraps a value that every snapshot has.
func always[S any](v func(S) float64) func(S) (float64, bool) {
	return func(s S) (float64, bool) { return v(s), true }
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
