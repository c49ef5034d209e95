package netsim

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// Profile is a complete scenario: the two directions of the path, the two
// clocks, the client's frame timing and scheduled changes. The zero value
// (with a name) is a perfect network between perfect clocks at 60 Hz.
type Profile struct {
	// Name identifies the profile, e.g. "broadband". Required; no spaces.
	Name string

	// Description says what the profile models and where its numbers come
	// from.
	Description string

	// Up is the client-to-server direction.
	Up LinkSpec

	// Down is the server-to-client direction.
	Down LinkSpec

	// Client is the client's clock. Named profiles give it a nonzero
	// offset and drift.
	Client ClockSpec

	// Server is the server's clock; its zero value reads true time.
	Server ClockSpec

	// Frames is the client's frame timing.
	Frames FrameSpec

	// Changes are scheduled changes of the links, in any order.
	Changes []Change
}

// Validate reports every problem with p, joined (see ValidationError). A
// profile that validates builds without error.
func (p Profile) Validate() error {
	var v validator
	p.validate(&v)
	return v.err()
}

func (p Profile) validate(v *validator) {
	switch {
	case p.Name == "":
		v.addf("name", "is required")
	case strings.ContainsAny(p.Name, " \t\r\n"):
		v.addf("name", "must not contain spaces, got %q", p.Name)
	}
	p.Up.validate(v, "up")
	p.Down.validate(v, "down")
	p.Client.validate(v, "client")
	p.Server.validate(v, "server")
	if len(p.Server.Suspends) > 0 {
		v.addf("server.suspends", "only the client may suspend")
	}
	p.Frames.validate(v, "frames")
	for i, c := range p.Changes {
		c.validate(v, fmt.Sprintf("changes[%d]", i))
	}
}

// Clone returns a deep copy of p.
func (p Profile) Clone() Profile {
	p.Up = cloneLinkSpec(p.Up)
	p.Down = cloneLinkSpec(p.Down)
	p.Client = cloneClockSpec(p.Client)
	p.Server = cloneClockSpec(p.Server)
	p.Changes = slices.Clone(p.Changes)
	for i, c := range p.Changes {
		if c.Base != nil {
			b := *c.Base
			p.Changes[i].Base = &b
		}
		if c.Jitter != nil {
			j := *c.Jitter
			p.Changes[i].Jitter = &j
		}
		if c.Loss != nil {
			l := *c.Loss
			p.Changes[i].Loss = &l
		}
		if c.Queue != nil {
			p.Changes[i].Queue = ptr(*c.Queue)
		}
		if c.Steps != nil {
			p.Changes[i].Steps = ptr(*c.Steps)
		}
		if c.Reorder != nil {
			p.Changes[i].Reorder = ptr(*c.Reorder)
		}
		if c.ReorderDelay != nil {
			p.Changes[i].ReorderDelay = ptr(*c.ReorderDelay)
		}
		if c.Duplicate != nil {
			p.Changes[i].Duplicate = ptr(*c.Duplicate)
		}
		if c.Periodic != nil {
			p.Changes[i].Periodic = ptr(*c.Periodic)
		}
	}
	return p
}

// NewLinks builds the two links of p. Both derive their randomness from seed
// (through different sub-streams), so one seed fixes a whole run.
func (p Profile) NewLinks(seed uint64) (up, down *Link, err error) {
	if err := p.Validate(); err != nil {
		return nil, nil, fmt.Errorf("netsim: profile %q: %w", p.Name, err)
	}
	up, err = NewLink(p.Up, DirUp, p.Changes, derive(seed, streamUp))
	if err != nil {
		return nil, nil, err
	}
	down, err = NewLink(p.Down, DirDown, p.Changes, derive(seed, streamDown))
	if err != nil {
		return nil, nil, err
	}
	return up, down, nil
}

// NewClocks builds the client and server clocks of p.
func (p Profile) NewClocks() (client, server *Clock, err error) {
	if client, err = NewClock(p.Client); err != nil {
		return nil, nil, fmt.Errorf("netsim: profile %q: client clock: %w", p.Name, err)
	}
	if server, err = NewClock(p.Server); err != nil {
		return nil, nil, fmt.Errorf("netsim: profile %q: server clock: %w", p.Name, err)
	}
	return client, server, nil
}

// NewFrames builds the client's frame generator of p for seed.
func (p Profile) NewFrames(seed uint64) (*Frames, error) {
	f, err := NewFrames(p.Frames, seed)
	if err != nil {
		return nil, fmt.Errorf("netsim: profile %q: %w", p.Name, err)
	}
	return f, nil
}

// ParseProfile decodes a profile from JSON (see the package documentation
// for the format) and validates it. Unknown keys, trailing data and invalid
// values are errors that name the offending key path.
func ParseProfile(data []byte) (Profile, error) {
	var m profileJSON
	if err := decodeStrict(data, &m); err != nil {
		return Profile{}, fmt.Errorf("netsim: parse profile: %w", err)
	}
	p := m.spec()
	if err := p.Validate(); err != nil {
		name := p.Name
		if name == "" {
			name = "(unnamed)"
		}
		return Profile{}, fmt.Errorf("netsim: invalid profile %s:\n%w", name, err)
	}
	return p, nil
}

// LoadProfile reads and parses the JSON profile file at path.
func LoadProfile(path string) (Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Profile{}, fmt.Errorf("netsim: %w", err)
	}
	p, err := ParseProfile(data)
	if err != nil {
		return Profile{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}
