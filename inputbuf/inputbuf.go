// Package inputbuf holds Buffer, the server's tick-indexed input buffer:
// clients send inputs stamped with the predicted tick they are for, the
// buffer holds them until the server simulates that tick, and Take hands
// the server each client's input for the tick. It counts, per client, the
// inputs that came early (in time), late (after their tick was taken),
// twice, or too far ahead, and how early each one came: what a client needs
// to hear to size its lead.
//
// Memory is bounded whatever a client sends: each client holds at most
// MaxAhead+1 inputs, the ticks from the next one to be taken to MaxAhead
// ticks after it, and anything else is rejected with an error. The number
// of clients is the server's to bound (its admission): the buffer keeps one
// entry per client ID it is given, until Remove.
package inputbuf

import (
	"errors"
	"fmt"
)

// DefaultMaxAhead is Config.MaxAhead's default: 64 ticks, about 1s at 60 Hz
// (netfox keeps 64 ticks of input history; Netcode for Entities predicts at
// most 500ms ahead).
const DefaultMaxAhead = 64

// Errors of Put; each is wrapped with the client, tick and reason.
var (
	// ErrLate: the input's tick was already taken; it is dropped.
	ErrLate = errors.New("inputbuf: input arrived after its tick")
	// ErrDuplicate: the client already has an input for that tick; the
	// first one is kept.
	ErrDuplicate = errors.New("inputbuf: duplicate input")
	// ErrTooFarAhead: the tick is more than MaxAhead ticks after the next
	// tick to be taken; it is dropped (a clock far off, or a hostile
	// client).
	ErrTooFarAhead = errors.New("inputbuf: input too far ahead")
	// ErrInvalidConfig is wrapped by every configuration error.
	ErrInvalidConfig = errors.New("inputbuf: invalid config")
)

// Config configures a Buffer. The zero value gives the defaults.
type Config struct {
	// MaxAhead is how many ticks after the next tick to be taken an input
	// may be for. Default: DefaultMaxAhead. At most 1<<16.
	MaxAhead int
	// Next is the first tick Take will be called for; inputs for earlier
	// ticks are late. Default: 0.
	Next int64
}

// Stats are the running counts of one client.
type Stats struct {
	// Early counts inputs accepted before their tick was taken.
	Early int64
	// Late counts inputs that arrived after their tick was taken.
	Late int64
	// Duplicate counts inputs for a tick that already had one.
	Duplicate int64
	// TooFarAhead counts inputs rejected with ErrTooFarAhead.
	TooFarAhead int64
	// Missing counts ticks taken while the client was known without an
	// input for them: the server simulated that tick without it.
	Missing int64
	// Dropped counts accepted inputs never taken, because Take skipped
	// past their tick.
	Dropped int64
	// LastLead is how many ticks early the client's latest input came
	// (accepted or late, not rejected as too far ahead): its tick minus
	// the next tick to be taken when it arrived. 0 means just in time
	// (its tick was the next one); negative means late by that many
	// ticks. The server can return it to the client, as Netcode for
	// Entities returns its command age, to steer the client's lead.
	LastLead int64
}

// Input is one client's input for a tick, as Take returns it.
type Input[C comparable, I any] struct {
	Client C     // who sent it
	Tick   int64 // the tick it is for
	Input  I     // what was sent
}

type slot[I any] struct {
	tick  int64
	full  bool
	input I
}

type client[C comparable, I any] struct {
	id    C
	ring  []slot[I] // indexed by tick mod len(ring)
	stats Stats
}

// Buffer is a tick-indexed input buffer for any client ID type C and input
// type I. It is not safe for concurrent use: a server guards it with its
// own lock, or feeds it from its tick goroutine.
type Buffer[C comparable, I any] struct {
	maxAhead int64
	next     int64 // the next tick Take will hand out
	clients  []*client[C, I]
	byID     map[C]*client[C, I]
}

// New returns an empty Buffer, or an error wrapping ErrInvalidConfig.
func New[C comparable, I any](cfg Config) (*Buffer[C, I], error) {
	switch {
	case cfg.MaxAhead == 0:
		cfg.MaxAhead = DefaultMaxAhead
	case cfg.MaxAhead < 0 || cfg.MaxAhead > 1<<16:
		return nil, fmt.Errorf("%w: MaxAhead %d not in [1, 65536]", ErrInvalidConfig, cfg.MaxAhead)
	}
	return &Buffer[C, I]{maxAhead: int64(cfg.MaxAhead), next: cfg.Next, byID: make(map[C]*client[C, I])}, nil
}

