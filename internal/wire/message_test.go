package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/netclock/netclock/nettime"
)

// cmpMessages compares Messages: nettime.Time by ==, payloads by
// bytes.Equal (nil and empty alike, and fast: cmp walks a []byte element
// by element).
var cmpMessages = cmp.Options{
	cmp.Comparer(func(a, b nettime.Time) bool { return a == b }),
	cmp.Comparer(bytes.Equal),
}

func TestMessageRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Message
	}{
		{"unstamped, empty", Message{}},
		{"tick 0", Message{Stamp: nettime.New(60, 0), Payload: []byte("x")}},
		{"mid tick", Message{Stamp: nettime.FromTick(60, 1234, 5*time.Millisecond), Payload: []byte("fire")}},
		{"negative", Message{Stamp: nettime.New(128, -time.Hour), Payload: []byte{0}}},
		{"max range", Message{Stamp: nettime.New(nettime.MaxTickRate, nettime.MaxDuration)}},
		{"max unreliable", Message{Stamp: nettime.New(30, time.Second), Payload: bytes.Repeat([]byte{7}, MaxUnreliablePayload)}},
		{"max reliable", Message{Stamp: nettime.New(30, time.Second), Payload: bytes.Repeat([]byte{9}, MaxReliablePayload)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := AppendMessage(nil, tc.m)
			if len(b) != MessageHeaderLen+len(tc.m.Payload) {
				t.Fatalf("len %d, want %d", len(b), MessageHeaderLen+len(tc.m.Payload))
			}
			got, err := ParseMessage(b)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.m, got, cmpMessages); d != "" {
				t.Errorf("message round trip (-want +got):\n%s", d)
			}

			// Two frames back to back, then garbage: the slice parser
			// and the stream reader split them alike.
			fb := AppendMessageFrame(AppendMessageFrame(nil, tc.m), tc.m)
			fb = append(fb, 0xee)
			m1, rest, err := ParseMessageFrame(fb)
			if err != nil {
				t.Fatal(err)
			}
			m2, rest, err := ParseMessageFrame(rest)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]Message{tc.m, tc.m}, []Message{m1, m2}, cmpMessages); d != "" {
				t.Errorf("frame round trip (-want +got):\n%s", d)
			}
			if !bytes.Equal(rest, []byte{0xee}) {
				t.Errorf("rest % x, want ee", rest)
			}
			r := bytes.NewReader(fb[:len(fb)-1])
			for i := range 2 {
				rm, err := ReadMessageFrame(r)
				if err != nil {
					t.Fatalf("ReadMessageFrame #%d: %v", i, err)
				}
				if d := cmp.Diff(tc.m, rm, cmpMessages); d != "" {
					t.Errorf("ReadMessageFrame #%d (-want +got):\n%s", i, d)
				}
			}
			if _, err := ReadMessageFrame(r); err != io.EOF {
				t.Errorf("ReadMessageFrame at the end = %v, want io.EOF", err)
			}
		})
	}
}

func TestMessageLayout(t *testing.T) {
	m := Message{Stamp: nettime.FromTick(60, 2, 0), Payload: []byte("hi")}
	want := []byte{
		3, 1, // type, version
		1, 0, 0, 0, 60, 0, 0, 0, 0, 0x01, 0xfc, 0xa0, 0x56, // stamp: v1, 60 Hz, 33_333_334 ns
		'h', 'i',
	}
	if d := cmp.Diff(want, AppendMessage(nil, m)); d != "" {
		t.Errorf("layout (-want +got):\n%s", d)
	}
	frame := AppendMessageFrame(nil, m)
	if n := binary.BigEndian.Uint32(frame); n != uint32(len(want)) || !bytes.Equal(frame[4:], want) {
		t.Errorf("frame % x, want length %d then the message", frame, len(want))
	}
}

