package transport

import "time"

// tokenBucket is a token-bucket rate limiter: it holds up to burst tokens,
// gains rate tokens a second, and each event allowed takes one. Its clock
// is injected (a monotonic reading), so tests drive it exactly. Not safe
// for concurrent use: callers hold their own lock.
type tokenBucket struct {
	rate   float64 // tokens a second; > 0
	burst  float64 // capacity; >= 1
	tokens float64
	last   time.Duration // clock reading when tokens was computed
	clock  func() time.Duration
}

// newTokenBucket returns a full bucket.
func newTokenBucket(rate float64, burst int, clock func() time.Duration) *tokenBucket {
	return &tokenBucket{rate: rate, burst: float64(burst), tokens: float64(burst), last: clock(), clock: clock}
}

// refill adds the tokens earned since the last reading. A clock that goes
// back (it should not) earns nothing.
func (b *tokenBucket) refill() {
	now := b.clock()
	if dt := now - b.last; dt > 0 {
		b.tokens = min(b.burst, b.tokens+dt.Seconds()*b.rate)
	}
	b.last = now
}

// allow takes a token if there is one.
func (b *tokenBucket) allow() bool {
	b.refill()
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// fill returns the fraction of the burst available now, in [0, 1].
func (b *tokenBucket) fill() float64 {
	b.refill()
	return b.tokens / b.burst
}
