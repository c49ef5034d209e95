package wire

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWireRoundTrip(t *testing.T) {
	t.Run("ClientHello", func(t *testing.T) {
		for _, h := range []ClientHello{
			{Version: ProtocolVersion, TickRate: 0},
			{Version: ProtocolVersion, TickRate: 60},
			{Version: ProtocolVersion, TickRate: math.MaxUint32},
		} {
			b := AppendClientHello(nil, h)
			if len(b) != ClientHelloLen {
				t.Fatalf("len %d, want %d", len(b), ClientHelloLen)
			}
			got, err := ParseClientHello(b)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(h, got); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		}
	})
	t.Run("ServerHello", func(t *testing.T) {
		for _, h := range []ServerHello{
			{Version: ProtocolVersion, Status: StatusOK, TickRate: 60, Epoch: 1, ServerTime: 0},
			{Version: ProtocolVersion, Status: StatusTickRateMismatch, TickRate: 128, Epoch: math.MaxUint64,
				ServerTime: math.MaxInt64},
			{Version: ProtocolVersion, Status: StatusServerFull, TickRate: 1, Epoch: 42, ServerTime: math.MinInt64},
			{Version: ProtocolVersion, Status: StatusVersionMismatch, TickRate: 30, ServerTime: -time.Second},
		} {
			b := AppendServerHello(nil, h)
			if len(b) != ServerHelloLen {
				t.Fatalf("len %d, want %d", len(b), ServerHelloLen)
			}
			got, err := ParseServerHello(b)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(h, got); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		}
	})
	t.Run("Ping", func(t *testing.T) {
		for _, p := range []Ping{
			{}, {Seq: 1, ClientSend: time.Second}, {Seq: math.MaxUint32, ClientSend: math.MinInt64},
		} {
			b := AppendPing(nil, p)
			if len(b) != PingLen {
				t.Fatalf("len %d, want %d", len(b), PingLen)
			}
			got, err := ParsePing(b)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(p, got); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		}
	})
	t.Run("Pong", func(t *testing.T) {
		for _, p := range []Pong{
			{}, {Seq: 7, ClientSend: 1, ServerReceive: 2, ServerSend: 3},
			{Seq: math.MaxUint32, ClientSend: math.MaxInt64, ServerReceive: math.MinInt64, ServerSend: -1},
		} {
			b := AppendPong(nil, p)
			if len(b) != PongLen {
				t.Fatalf("len %d, want %d", len(b), PongLen)
			}
			got, err := ParsePong(b)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(p, got); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		}
	})
	t.Run("Frame", func(t *testing.T) {
		var b []byte
		payloads := [][]byte{{}, AppendPing(nil, Ping{Seq: 3}), bytes.Repeat([]byte{0xab}, MaxFrameLen)}
		for _, p := range payloads {
			b = AppendFrame(b, p)
		}
		for _, want := range payloads {
			var got []byte
			var err error
			got, b, err = ParseFrame(b)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("payload % x, want % x", got, want)
			}
			// ReadFrame decodes the same bytes from a stream.
			buf := make([]byte, MaxFrameLen+2)
			got, err = ReadFrame(bytes.NewReader(AppendFrame(nil, want)), buf)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("ReadFrame = % x, %v; want % x", got, err, want)
			}
		}
		if len(b) != 0 {
			t.Errorf("%d bytes left over", len(b))
		}
	})
}

// TestWireLayout pins the encodings byte by byte: they are the protocol.
func TestWireLayout(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []byte
		want []byte
	}{
		{"ClientHello", AppendClientHello(nil, ClientHello{TickRate: 60}),
			[]byte{'N', 'C', 'L', 'K', 0, 1, 0, 0, 0, 60}},
		{"ServerHello", AppendServerHello(nil, ServerHello{Status: StatusTickRateMismatch, TickRate: 60,
			Epoch: 0x0102030405060708, ServerTime: 0x1112131415161718}),
			[]byte{'N', 'C', 'L', 'K', 0, 1, 2, 0, 0, 0, 60,
				1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18}},
		{"Ping", AppendPing(nil, Ping{Seq: 0x01020304, ClientSend: -1}),
			[]byte{1, 1, 1, 2, 3, 4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"Pong", AppendPong(nil, Pong{Seq: 5, ClientSend: 1, ServerReceive: 2, ServerSend: 3}),
			[]byte{2, 1, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3}},
		{"Frame", AppendFrame(nil, []byte{9, 8}), []byte{0, 2, 9, 8}},
	} {
		if d := cmp.Diff(tc.want, tc.got); d != "" {
			t.Errorf("%s encoding (-want +got):\n%s", tc.name, d)
		}
	}
}

