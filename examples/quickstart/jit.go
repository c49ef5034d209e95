package main

import (
	"fmt"
	"io"
	"time"

	"github.com/netclock/netclock/bench/jitnet"
	"github.com/netclock/netclock/transport"
)

// streamSummary is one client's game streams after the warm-up
// (bench/jitnet): an input per predicted tick to the server, a snapshot per
// server tick back, interpolated every client frame.
type streamSummary struct {
	// InputsOnTimePct is the share of the client's arrived inputs that
	// reached the server before their tick began; InputsLate counts the
	// others, TicksWithoutInput the ticks taken without its input (lost
	// or late).
	InputsOnTimePct   float64 `json:"inputs_on_time_pct"`
	InputsLate        int64   `json:"inputs_late"`
	TicksWithoutInput int64   `json:"ticks_without_input"`
	// Frames counts the client's frames since the first snapshot;
	// StarvedPct is the share of them with no snapshot on both sides of
	// its server time.
	Frames     int64   `json:"frames"`
	StarvedPct float64 `json:"starved_pct"`
	// ServerBufferMS and ClientBufferMS are the buffers in use at the end
	// (provider.SteeredStatus).
	ServerBufferMS float64 `json:"server_buffer_ms"`
	ClientBufferMS float64 `json:"client_buffer_ms"`
}

// collectStreams reads every client's streams, nil for a client never
// dialed; call it before the clients close (the server forgets a closed
// client).
func collectStreams(srv *transport.Server, js *jitnet.Server, peers []*peer) []*streamSummary {
	ids := map[string]transport.ClientID{}
	for _, ci := range srv.Clients() {
		ids[ci.Remote.String()] = ci.ID
	}
	out := make([]*streamSummary, len(peers))
	for i, p := range peers {
		c := p.client.Load()
		if c == nil {
			continue
		}
		in, _ := js.Inputs(ids[p.conn.LocalAddr().String()])
		frames, starved := p.jit.Frames()
		st := c.Provider().Status()
		s := &streamSummary{InputsOnTimePct: 100 * in.OnTimeRate(), InputsLate: in.Late,
			TicksWithoutInput: in.Missing, Frames: frames,
			ServerBufferMS: ms(st.ServerBuffer), ClientBufferMS: ms(st.ClientBuffer)}
		if frames > 0 {
			s.StarvedPct = 100 * float64(starved) / float64(frames)
		}
		out[i] = s
	}
	return out
}

// printStreams prints a line per client with streams: what a player feels
// of the buffers.
func printStreams(w io.Writer, cs []clientSummary) {
	width, have := 10, false
	for _, c := range cs {
		if c.Streams != nil {
			width, have = max(width, len(c.Profile)), true
		}
	}
	if !have {
		return
	}
	fmt.Fprintln(w, "\nInputs and snapshots after the warm-up (an input per predicted tick, a snapshot per server tick):")
	for _, c := range cs {
		if s := c.Streams; s != nil {
			fmt.Fprintf(w, "  %-*s inputs on time %6.2f%% (%d late, %d ticks without input), starved frames %5.2f%% of %d; buffers: server %v, client %v\n",
				width, c.Profile, s.InputsOnTimePct, s.InputsLate, s.TicksWithoutInput, s.StarvedPct, s.Frames,
				fromMS(s.ServerBufferMS), fromMS(s.ClientBufferMS))
		}
	}
}

// fromMS is a duration of ms milliseconds, to 0.1 ms.
func fromMS(ms float64) time.Duration {
	return time.Duration(ms * float64(time.Millisecond)).Round(100 * time.Microsecond)
}
