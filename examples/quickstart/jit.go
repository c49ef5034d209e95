package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/netclock/netclock/bench/jitnet"
	"github.com/netclock/netclock/transport"
)

// jitResult is one client's game streams after the warm-up (bench/jitnet):
// an input per predicted tick to the server, a snapshot per server tick
// back, interpolated every client frame.
type jitResult struct {
	profile        string
	inputs         jitnet.InputStats
	frames         int64
	starved        int64
	serverBuf, cli string
}

// collectJIT reads every client's streams; call it before the clients
// close (the server forgets a closed client).
func collectJIT(srv *transport.Server, js *jitnet.Server, peers []*peer) []jitResult {
	ids := map[string]transport.ClientID{}
	for _, ci := range srv.Clients() {
		ids[ci.Remote.String()] = ci.ID
	}
	var rs []jitResult
	for _, p := range peers {
		r := jitResult{profile: p.profile.Name}
		r.inputs, _ = js.Inputs(ids[p.conn.LocalAddr().String()])
		r.frames, r.starved = p.jit.Frames()
		if c := p.client.Load(); c != nil {
			st := c.Provider().Status()
			r.serverBuf, r.cli = st.ServerBuffer.Round(100*time.Microsecond).String(), st.ClientBuffer.Round(100*time.Microsecond).String()
		}
		rs = append(rs, r)
	}
	return rs
}

// printJIT prints one line per client: what a player feels of the buffers.
func printJIT(w io.Writer, rs []jitResult) {
	var b strings.Builder
	fmt.Fprintln(&b, "\nInputs and snapshots after the warm-up (an input per predicted tick, a snapshot per server tick):")
	for _, r := range rs {
		starved := 0.0
		if r.frames > 0 {
			starved = float64(r.starved) / float64(r.frames)
		}
		fmt.Fprintf(&b, "  %-10s inputs on time %6.2f%% (%d late, %d ticks without input), starved frames %5.2f%% of %d; buffers: server %s, client %s\n",
			r.profile, 100*r.inputs.OnTimeRate(), r.inputs.Late, r.inputs.Missing, 100*starved, r.frames, r.serverBuf, r.cli)
	}
	io.WriteString(w, b.String())
}
