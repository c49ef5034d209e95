package netsim

import "math/rand/v2"

// Random streams. Every random feature of a Link draws from its own stream, so
// enabling one feature (say duplication) never shifts the numbers another
// feature (say jitter) sees: two profiles that differ in one parameter share
// the rest of their randomness ("common random numbers"), which makes
// comparisons between them far less noisy.
const (
	streamJitter uint64 = iota + 1
	streamLoss
	streamBurst
	streamQueue
	streamReorder
	streamDuplicate
	streamSteps
	streamFrames
	streamUp
	streamDown
	streamBloat
	streamFlap
	streamPeriodic
)

// mix is the splitmix64 finalizer: a bijective scrambler of 64-bit values.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// derive returns the seed of sub-stream stream of seed.
func derive(seed, stream uint64) uint64 {
	return mix(seed ^ mix(stream*0x632be59bd9b4e019))
}

// newRand returns a PCG generator for sub-stream stream of seed.
func newRand(seed, stream uint64) *rand.Rand {
	s := derive(seed, stream)
	return rand.New(rand.NewPCG(s, mix(s)))
}

// unitFloat maps 64 random bits to [0, 1).
func unitFloat(x uint64) float64 {
	return float64(x>>11) * 0x1p-53
}
