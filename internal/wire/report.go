package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// A ping may carry the client's sync report: what its estimator and
// provider say now, so that the server can show every client's clock
// (transport's DebugHandler, ClientInfo). Clients attach it to about one
// ping a second, not every ping: the report is 53 bytes, the ping 14.
//
//	Ping+Report  Ping Report                                                67 bytes
//	Report       flags:u8 state:u8 quality:u8 loss:u16 bound:u32 jitter:u32
//	             uplink:u32 downlink:u32 lead:u32 interp:u32 offset:i64
//	             drift:i32 predScale:i32 serverScale:i32 resets:u32       53 bytes
//
// Durations are in microseconds (offset in nanoseconds), saturated to the
// field's range; drift is in thousandths of a ppm, the scales in parts per
// billion away from 1, loss in thousandths. Flags bit 0: synchronized;
// the other bits are zero.
//
// Versioning: the report rides in protocol version 1, as an optional
// tail. A ping is exactly PingLen bytes (no report) or PingReportLen bytes
// (with one); anything else is malformed. So pings without a report, from
// clients that do not send one, stay valid, and a new report layout (a
// longer tail) would be a new length or a new protocol version, never a
// reinterpretation of these bytes. A server that predates the report
// counts a reporting ping as malformed and answers the others: a client
// loses one sample a second against it, and keeps its sync.

// Lengths of the report, in bytes.
const (
	// ReportLen is the length of an encoded Report.
	ReportLen = 53
	// PingReportLen is the length of a Ping that carries a Report.
	PingReportLen = PingLen + ReportLen
)

// MaxState is the largest estimator state a Report may carry: the values
// are those of clocksync.State (init, acquire, locked, held, stalled).
const MaxState = 4

// MaxQuality is the largest connection quality a Report may carry (0
// unknown, 1 poor, 2 fair, 3 good: transport.Quality's values).
const MaxQuality = 3

// MaxLoss is the largest Loss a Report may carry: all pings lost.
const MaxLoss = 1000

const flagSynchronized = 1

// Report is a client's sync quality as it stands when a ping leaves.
type Report struct {
	// Synchronized: the client's shared time is valid now.
	Synchronized bool
	// State is the estimator's state (clocksync.State's value, at most
	// MaxState).
	State uint8
	// Quality is the client's connection quality (at most MaxQuality).
	Quality uint8
	// Loss is the recent round-trip ping loss, in thousandths (at most
	// MaxLoss).
	Loss uint16
	// ErrorBound, Jitter, Uplink and Downlink are the estimate's, at
	// microsecond resolution (0 to about 71 minutes).
	ErrorBound, Jitter, Uplink, Downlink time.Duration
	// Lead is how far predicted time runs ahead of shared time (the
	// uplink plus the provider's server buffer); Interp how far server
	// time runs behind it (the downlink plus the client buffer). At
	// microsecond resolution.
	Lead, Interp time.Duration
	// Offset is the server clock minus the client clock.
	Offset time.Duration
	// DriftPPM is the estimated drift, in ppm, at 0.001 ppm resolution
	// (about ±2147 ppm).
	DriftPPM float64
	// PredictedScale and ServerScale are the provider's time scales (1 is
	// nominal), at one part per billion (1 ± 2.147).
	PredictedScale, ServerScale float64
	// Resets counts the client System's reset events.
	Resets uint32
}

// AppendReport appends the encoding of r to b, saturating each field to
// its range.
func AppendReport(b []byte, r Report) []byte {
	var flags byte
	if r.Synchronized {
		flags |= flagSynchronized
	}
	b = append(b, flags, min(r.State, MaxState), min(r.Quality, MaxQuality))
	b = binary.BigEndian.AppendUint16(b, min(r.Loss, MaxLoss))
	for _, d := range []time.Duration{r.ErrorBound, r.Jitter, r.Uplink, r.Downlink, r.Lead, r.Interp} {
		b = binary.BigEndian.AppendUint32(b, micros(d))
	}
	b = binary.BigEndian.AppendUint64(b, uint64(r.Offset))
	b = binary.BigEndian.AppendUint32(b, uint32(fixed(r.DriftPPM, 1e3)))
	b = binary.BigEndian.AppendUint32(b, uint32(fixed(r.PredictedScale-1, 1e9)))
	b = binary.BigEndian.AppendUint32(b, uint32(fixed(r.ServerScale-1, 1e9)))
	return binary.BigEndian.AppendUint32(b, r.Resets)
}

// ParseReport decodes a Report. Errors wrap ErrMalformed: a length other
// than ReportLen, a reserved flag set, a state, quality or loss out of
// range.
func ParseReport(b []byte) (Report, error) {
	if len(b) != ReportLen {
		return Report{}, fmt.Errorf("%w: report of %d bytes, want %d", ErrMalformed, len(b), ReportLen)
	}
	switch loss := binary.BigEndian.Uint16(b[3:]); {
	case b[0]&^flagSynchronized != 0:
		return Report{}, fmt.Errorf("%w: report flags %#x", ErrMalformed, b[0])
	case b[1] > MaxState:
		return Report{}, fmt.Errorf("%w: report state %d", ErrMalformed, b[1])
	case b[2] > MaxQuality:
		return Report{}, fmt.Errorf("%w: report quality %d", ErrMalformed, b[2])
	case loss > MaxLoss:
		return Report{}, fmt.Errorf("%w: report loss %d", ErrMalformed, loss)
	}
	us := func(i int) time.Duration {
		return time.Duration(binary.BigEndian.Uint32(b[i:])) * time.Microsecond
	}
	i32 := func(i int) float64 { return float64(int32(binary.BigEndian.Uint32(b[i:]))) }
	return Report{
		Synchronized: b[0]&flagSynchronized != 0,
		State:        b[1],
		Quality:      b[2],
		Loss:         binary.BigEndian.Uint16(b[3:]),
		ErrorBound:   us(5), Jitter: us(9), Uplink: us(13), Downlink: us(17), Lead: us(21), Interp: us(25),
		Offset:         time.Duration(binary.BigEndian.Uint64(b[29:])),
		DriftPPM:       i32(37) / 1e3,
		PredictedScale: 1 + i32(41)/1e9,
		ServerScale:    1 + i32(45)/1e9,
		Resets:         binary.BigEndian.Uint32(b[49:]),
	}, nil
}

// micros is d in whole microseconds, saturated to a uint32 (negative: 0).
func micros(d time.Duration) uint32 {
	switch {
	case d <= 0:
		return 0
	case d/time.Microsecond >= math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(d / time.Microsecond)
}

// fixed is v in units of 1/scale, rounded and saturated to an int32 (NaN:
// 0).
func fixed(v, scale float64) int32 {
	x := math.Round(v * scale)
	switch {
	case math.IsNaN(x):
		return 0
	case x >= math.MaxInt32:
		return math.MaxInt32
	case x <= math.MinInt32:
		return math.MinInt32
	}
	return int32(x)
}
