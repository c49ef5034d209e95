package nettime

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// textCases are Times and their exact text forms.
var textCases = []struct {
	t    Time
	text string
}{
	{Time{}, "0+0s@0Hz"},
	{New(7, 0), "0+0s@7Hz"},
	{New(60, time.Second+5*time.Millisecond), "60+5ms@60Hz"},
	{New(60, -1), "-1+16.666665ms@60Hz"},
	{FromTick(60, 1, 16_666_666), "1+16.666666ms@60Hz"},
	{New(1000, 1500), "0+1.5µs@1000Hz"},
	{New(MaxTickRate, 999), "0+999ns@1000000Hz"},
	{New(MaxTickRate, -1), "-1+999ns@1000000Hz"},
	{New(1, 0).Add(-time.Second), "-1+0s@1Hz"},
	{New(1, MaxDuration), "9223372035+854.775807ms@1Hz"},
	{New(1, -MaxDuration), "-9223372036+145.224193ms@1Hz"},
	{New(MaxTickRate, MaxDuration), "9223372035854775+807ns@1000000Hz"},
	{New(30, 0).TicksAgo(-123456789), "123456789+0s@30Hz"},
}

func TestTextRoundTrip(t *testing.T) {
	for _, tc := range textCases {
		if got := tc.t.String(); got != tc.text {
			t.Errorf("%s.String() = %q, want %q", rawString(tc.t), got, tc.text)
		}
		b, err := tc.t.MarshalText()
		if err != nil || string(b) != tc.text {
			t.Errorf("%s.MarshalText() = %q, %v; want %q", rawString(tc.t), b, err, tc.text)
		}
		j, err := tc.t.MarshalJSON()
		if want := `"` + tc.text + `"`; err != nil || string(j) != want {
			t.Errorf("%s.MarshalJSON() = %s, %v; want %s", rawString(tc.t), j, err, want)
		}
		var got Time
		if err := got.UnmarshalText([]byte(tc.text)); err != nil || got != tc.t {
			t.Errorf("UnmarshalText(%q) = %s, %v; want %s", tc.text, rawString(got), err, rawString(tc.t))
		}
		got = New(5, 5)
		if err := got.UnmarshalJSON(j); err != nil || got != tc.t {
			t.Errorf("UnmarshalJSON(%s) = %s, %v; want %s", j, rawString(got), err, rawString(tc.t))
		}
	}
}

// TestUnmarshalTextLenient: forms encoding never writes but a person might.
func TestUnmarshalTextLenient(t *testing.T) {
	tests := []struct {
		text string
		want Time
	}{
		{"60+5.000ms@60Hz", New(60, time.Second+5*time.Millisecond)},
		{"60+05ms@60Hz", New(60, time.Second+5*time.Millisecond)},
		{"60+0.005s@60Hz", New(60, time.Second+5*time.Millisecond)},
		{"60+5000us@60Hz", New(60, time.Second+5*time.Millisecond)},
		{"60+5000000ns@60Hz", New(60, time.Second+5*time.Millisecond)},
		{"0+1.5us@1000Hz", New(1000, 1500)},
		{"0+0.000000001s@1Hz", New(1, 1)},
		{"-0+0s@60Hz", New(60, 0)},
		{"007+0ms@060Hz", FromTick(60, 7, 0)},
		{"0+0ms@0Hz", Time{}},
	}
	for _, tc := range tests {
		var got Time
		if err := got.UnmarshalText([]byte(tc.text)); err != nil || got != tc.want {
			t.Errorf("UnmarshalText(%q) = %s, %v; want %s", tc.text, rawString(got), err, rawString(tc.want))
		}
	}
}

