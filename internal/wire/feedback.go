package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// A Pong may carry the server's Feedback on the client's stamped messages:
//
//	Pong+Feedback  Pong (30 bytes) total:u32 count:u16 late:u16 p1:i32 p5:i32 p50:i32   50 bytes
//
// p1, p5 and p50 are in microseconds. The version byte is unchanged: a
// pong of PongLen bytes is one without feedback, and a parser of this
// package accepts both lengths. A server sends the longer form only to a
// client that sent stamped messages; a client of an older build (which
// accepted PongLen bytes only) drops such pongs as malformed.

// PongFeedbackLen is the length of a Pong that carries Feedback.
const PongFeedbackLen = PongLen + feedbackLen

const feedbackLen = 20

// Feedback is how early or late a client's stamped messages reached the
// server, over its last few (see provider.Feedback, which it carries).
type Feedback struct {
	// Total counts the client's stamped arrivals, modulo 2^32.
	Total uint32
	// Count is how many arrivals the summary covers (at least 1); Late
	// how many of them came after their tick started (at most Count).
	Count, Late uint16
	// P1, P5 and P50 are the 1st, 5th and 50th percentiles of how long
	// before the start of their tick they arrived (negative: late), in
	// whole microseconds, within ±2^31 µs, in non-decreasing order.
	// AppendPong truncates to microseconds and clamps to the range.
	P1, P5, P50 time.Duration
}

func appendFeedback(b []byte, f Feedback) []byte {
	b = binary.BigEndian.AppendUint32(b, f.Total)
	b = binary.BigEndian.AppendUint16(b, f.Count)
	b = binary.BigEndian.AppendUint16(b, f.Late)
	for _, d := range []time.Duration{f.P1, f.P5, f.P50} {
		us := max(math.MinInt32, min(math.MaxInt32, d/time.Microsecond))
		b = binary.BigEndian.AppendUint32(b, uint32(int32(us)))
	}
	return b
}

func parseFeedback(b []byte) (Feedback, error) {
	us := func(i int) time.Duration {
		return time.Duration(int32(binary.BigEndian.Uint32(b[i:]))) * time.Microsecond
	}
	f := Feedback{
		Total: binary.BigEndian.Uint32(b),
		Count: binary.BigEndian.Uint16(b[4:]),
		Late:  binary.BigEndian.Uint16(b[6:]),
		P1:    us(8), P5: us(12), P50: us(16),
	}
	switch {
	case f.Count == 0 || f.Late > f.Count:
		return Feedback{}, fmt.Errorf("%w: pong feedback of %d arrivals, %d late", ErrMalformed, f.Count, f.Late)
	case f.P1 > f.P5 || f.P5 > f.P50:
		return Feedback{}, fmt.Errorf("%w: pong feedback percentiles %v, %v, %v out of order", ErrMalformed, f.P1, f.P5, f.P50)
	}
	return f, nil
}
