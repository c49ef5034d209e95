package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// Readers of the stream encodings. Hellos are read in two steps, header
// first, so that a hello of another version is recognized without knowing
// its length.

// ReadFrame reads one frame from r into buf, which must hold
// MaxFrameLen+2 bytes, and returns its payload (aliasing buf). A length over
// MaxFrameLen is ErrMalformed: the stream cannot be resynchronized after it.
func ReadFrame(r io.Reader, buf []byte) ([]byte, error) {
	if _, err := io.ReadFull(r, buf[:2]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint16(buf))
	if n > MaxFrameLen {
		return nil, fmt.Errorf("%w: frame of %d bytes exceeds %d", ErrMalformed, n, MaxFrameLen)
	}
	if _, err := io.ReadFull(r, buf[2:2+n]); err != nil {
		return nil, err
	}
	return buf[2 : 2+n], nil
}

// ReadClientHello reads and parses a client hello from r. An unknown
// version is an error, with the version it read in the result.
func ReadClientHello(r io.Reader) (ClientHello, error) {
	var b [ClientHelloLen]byte
	if _, err := io.ReadFull(r, b[:HelloPrefixLen]); err != nil {
		return ClientHello{}, err
	}
	if v, err := parseHelloPrefix(b[:HelloPrefixLen], "client hello"); err != nil {
		return ClientHello{Version: v}, err
	}
	if _, err := io.ReadFull(r, b[HelloPrefixLen:]); err != nil {
		return ClientHello{}, err
	}
	return ParseClientHello(b[:])
}

// ReadServerHello reads and parses a server hello from r, as
// ReadClientHello does a client's.
func ReadServerHello(r io.Reader) (ServerHello, error) {
	var b [ServerHelloLen]byte
	if _, err := io.ReadFull(r, b[:HelloPrefixLen]); err != nil {
		return ServerHello{}, err
	}
	if v, err := parseHelloPrefix(b[:HelloPrefixLen], "server hello"); err != nil {
		return ServerHello{Version: v}, err
	}
	if _, err := io.ReadFull(r, b[HelloPrefixLen:]); err != nil {
		return ServerHello{}, err
	}
	return ParseServerHello(b[:])
}

// ReadMessageFrame reads one MessageFrame from r into a buffer of its own,
// so the Message's Payload may be handed on as is. The buffer grows with
// the bytes that actually arrive (see readFull), so a peer that announces
// a 64 KiB frame and sends a few bytes costs a few bytes. It returns io.EOF
// if the stream ends cleanly between frames, io.ErrUnexpectedEOF if it ends
// inside one, and an error wrapping ErrMalformed (or ErrVersion) for a bad
// frame: the stream cannot be resynchronized after it.
func ReadMessageFrame(r io.Reader) (Message, error) {
	return ReadMessageFrameWithin(r, nil, 0)
}

// Deadliner is the part of a QUIC receive stream ReadMessageFrameWithin
// uses to bound a frame's arrival.
type Deadliner interface{ SetReadDeadline(time.Time) error }

// ReadMessageFrameWithin is ReadMessageFrame with a limit on a frame's
// arrival: once the first byte of a frame has arrived, the rest must
// arrive within timeout, or the read fails with an error wrapping
// os.ErrDeadlineExceeded. Between frames the stream may idle for ever (the
// connection's idle timeout bounds that). d nil or timeout 0: no limit.
func ReadMessageFrameWithin(r io.Reader, d Deadliner, timeout time.Duration) (Message, error) {
	var h [messageFrameHeaderLen]byte
	if _, err := io.ReadFull(r, h[:1]); err != nil {
		return Message{}, err
	}
	if d != nil && timeout > 0 {
		d.SetReadDeadline(time.Now().Add(timeout))
		defer d.SetReadDeadline(time.Time{})
	}
	if _, err := io.ReadFull(r, h[1:]); err != nil {
		return Message{}, unexpected(err)
	}
	n, err := messageFrameLen(h[:])
	if err != nil {
		return Message{}, err
	}
	buf, err := readFull(r, n)
	if err != nil {
		return Message{}, unexpected(err)
	}
	return ParseMessage(buf)
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readChunkLen is the size of the chunks readFull reads into.
const readChunkLen = 8 << 10

// readFull reads exactly n bytes from r. Memory follows the bytes that
// arrived, not the length a peer announced: they are read into chunks of
// readChunkLen, each allocated when the previous one is full, and joined
// once all n are in. A stalled frame holds what it sent plus less than a
// chunk, and no garbage. A short stream is io.ErrUnexpectedEOF (io.EOF if
// nothing came).
func readFull(r io.Reader, n int) ([]byte, error) {
	if n <= readChunkLen {
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	chunks := make([][]byte, 0, (n+readChunkLen-1)/readChunkLen)
	for got := 0; got < n; {
		c := make([]byte, min(readChunkLen, n-got))
		k, err := io.ReadFull(r, c)
		got += k
		if err != nil {
			if err == io.EOF && got > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		chunks = append(chunks, c)
	}
	return bytes.Join(chunks, nil), nil
}