func TestUnmarshalTextErrors(t *testing.T) {
	tests := []struct {
		text string
		want error
	}{
		{"", ErrMalformed},
		{"now", ErrMalformed},
		{"1+5ms@60", ErrMalformed},
		{"1+5ms60Hz", ErrMalformed},
		{"1+5ms@60Hz ", ErrMalformed},
		{" 1+5ms@60Hz", ErrMalformed},
		{"1+5ms@ 60Hz", ErrMalformed},
		{"1+5ms@60hz", ErrMalformed},
		{"+1+5ms@60Hz", ErrMalformed},
		{"1++5ms@60Hz", ErrMalformed},
		{"1+-5ms@60Hz", ErrMalformed},
		{"1.5+5ms@60Hz", ErrMalformed},
		{"1+5@60Hz", ErrMalformed},
		{"1+5m@60Hz", ErrMalformed},
		{"1+5.ms@60Hz", ErrMalformed},
		{"1+.5ms@60Hz", ErrMalformed},
		{"1+5.5.5ms@60Hz", ErrMalformed},
		{"1+5.x0ms@60Hz", ErrMalformed},
		{"1+5.0000001ms@60Hz", ErrMalformed}, // finer than a nanosecond
		{"1+0.5ns@60Hz", ErrMalformed},
		{"0+1s@1Hz", ErrMalformed},           // a second is never within a tick
		{"0+1000ms@1Hz", ErrMalformed},       // nor are 1000ms
		{"1+16.666667ms@60Hz", ErrMalformed}, // tick 1 is 16.666667ms long: that is tick 2
		{"0+1µs@1000000Hz", ErrMalformed},    // a 1 MHz tick is 1µs long
		{"0+99999999999999999999ns@1Hz", ErrMalformed},
		{"99999999999999999999+0s@60Hz", ErrMalformed},
		{"1+5ms@0Hz", ErrInvalidRate},
		{"0+1ns@0Hz", ErrInvalidRate},
		{"0+0s@1000001Hz", ErrInvalidRate},
		{"0+0s@4294967356Hz", ErrInvalidRate}, // 60 + 1<<32: must not wrap to 60
		{"0+0s@99999999999999999999Hz", ErrMalformed},
		{"9223372036+0s@1Hz", ErrOutOfRange},
		{"9223372035+854.775808ms@1Hz", ErrOutOfRange},      // MaxDuration+1ns
		{"-9223372036+145.224192ms@1Hz", ErrOutOfRange},     // -MaxDuration-1ns
		{"-9223372037+0s@1Hz", ErrOutOfRange},               // starts before int64
		{"9223372036854775807+0s@1000000Hz", ErrOutOfRange}, // max int64 tick
		{"-9223372036854775808+0s@1Hz", ErrOutOfRange},      // min int64 tick
		{strings.Repeat("0", 100) + "+0s@60Hz", ErrMalformed},
	}
	for _, tc := range tests {
		before := New(60, 42)
		got := before
		err := got.UnmarshalText([]byte(tc.text))
		if !errors.Is(err, tc.want) {
			t.Errorf("UnmarshalText(%q) error %v, want %v", tc.text, err, tc.want)
		}
		if got != before {
			t.Errorf("UnmarshalText(%q) failed but changed the target to %s", tc.text, rawString(got))
		}
		if err != nil && !strings.HasPrefix(err.Error(), "nettime: ") {
			t.Errorf("UnmarshalText(%q) error %q does not say where it comes from", tc.text, err)
		}
	}
}

func TestUnmarshalJSON(t *testing.T) {
	type frame struct {
		At   Time  `json:"at"`
		Prev *Time `json:"prev"`
	}
	in := frame{At: New(60, time.Second+5*time.Millisecond)}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"at":"60+5ms@60Hz","prev":null}`; string(b) != want {
		t.Errorf("json.Marshal = %s, want %s", b, want)
	}
	var out frame
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out, timeCmp); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}

	// null leaves the value alone, as encoding/json does for its own types.
	keep := frame{At: New(60, 7)}
	if err := json.Unmarshal([]byte(`{"at":null}`), &keep); err != nil || keep.At != New(60, 7) {
		t.Errorf("null: %s, %v; want it unchanged", rawString(keep.At), err)
	}
	// Escaped characters are JSON's business: "\u002b" is "+".
	var esc Time
	if err := json.Unmarshal([]byte(`"60\u002b5ms@60Hz"`), &esc); err != nil || esc != in.At {
		t.Errorf("escaped = %s, %v; want %s", rawString(esc), err, rawString(in.At))
	}

	for _, data := range []string{`5`, `{}`, `[]`, `true`, `"60+5ms@60Hz`, `'60+5ms@60Hz'`, `"nope"`, ``} {
		got := New(60, 42)
		err := got.UnmarshalJSON([]byte(data))
		if !errors.Is(err, ErrMalformed) || got != New(60, 42) {
			t.Errorf("UnmarshalJSON(%s) = %s, %v; want ErrMalformed and no change", data, rawString(got), err)
		}
	}
}

// randTime returns a Time spread over the whole range: any rate, edge rates
// and durations near 0, tick boundaries and ±MaxDuration.
func randTime(r *rand.Rand) Time {
	var rate uint32
	switch r.IntN(4) {
	case 0:
		rate = []uint32{1, 2, 3, 7, 30, 60, 64, 128, 999_999, MaxTickRate}[r.IntN(10)]
	default:
		rate = r.Uint32N(MaxTickRate) + 1
	}
	var d int64
	switch r.IntN(4) {
	case 0:
		d = r.Int64N(2e9) - 1e9
	case 1:
		d = int64(MaxDuration) - r.Int64N(2e9)
	case 2:
		d = -int64(MaxDuration) + r.Int64N(2e9)
	default:
		d = int64(r.Uint64())
	}
	t := New(rate, time.Duration(d))
	if r.IntN(4) == 0 { // a tick boundary, or just before one
		t = FromTick(rate, t.Tick(), -time.Duration(r.IntN(2)))
	}
	return t
}

