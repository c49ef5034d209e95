package wire

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPongFeedbackRoundTrip(t *testing.T) {
	base := Pong{Seq: 9, ClientSend: 1, ServerReceive: 2, ServerSend: 3}
	tests := []struct {
		name string
		in   Feedback
		want Feedback // after the microsecond truncation and clamping
	}{
		{"one arrival", Feedback{Total: 1, Count: 1, P1: time.Millisecond, P5: time.Millisecond, P50: time.Millisecond},
			Feedback{Total: 1, Count: 1, P1: time.Millisecond, P5: time.Millisecond, P50: time.Millisecond}},
		{"late, sub-microsecond", Feedback{Total: math.MaxUint32, Count: 128, Late: 3, P1: -1500*time.Microsecond - 999, P5: 7, P50: 20 * time.Millisecond},
			Feedback{Total: math.MaxUint32, Count: 128, Late: 3, P1: -1500 * time.Microsecond, P5: 0, P50: 20 * time.Millisecond}},
		{"clamped", Feedback{Count: math.MaxUint16, Late: math.MaxUint16, P1: -time.Hour, P5: 0, P50: time.Hour},
			Feedback{Count: math.MaxUint16, Late: math.MaxUint16, P1: math.MinInt32 * time.Microsecond, P50: math.MaxInt32 * time.Microsecond}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := base
			p.HasFeedback, p.Feedback = true, tc.in
			b := AppendPong(nil, p)
			if len(b) != PongFeedbackLen {
				t.Fatalf("len %d, want %d", len(b), PongFeedbackLen)
			}
			got, err := ParsePong(b)
			if err != nil {
				t.Fatal(err)
			}
			want := base
			want.HasFeedback, want.Feedback = true, tc.want
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		})
	}
	// A pong without feedback is the old 30 bytes, and parses as before.
	if b := AppendPong(nil, base); len(b) != PongLen {
		t.Errorf("pong without feedback: %d bytes, want %d", len(b), PongLen)
	}
}

func TestPongFeedbackRejects(t *testing.T) {
	good := AppendPong(nil, Pong{Seq: 1, HasFeedback: true,
		Feedback: Feedback{Total: 5, Count: 5, Late: 1, P1: -time.Millisecond, P5: 0, P50: time.Millisecond}})
	if _, err := ParsePong(good); err != nil {
		t.Fatal(err)
	}
	with := func(i int, v ...byte) []byte {
		b := bytes.Clone(good)
		copy(b[i:], v)
		return b
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"no arrivals", with(PongLen+4, 0, 0, 0, 0), ErrMalformed},
		{"more late than arrivals", with(PongLen+6, 0, 6), ErrMalformed},
		{"p1 above p5", with(PongLen+8, 0, 0, 0, 9), ErrMalformed},
		{"p5 above p50", with(PongLen+12, 0x7f, 0, 0, 0), ErrMalformed},
		{"between the lengths", good[:PongLen+10], ErrMalformed},
		{"longer", append(bytes.Clone(good), 0), ErrMalformed},
		{"version", with(1, 9), ErrVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParsePong(tc.in); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func FuzzParsePongFeedback(f *testing.F) {
	fuzzCanonical(f, ParsePong, AppendPong,
		AppendPong(nil, Pong{Seq: 1, ClientSend: 2, ServerReceive: 3, ServerSend: 4, HasFeedback: true,
			Feedback: Feedback{Total: 7, Count: 7, Late: 2, P1: -time.Millisecond, P5: -time.Microsecond, P50: time.Second}}),
		AppendPong(nil, Pong{Seq: 1}), nil)
}
