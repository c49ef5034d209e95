// Package jitnet measures netclock's buffers for real: a game's input stream
// and snapshot stream over the QUIC transport. Each client sends one
// stamped input per predicted tick; the server puts them in an
// inputbuf.Buffer and takes each tick's inputs when the tick starts, and
// sends a snapshot stamped with its server time every tick; each client
// interpolates the snapshots (interp.Buffer) at its server time once a
// frame. What it reports per client is what a player feels: the inputs
// that reached the server before their tick (inputs on time) and the
// frames that had no snapshot on both sides of the interpolation time
// (starved frames).
//
// The quickstart and the transport's end-to-end tests use it; so can a
// game, to see what its own network does.
package jitnet

import (
	"errors"
	"sync"

	"github.com/netclock/netclock/inputbuf"
	"github.com/netclock/netclock/interp"
	"github.com/netclock/netclock/ticksys"
	"github.com/netclock/netclock/transport"
)

// snapshotCapacity is how many snapshots a client keeps: over a second at
// 60 Hz, more than the longest interpolation delay of netsim's profiles
// but mobile-2g's.
const snapshotCapacity = 128

// Payloads of the streams: what a game sends does not matter to timing.
var (
	inputPayload    = []byte("input")
	snapshotPayload = []byte("snapshot")
)

// Server is the server half: it takes each client's inputs at the start
// of their tick and sends a snapshot every tick. It is safe for
// concurrent use.
type Server struct {
	srv                *transport.Server
	cancelMsg, cancelT func()

	mu     sync.Mutex
	inputs *inputbuf.Buffer[transport.ClientID, struct{}] // nil before the first tick
	base   map[transport.ClientID]inputbuf.Stats
}

// NewServer starts the streams on srv: it subscribes to srv's messages
// and ticks. Close stops them.
func NewServer(srv *transport.Server) *Server {
	s := &Server{srv: srv, base: map[transport.ClientID]inputbuf.Stats{}}
	s.cancelMsg = srv.OnMessage(s.onMessage)
	s.cancelT = srv.System().OnNetworkTick(s.onTick)
	return s
}

// Close stops the streams and ends both subscriptions.
func (s *Server) Close() {
	s.cancelT()
	s.cancelMsg()
}

func (s *Server) onMessage(id transport.ClientID, m transport.Message) {
	if m.Stamp.IsZero() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inputs != nil {
		// Late, duplicate and too-far-ahead inputs are counted in the
		// client's Stats; the error says nothing more.
		_ = s.inputs.Put(id, m.Stamp.Tick(), struct{}{})
	}
}

// onTick runs at the start of each server tick: the tick's inputs are
// applied (taken), and the snapshot of the tick leaves.
func (s *Server) onTick(ev ticksys.TickEvent) {
	tick := ev.Server.Tick()
	s.mu.Lock()
	if s.inputs == nil {
		s.inputs, _ = inputbuf.New[transport.ClientID, struct{}](inputbuf.Config{Next: tick}) // valid config
	}
	s.inputs.Take(tick)
	s.mu.Unlock()
	// Unreliable, as snapshots are: a lost one is what interpolation is for.
	_ = s.srv.Broadcast(transport.Message{Stamp: ev.Server.ToFixed(), Payload: snapshotPayload})
}

// Mark starts the counts over for every client (after a warm-up).
func (s *Server) Mark() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inputs == nil {
		return
	}
	for _, ci := range s.srv.Clients() {
		if st, ok := s.inputs.Stats(ci.ID); ok {
			s.base[ci.ID] = st
		}
	}
}

// InputStats are one client's inputs as the server applied them, since
// the last Mark.
type InputStats struct {
	// OnTime and Late count the inputs that arrived before their tick
	// was taken, and after.
	OnTime, Late int64
	// Missing counts ticks taken without the client's input (lost or
	// late inputs).
	Missing int64
}

// OnTimeRate is the fraction of arrived inputs that were on time; 0
// without inputs.
func (s InputStats) OnTimeRate() float64 {
	if s.OnTime+s.Late == 0 {
		return 0
	}
	return float64(s.OnTime) / float64(s.OnTime+s.Late)
}

// Inputs returns client id's counts since the last Mark, and false if no
// input of it has arrived.
func (s *Server) Inputs(id transport.ClientID) (InputStats, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inputs == nil {
		return InputStats{}, false
	}
	st, ok := s.inputs.Stats(id)
	if !ok {
		return InputStats{}, false
	}
	b := s.base[id]
	return InputStats{OnTime: st.Early - b.Early, Late: st.Late - b.Late, Missing: st.Missing - b.Missing}, true
}

// Client is the client half: it sends an input every predicted tick and
// interpolates the snapshots at its server time every frame. Give it the
// server's messages (OnMessage, as transport.ClientConfig.OnMessage) and
// its System (Start). It is safe for concurrent use.
type Client struct {
	mu      sync.Mutex
	snaps   *interp.Buffer[struct{}]
	c       *transport.Client
	cancel  func()
	frames  int64
	starved int64
	sent    int64
}

// NewClient returns a Client with no System yet.
func NewClient() *Client {
	b, _ := interp.New[struct{}](interp.Config{Capacity: snapshotCapacity}) // valid config
	return &Client{snaps: b}
}

// OnMessage takes a message from the server: a snapshot.
func (c *Client) OnMessage(m transport.Message) {
	if m.Stamp.IsZero() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snaps.Add(m.Stamp, struct{}{}) != nil {
		return // duplicates and bad stamps are dropped
	}
	if c.c != nil {
		// The provider sizes the interpolation delay from what the
		// frames needed.
		c.c.Provider().ObserveSnapshot(m.Stamp)
	}
}

// ErrStarted is returned by Start on a Client already started.
var ErrStarted = errors.New("jitnet: client already started")

// Start subscribes to sys, the synced System of tc (transport.Client.
// WaitSynced): from its next tick on, every predicted tick sends an input
// stamped with it, and every frame (each tick event that is not a
// catch-up) interpolates at the server time. Call it before the System
// runs (transport.Client.Run), from the goroutine that will run it.
func (c *Client) Start(tc *transport.Client, sys *ticksys.System) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		return ErrStarted
	}
	c.c = tc
	c.cancel = sys.OnNetworkTick(c.onTick)
	return nil
}

// Stop ends the streams.
func (c *Client) Stop() {
	c.mu.Lock()
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (c *Client) onTick(ev ticksys.TickEvent) {
	// Backpressure or a closed connection: the input is lost, and shows
	// as Missing on the server.
	if c.c.Send(transport.Message{Stamp: ev.Predicted, Payload: inputPayload}) == nil {
		c.mu.Lock()
		c.sent++
		c.mu.Unlock()
	}
	if ev.CatchUp() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.snaps.Newest(); !ok {
		return // nothing received yet: not a starved frame, the stream has not begun
	}
	c.frames++
	if c.snaps.At(ev.Server).Mode != interp.ModeInterpolate {
		c.starved++
	}
}

// Mark starts the frame counts over (after a warm-up).
func (c *Client) Mark() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frames, c.starved = 0, 0
}

// Frames returns the frames since the last Mark and how many of them were
// starved.
func (c *Client) Frames() (frames, starved int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.frames, c.starved
}

// StarvedRate is the fraction of frames since the last Mark that were
// starved; 0 without frames.
func (c *Client) StarvedRate() float64 {
	f, s := c.Frames()
	if f == 0 {
		return 0
	}
	return float64(s) / float64(f)
}