func TestWireRejects(t *testing.T) {
	ch := AppendClientHello(nil, ClientHello{TickRate: 60})
	sh := AppendServerHello(nil, ServerHello{TickRate: 60, Epoch: 1})
	ping := AppendPing(nil, Ping{Seq: 1, ClientSend: 2})
	pong := AppendPong(nil, Pong{Seq: 1, ClientSend: 2, ServerReceive: 3, ServerSend: 4})
	with := func(b []byte, i int, v byte) []byte {
		b = bytes.Clone(b)
		b[i] = v
		return b
	}
	parsers := map[string]func([]byte) error{
		"ClientHello": func(b []byte) error { _, err := ParseClientHello(b); return err },
		"ServerHello": func(b []byte) error { _, err := ParseServerHello(b); return err },
		"Ping":        func(b []byte) error { _, err := ParsePing(b); return err },
		"Pong":        func(b []byte) error { _, err := ParsePong(b); return err },
		"Frame":       func(b []byte) error { _, _, err := ParseFrame(b); return err },
	}
	for _, tc := range []struct {
		name, parser string
		in           []byte
		want         error
	}{
		{"empty", "ClientHello", nil, ErrMalformed},
		{"short", "ClientHello", ch[:9], ErrMalformed},
		{"long", "ClientHello", append(bytes.Clone(ch), 0), ErrMalformed},
		{"magic", "ClientHello", with(ch, 0, 'X'), ErrMalformed},
		{"version", "ClientHello", with(ch, 5, 2), ErrVersion},
		{"version short", "ClientHello", with(ch, 5, 2)[:6], ErrVersion}, // another version's layout may differ
		{"version 0", "ClientHello", with(ch, 5, 0), ErrVersion},
		{"server hello as client hello", "ClientHello", sh, ErrMalformed},
		{"empty", "ServerHello", nil, ErrMalformed},
		{"short", "ServerHello", sh[:26], ErrMalformed},
		{"long", "ServerHello", append(bytes.Clone(sh), 0), ErrMalformed},
		{"magic", "ServerHello", with(sh, 3, 'k'), ErrMalformed},
		{"version", "ServerHello", with(sh, 4, 1), ErrVersion},
		{"status", "ServerHello", with(sh, 6, 4), ErrMalformed},
		{"empty", "Ping", nil, ErrMalformed},
		{"one byte", "Ping", ping[:1], ErrMalformed},
		{"short", "Ping", ping[:13], ErrMalformed},
		{"long", "Ping", append(bytes.Clone(ping), 0), ErrMalformed},
		{"type", "Ping", with(ping, 0, 2), ErrMalformed},
		{"pong as ping", "Ping", pong, ErrMalformed},
		{"version", "Ping", with(ping, 1, 2), ErrVersion},
		{"empty", "Pong", nil, ErrMalformed},
		{"short", "Pong", pong[:29], ErrMalformed},
		{"long", "Pong", append(bytes.Clone(pong), 0), ErrMalformed},
		{"type", "Pong", with(pong, 0, 0), ErrMalformed},
		{"ping as pong", "Pong", ping, ErrMalformed},
		{"version", "Pong", with(pong, 1, 0), ErrVersion},
		{"empty", "Frame", nil, ErrMalformed},
		{"header only", "Frame", []byte{0}, ErrMalformed},
		{"truncated", "Frame", []byte{0, 3, 1, 2}, ErrMalformed},
		{"too long", "Frame", append([]byte{0x04, 0x01}, make([]byte, MaxFrameLen+1)...), ErrMalformed},
	} {
		t.Run(tc.parser+"/"+tc.name, func(t *testing.T) {
			err := parsers[tc.parser](tc.in)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestReadHello(t *testing.T) {
	// A hello of another version is recognized from its header alone,
	// whatever its length.
	b := AppendClientHello(nil, ClientHello{Version: 9})[:HelloPrefixLen]
	h, err := ReadClientHello(bytes.NewReader(b))
	if !errors.Is(err, ErrVersion) || h.Version != 9 {
		t.Errorf("ReadClientHello(v9 header) = %+v, %v; want version 9, ErrVersion", h, err)
	}
	sb := AppendServerHello(nil, ServerHello{Version: 3})[:HelloPrefixLen]
	sh, err := ReadServerHello(bytes.NewReader(sb))
	if !errors.Is(err, ErrVersion) || sh.Version != 3 {
		t.Errorf("ReadServerHello(v3 header) = %+v, %v; want version 3, ErrVersion", sh, err)
	}
	want := ClientHello{Version: ProtocolVersion, TickRate: 128}
	if h, err := ReadClientHello(bytes.NewReader(AppendClientHello(nil, want))); err != nil || h != want {
		t.Errorf("ReadClientHello = %+v, %v; want %+v", h, err, want)
	}
}

func TestDatagramsAreSmall(t *testing.T) {
	// QUIC guarantees 1200-byte packets; a datagram frame must fit in one
	// with room for headers. Ours are far below.
	if PingReportLen+2 > 100 || PongLen+2 > 100 {
		t.Fatalf("ping %d, pong %d bytes", PingLen, PongLen)
	}
}

// fuzzCanonical checks a parser never panics and that whatever it accepts
// re-encodes to exactly the input.
func fuzzCanonical[T any](f *testing.F, parse func([]byte) (T, error), app func([]byte, T) []byte, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parse(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrVersion) {
				t.Fatalf("error %v wraps neither ErrMalformed nor ErrVersion", err)
			}
			return
		}
		if re := app(nil, v); !bytes.Equal(re, b) {
			t.Fatalf("re-encoded % x, input % x", re, b)
		}
	})
}

func FuzzParseClientHello(f *testing.F) {
	fuzzCanonical(f, ParseClientHello, AppendClientHello,
		AppendClientHello(nil, ClientHello{TickRate: 60}), []byte("NCLK\x00\x02"), nil)
}

func FuzzParseServerHello(f *testing.F) {
	fuzzCanonical(f, ParseServerHello, AppendServerHello,
		AppendServerHello(nil, ServerHello{Status: StatusServerFull, TickRate: 60, Epoch: 5, ServerTime: 7}), nil)
}

func FuzzParsePing(f *testing.F) {
	fuzzCanonical(f, ParsePing, AppendPing, AppendPing(nil, Ping{Seq: 1, ClientSend: 2}), []byte{1, 2}, nil,
		AppendPing(nil, Ping{Seq: 3, ClientSend: 4, Report: &fullReport}))
}

func FuzzParsePong(f *testing.F) {
	fuzzCanonical(f, ParsePong, AppendPong,
		AppendPong(nil, Pong{Seq: 1, ClientSend: 2, ServerReceive: 3, ServerSend: 4}), []byte{2}, nil)
}

func FuzzParseFrame(f *testing.F) {
	f.Add(AppendFrame(nil, []byte{1, 2, 3}))
	f.Add([]byte{0xff, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		payload, rest, err := ParseFrame(b)
		// A stream reader must agree with the slice parser.
		buf := make([]byte, MaxFrameLen+2)
		rp, rerr := ReadFrame(bytes.NewReader(b), buf)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			if rerr == nil {
				t.Fatalf("ReadFrame accepted what ParseFrame rejected: %v", err)
			}
			return
		}
		if rerr != nil || !bytes.Equal(rp, payload) {
			t.Fatalf("ReadFrame = % x, %v; ParseFrame % x", rp, rerr, payload)
		}
		if re := append(AppendFrame(nil, payload), rest...); !bytes.Equal(re, b) {
			t.Fatalf("re-encoded % x, input % x", re, b)
		}
	})
}
