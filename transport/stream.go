package transport

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Readers of the stream encodings. Hellos are read in two steps, header
// first, so that a hello of another version is recognized without knowing
// its length.

// readFrame reads one frame from r into buf, which must hold
// MaxFrameLen+2 bytes, and returns its payload (aliasing buf). A length over
// MaxFrameLen is ErrMalformed: the stream cannot be resynchronized after it.
func readFrame(r io.Reader, buf []byte) ([]byte, error) {
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

func readClientHello(r io.Reader) (ClientHello, error) {
	var b [ClientHelloLen]byte
	if _, err := io.ReadFull(r, b[:helloPrefixLen]); err != nil {
		return ClientHello{}, err
	}
	if v, err := parseHelloPrefix(b[:helloPrefixLen], "client hello"); err != nil {
		return ClientHello{Version: v}, err
	}
	if _, err := io.ReadFull(r, b[helloPrefixLen:]); err != nil {
		return ClientHello{}, err
	}
	return ParseClientHello(b[:])
}

func readServerHello(r io.Reader) (ServerHello, error) {
	var b [ServerHelloLen]byte
	if _, err := io.ReadFull(r, b[:helloPrefixLen]); err != nil {
		return ServerHello{}, err
	}
	if v, err := parseHelloPrefix(b[:helloPrefixLen], "server hello"); err != nil {
		return ServerHello{Version: v}, err
	}
	if _, err := io.ReadFull(r, b[helloPrefixLen:]); err != nil {
		return ServerHello{}, err
	}
	return ParseServerHello(b[:])
}

// readMessageFrame reads one MessageFrame from r. The frame is read into a
// buffer of its own, of exactly its length (at most MaxMessageFrameLen), so
// the Message's Payload may be handed on as is. It returns io.EOF if the
// stream ends cleanly between frames, io.ErrUnexpectedEOF if it ends inside
// one, and an error wrapping ErrMalformed (or ErrVersion) for a bad frame:
// the stream cannot be resynchronized after it.
func readMessageFrame(r io.Reader) (Message, error) {
	var h [messageFrameHeaderLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return Message{}, err
	}
	n, err := messageFrameLen(h[:])
	if err != nil {
		return Message{}, err
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Message{}, err
	}
	return ParseMessage(buf)
}
