package main

import (
	"encoding/binary"
	"errors"
	"time"
)

// The game: one elevator between floors, simulated at a fixed tick rate in
// integer millimeters, so that the server and a client stepping the same
// state with the same calls get the same result to the millimeter.
const (
	tickRate   = 30   // ticks per second
	floors     = 6    // floors 0 to 5
	floorMM    = 3000 // height of a floor
	speedMM    = 100  // per tick: 3 m/s
	doorTicks  = 30   // the doors stay open 1 s at each stop
	npcEvery   = 90   // an idle elevator is called by the building every 3 s
	maxQueue   = 8    // calls waiting
	shotEvery  = 45   // the server fires a projectile every 1.5 s
	shotSpeedM = 20   // m/s, horizontally from the car
)

// elevator is the authoritative state after a tick. It is a value: a copy
// is a snapshot, and prediction steps a copy.
type elevator struct {
	Pos    int32 // mm above floor 0
	Target int8  // the floor it goes to, or stands at
	Doors  int16 // ticks the doors stay open
	N      int8  // calls queued
	Queue  [maxQueue]int8
}

// call queues a call to floor f, unless it is already the target or queued
// or the queue is full. It reports whether the call was queued.
func (e *elevator) call(f int8) bool {
	if f < 0 || f >= floors || f == e.Target || e.N == maxQueue {
		return false
	}
	for _, q := range e.Queue[:e.N] {
		if q == f {
			return false
		}
	}
	e.Queue[e.N] = f
	e.N++
	return true
}

// idle reports whether the elevator stands at its target with the doors
// shut and no call queued.
func (e *elevator) idle() bool {
	return e.N == 0 && e.Doors == 0 && e.Pos == int32(e.Target)*floorMM
}

// step simulates tick k, after its calls were applied. An idle elevator at a
// tick that is a multiple of npcEvery is called by the building (a rule both
// ends know, so a client predicts it too).
func (e *elevator) step(k int64) {
	if k%npcEvery == 0 && e.idle() {
		e.call(int8((k/npcEvery*3 + 1) % floors))
	}
	if e.Doors > 0 {
		e.Doors--
		return
	}
	goal := int32(e.Target) * floorMM
	switch {
	case e.Pos < goal:
		e.Pos = min(e.Pos+speedMM, goal)
	case e.Pos > goal:
		e.Pos = max(e.Pos-speedMM, goal)
	case e.N > 0:
		e.Target = e.Queue[0]
		copy(e.Queue[:], e.Queue[1:e.N])
		e.N--
		e.Queue[e.N] = 0 // a state is compared whole
		return
	default:
		return
	}
	if e.Pos == goal {
		e.Doors = doorTicks
	}
}

// Messages: the first byte says which.
const (
	msgSnapshot = 1 + iota // server → client, unreliable, every tick, stamped with it: the elevator after it
	msgShot                // server → client, reliable, stamped with its launch: a projectile
	msgCall                // client → server, reliable, stamped with the tick to apply it in: a floor call
	msgAck                 // server → client, reliable: the tick a call was applied in
)

var errMalformed = errors.New("malformed message")

func (e elevator) append(b []byte) []byte {
	b = append(b, msgSnapshot)
	b = binary.BigEndian.AppendUint32(b, uint32(e.Pos))
	b = append(b, byte(e.Target))
	b = binary.BigEndian.AppendUint16(b, uint16(e.Doors))
	b = append(b, byte(e.N))
	for _, q := range e.Queue[:e.N] {
		b = append(b, byte(q))
	}
	return b
}

func parseSnapshot(b []byte) (elevator, error) {
	var e elevator
	if len(b) < 9 || b[0] != msgSnapshot || int(b[8]) > maxQueue || len(b) != 9+int(b[8]) {
		return e, errMalformed
	}
	e.Pos = int32(binary.BigEndian.Uint32(b[1:]))
	e.Target = int8(b[5])
	e.Doors = int16(binary.BigEndian.Uint16(b[6:]))
	e.N = int8(b[8])
	for i := range e.N {
		e.Queue[i] = int8(b[9+int(i)])
	}
	return e, nil
}

// shot is a projectile fired from the car: it flies at a constant
// velocity, so its position is a function of the time since its launch.
type shot struct {
	ID       uint32
	OriginMM int32 // height of the car at the launch
	Speed    int32 // m/s, signed: left or right
}

// at returns the projectile's horizontal distance from the shaft, in mm,
// after flying for d.
func (s shot) at(d time.Duration) float64 { return float64(s.Speed) * d.Seconds() * 1000 }

func (s shot) append(b []byte) []byte {
	b = append(b, msgShot)
	b = binary.BigEndian.AppendUint32(b, s.ID)
	b = binary.BigEndian.AppendUint32(b, uint32(s.OriginMM))
	return binary.BigEndian.AppendUint32(b, uint32(s.Speed))
}

func parseShot(b []byte) (shot, error) {
	if len(b) != 13 || b[0] != msgShot {
		return shot{}, errMalformed
	}
	return shot{ID: binary.BigEndian.Uint32(b[1:]), OriginMM: int32(binary.BigEndian.Uint32(b[5:])),
		Speed: int32(binary.BigEndian.Uint32(b[9:]))}, nil
}

// call is a client's call of the elevator to a floor; Seq orders a
// client's calls.
type call struct {
	Seq   uint32
	Floor int8
}

func (c call) append(b []byte) []byte {
	b = append(b, msgCall)
	b = binary.BigEndian.AppendUint32(b, c.Seq)
	return append(b, byte(c.Floor))
}

func parseCall(b []byte) (call, error) {
	if len(b) != 6 || b[0] != msgCall {
		return call{}, errMalformed
	}
	return call{Seq: binary.BigEndian.Uint32(b[1:]), Floor: int8(b[5])}, nil
}

// ack tells a client the tick its call was applied in.
type ack struct {
	Seq     uint32
	Stamped int64 // the tick the call was stamped for
	Applied int64 // the tick it was applied in: Stamped, or later if it came late
}

func (a ack) append(b []byte) []byte {
	b = append(b, msgAck)
	b = binary.BigEndian.AppendUint32(b, a.Seq)
	b = binary.BigEndian.AppendUint64(b, uint64(a.Stamped))
	return binary.BigEndian.AppendUint64(b, uint64(a.Applied))
}

func parseAck(b []byte) (ack, error) {
	if len(b) != 21 || b[0] != msgAck {
		return ack{}, errMalformed
	}
	return ack{Seq: binary.BigEndian.Uint32(b[1:]), Stamped: int64(binary.BigEndian.Uint64(b[5:])),
		Applied: int64(binary.BigEndian.Uint64(b[13:]))}, nil
}