// Next returns the next tick Take will hand out.
func (b *Buffer[C, I]) Next() int64 { return b.next }

// Put stores a client's input for a tick. The client becomes known to the
// buffer (Take reports it missing from then on) until Remove. It returns
// nil, or an error wrapping ErrLate, ErrDuplicate or ErrTooFarAhead, and
// counts the input in the client's Stats either way. It never panics on
// any tick.
func (b *Buffer[C, I]) Put(id C, tick int64, in I) error {
	c := b.byID[id]
	if c == nil {
		c = &client[C, I]{id: id}
		b.byID[id] = c
		b.clients = append(b.clients, c)
	}
	st := &c.stats
	switch {
	case tick < b.next:
		st.Late++
		// In uint64 (and saturated): a tick near MinInt64 overflows int64.
		st.LastLead = -int64(min(uint64(b.next)-uint64(tick), 1<<62))
		return fmt.Errorf("%w: client %v, tick %d, next tick %d", ErrLate, id, tick, b.next)
	case uint64(tick)-uint64(b.next) > uint64(b.maxAhead):
		st.TooFarAhead++
		return fmt.Errorf("%w: client %v, tick %d is %d ticks after the next tick %d (max %d)",
			ErrTooFarAhead, id, tick, uint64(tick)-uint64(b.next), b.next, b.maxAhead)
	}
	if c.ring == nil {
		c.ring = make([]slot[I], b.maxAhead+1)
	}
	s := &c.ring[mod(tick, len(c.ring))]
	if s.full && s.tick == tick {
		st.Duplicate++
		return fmt.Errorf("%w: client %v, tick %d", ErrDuplicate, id, tick)
	}
	// The slot holds ticks next..next+maxAhead; anything older in it was
	// taken or dropped already.
	*s = slot[I]{tick: tick, full: true, input: in}
	st.Early++
	st.LastLead = tick - b.next
	return nil
}

// Take returns the inputs for tick, one per client that has one, in the
// order clients first sent an input, and makes tick+1 the next tick. It
// counts a Missing input for every other known client. Ticks skipped
// between the previous Take and this one have their inputs dropped (and
// counted). Taking a tick before Next returns nil and changes nothing.
// The returned slice is the caller's.
func (b *Buffer[C, I]) Take(tick int64) []Input[C, I] {
	if tick < b.next {
		return nil
	}
	var out []Input[C, I]
	for _, c := range b.clients {
		if c.ring == nil {
			c.stats.Missing++
			continue
		}
		// Inputs of skipped ticks: at most one ring's worth to scan.
		if skipped := uint64(tick) - uint64(b.next); skipped > 0 {
			for i := range min(skipped, uint64(len(c.ring))) {
				t := b.next + int64(i)
				if s := &c.ring[mod(t, len(c.ring))]; s.full && s.tick == t {
					c.stats.Dropped++
					*s = slot[I]{}
				}
			}
		}
		s := &c.ring[mod(tick, len(c.ring))]
		if s.full && s.tick == tick {
			out = append(out, Input[C, I]{Client: c.id, Tick: tick, Input: s.input})
			*s = slot[I]{}
		} else {
			c.stats.Missing++
		}
	}
	b.next = tick + 1
	return out
}

// Stats returns a client's counts, and false if the client is unknown.
func (b *Buffer[C, I]) Stats(id C) (Stats, bool) {
	c := b.byID[id]
	if c == nil {
		return Stats{}, false
	}
	return c.stats, true
}

// Pending returns how many inputs the client has waiting (at most
// MaxAhead+1).
func (b *Buffer[C, I]) Pending(id C) int {
	c := b.byID[id]
	if c == nil {
		return 0
	}
	n := 0
	for _, s := range c.ring {
		if s.full {
			n++
		}
	}
	return n
}

// Remove forgets a client (after it disconnected), its inputs and counts.
func (b *Buffer[C, I]) Remove(id C) {
	c := b.byID[id]
	if c == nil {
		return
	}
	delete(b.byID, id)
	for i, o := range b.clients {
		if o == c {
			b.clients = append(b.clients[:i], b.clients[i+1:]...)
			break
		}
	}
}

// Clients returns how many clients the buffer knows.
func (b *Buffer[C, I]) Clients() int { return len(b.clients) }

// mod returns tick mod n in [0, n).
func mod(tick int64, n int) int {
	m := tick % int64(n)
	if m < 0 {
		m += int64(n)
	}
	return int(m)
}