func TestMessageRejects(t *testing.T) {
	good := AppendMessage(nil, Message{Stamp: nettime.New(60, time.Second), Payload: []byte("ok")})
	with := func(b []byte, i int, v byte) []byte {
		b = bytes.Clone(b)
		b[i] = v
		return b
	}
	frame := func(n uint32, body []byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, n), body...)
	}
	outOfRange := bytes.Clone(good)
	binary.BigEndian.PutUint64(outOfRange[7:], uint64(nettime.MaxDuration)+1)
	huge := append(bytes.Clone(good[:MessageHeaderLen]), make([]byte, MaxReliablePayload+1)...)
	for _, tc := range []struct {
		name   string
		frame  bool
		in     []byte
		want   error
		wantIn string // in the message, if set
	}{
		{name: "empty", in: nil, want: ErrMalformed},
		{name: "one byte", in: good[:1], want: ErrMalformed},
		{name: "ping type", in: with(good, 0, typePing), want: ErrMalformed},
		{name: "version", in: with(good, 1, 2), want: ErrVersion},
		{name: "version, short", in: with(good, 1, 2)[:2], want: ErrVersion},
		{name: "short header", in: good[:MessageHeaderLen-1], want: ErrMalformed},
		{name: "stamp version", in: with(good, 2, 9), want: nettime.ErrMalformed},
		{name: "stamp rate 0", in: with(good, 6, 0), want: nettime.ErrInvalidRate, wantIn: "stamp"},
		{name: "stamp out of range", in: outOfRange, want: nettime.ErrOutOfRange},
		{name: "payload too long", in: huge, want: ErrMalformed},
		{name: "empty", frame: true, in: nil, want: ErrMalformed},
		{name: "short header", frame: true, in: []byte{0, 0, 0}, want: ErrMalformed},
		{name: "length under the message header", frame: true, in: frame(MessageHeaderLen-1, good), want: ErrMalformed},
		{name: "length over the max", frame: true, in: frame(MaxMessageFrameLen+1, nil), want: ErrMalformed},
		{name: "length 2^32-1", frame: true, in: frame(1<<32-1, nil), want: ErrMalformed},
		{name: "truncated", frame: true, in: frame(uint32(len(good)+1), good), want: ErrMalformed},
		{name: "bad message", frame: true, in: frame(uint32(len(good)), with(good, 0, 0)), want: ErrMalformed},
	} {
		kind := "Message"
		if tc.frame {
			kind = "Frame"
		}
		t.Run(kind+"/"+tc.name, func(t *testing.T) {
			var err error
			if tc.frame {
				_, _, err = ParseMessageFrame(tc.in)
			} else {
				_, err = ParseMessage(tc.in)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrVersion) {
				t.Errorf("err %v wraps neither ErrMalformed nor ErrVersion", err)
			}
			if !strings.Contains(err.Error(), tc.wantIn) {
				t.Errorf("err %q does not mention %q", err, tc.wantIn)
			}
		})
	}
}

func TestReadMessageFrameEOF(t *testing.T) {
	b := AppendMessageFrame(nil, Message{Stamp: nettime.New(60, 0), Payload: []byte("abc")})
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"nothing", nil, io.EOF},
		{"inside the length", b[:2], io.ErrUnexpectedEOF},
		{"after the length", b[:4], io.ErrUnexpectedEOF},
		{"inside the body", b[:len(b)-1], io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ReadMessageFrame(bytes.NewReader(tc.in)); err != tc.want {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func FuzzParseMessage(f *testing.F) {
	fuzzCanonical(f, ParseMessage, AppendMessage,
		AppendMessage(nil, Message{Stamp: nettime.FromTick(60, 9, 0), Payload: []byte("payload")}),
		AppendMessage(nil, Message{}), []byte{3, 1}, []byte{3, 2, 0}, nil)
}

func FuzzParseMessageFrame(f *testing.F) {
	f.Add(AppendMessageFrame(nil, Message{Stamp: nettime.New(60, time.Second), Payload: []byte{1, 2, 3}}))
	f.Add(AppendMessageFrame(nil, Message{}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 15})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, rest, err := ParseMessageFrame(b)
		// The stream reader must agree with the slice parser.
		rm, rerr := ReadMessageFrame(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrVersion) {
				t.Fatalf("error %v wraps neither ErrMalformed nor ErrVersion", err)
			}
			if rerr == nil {
				t.Fatalf("ReadMessageFrame accepted what ParseMessageFrame rejected: %v", err)
			}
			return
		}
		if rerr != nil {
			t.Fatalf("ReadMessageFrame: %v; ParseMessageFrame accepted it", rerr)
		}
		if d := cmp.Diff(m, rm, cmpMessages); d != "" {
			t.Fatalf("ReadMessageFrame and ParseMessageFrame differ (-slice +stream):\n%s", d)
		}
		if re := append(AppendMessageFrame(nil, m), rest...); !bytes.Equal(re, b) {
			t.Fatalf("re-encoded % x, input % x", re, b)
		}
	})
}