// TestTextProperty: for every Time, the text and JSON forms decode to that
// Time and nothing else, and say what Tick, TickOffset and TickRate say.
func TestTextProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 1))
	for range 20_000 {
		tm := randTime(r)
		text := tm.String()
		want := strings.Join([]string{
			big64(tm.Tick()), "+", tm.TickOffset().String(), "@", big64(int64(tm.TickRate())), "Hz"}, "")
		if text != want {
			t.Fatalf("%s.String() = %q, want %q", rawString(tm), text, want)
		}
		var got Time
		if err := got.UnmarshalText([]byte(text)); err != nil || got != tm {
			t.Fatalf("UnmarshalText(%q) = %s, %v; want %s", text, rawString(got), err, rawString(tm))
		}
		b, err := json.Marshal(tm)
		if err != nil {
			t.Fatal(err)
		}
		got = Time{}
		if err := json.Unmarshal(b, &got); err != nil || got != tm {
			t.Fatalf("json.Unmarshal(%s) = %s, %v; want %s", b, rawString(got), err, rawString(tm))
		}
		// The next nanosecond has another text form.
		if next := tm.Add(1); next != tm && next.String() == text {
			t.Fatalf("%s and %s both print %q", rawString(tm), rawString(next), text)
		}
	}
}

func big64(x int64) string { return bi(x).String() }

func TestSlog(t *testing.T) {
	tm := New(60, time.Second+5*time.Millisecond)
	if v := slog.AnyValue(tm).Resolve(); v.Kind() != slog.KindString || v.String() != "60+5ms@60Hz" {
		t.Errorf("slog value of %v: kind %v, %q", tm, v.Kind(), v.String())
	}

	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	log.Info("tick", "now", tm, slog.Group("peer", "server", New(60, -1)), "unset", Time{})
	want := `{"level":"INFO","msg":"tick","now":"60+5ms@60Hz","peer":{"server":"-1+16.666665ms@60Hz"},"unset":"0+0s@0Hz"}` + "\n"
	if buf.String() != want {
		t.Errorf("JSON handler wrote\n%s\nwant\n%s", buf.String(), want)
	}
	// What the JSON handler wrote reads back.
	var rec struct{ Now Time }
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil || rec.Now != tm {
		t.Errorf("reading the log line back: %s, %v", rawString(rec.Now), err)
	}

	buf.Reset()
	text := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	text.Info("tick", "now", tm)
	if want := "level=INFO msg=tick now=60+5ms@60Hz\n"; buf.String() != want {
		t.Errorf("text handler wrote %q, want %q", buf.String(), want)
	}
}

// validTime reports whether tm is a Time the API could have made.
func validTime(tm Time) bool {
	if tm.rate == 0 {
		return tm.d == 0
	}
	return tm.rate <= MaxTickRate && tm.d <= int64(MaxDuration) && tm.d >= -int64(MaxDuration)
}

func isSentinel(err error) bool {
	return errors.Is(err, ErrMalformed) || errors.Is(err, ErrInvalidRate) || errors.Is(err, ErrOutOfRange)
}

func FuzzUnmarshalText(f *testing.F) {
	for _, tc := range textCases {
		f.Add(tc.text)
	}
	for _, s := range []string{"", "60+5.000ms@60Hz", "0+1.5us@1000Hz", "1+16.666667ms@60Hz",
		"9223372036+0s@1Hz", "0+0s@4294967356Hz", "-0+0s@0Hz", "1+0.5ns@60Hz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		before := New(60, 42)
		tm := before
		if err := tm.UnmarshalText([]byte(s)); err != nil {
			if !isSentinel(err) {
				t.Fatalf("UnmarshalText(%q): error %v wraps no sentinel", s, err)
			}
			if tm != before {
				t.Fatalf("UnmarshalText(%q) failed but changed the target to %s", s, rawString(tm))
			}
			return
		}
		if !validTime(tm) {
			t.Fatalf("UnmarshalText(%q) accepted %s", s, rawString(tm))
		}
		text, err := tm.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Time
		if err := back.UnmarshalText(text); err != nil || back != tm {
			t.Fatalf("UnmarshalText(%q) = %s, re-encoded as %q, decodes to %s, %v",
				s, rawString(tm), text, rawString(back), err)
		}
		if len(text) > maxTextLen {
			t.Fatalf("%q is longer than parsing accepts", text)
		}
	})
}

func FuzzUnmarshalJSON(f *testing.F) {
	for _, tc := range textCases {
		f.Add([]byte(`"` + tc.text + `"`))
	}
	for _, s := range []string{`null`, `"60\u002b5ms@60Hz"`, `5`, `"`, `""`, `"\ud800"`, `{"a":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		before := New(60, 42)
		tm := before
		if err := tm.UnmarshalJSON(data); err != nil {
			if !isSentinel(err) {
				t.Fatalf("UnmarshalJSON(%q): error %v wraps no sentinel", data, err)
			}
			if tm != before {
				t.Fatalf("UnmarshalJSON(%q) failed but changed the target to %s", data, rawString(tm))
			}
			return
		}
		if !validTime(tm) {
			t.Fatalf("UnmarshalJSON(%q) accepted %s", data, rawString(tm))
		}
		b, err := tm.MarshalJSON()
		if err != nil || !json.Valid(b) {
			t.Fatalf("MarshalJSON of %s = %q, %v", rawString(tm), b, err)
		}
		var back Time
		if err := back.UnmarshalJSON(b); err != nil || back != tm {
			t.Fatalf("UnmarshalJSON(%q) = %s, re-encoded as %s, decodes to %s, %v",
				data, rawString(tm), b, rawString(back), err)
		}
	})
}
