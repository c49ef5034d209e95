package harness

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

const msec = time.Millisecond

// evenFrames returns frames every step from first to last (inclusive), each
// message taking delay; the frames at lost are lost.
func evenFrames(first, last, step, delay time.Duration, lost ...time.Duration) []FrameSend {
	var f []FrameSend
	for t := first; t <= last; t += step {
		f = append(f, FrameSend{At: t, Arrived: t + delay, Lost: slices.Contains(lost, t)})
	}
	return f
}

func durs(ms ...int) []time.Duration {
	v := make([]time.Duration, len(ms))
	for i, m := range ms {
		v[i] = time.Duration(m) * msec
	}
	return v
}

func TestOracleFrameLead(t *testing.T) {
	// A 30 ms stall: frames at 0, 10, 20, 30, then 80, 90, 100.
	stall := append(evenFrames(0, 30*msec, 10*msec, msec), evenFrames(80*msec, 100*msec, 10*msec, msec)...)
	for _, tc := range []struct {
		name         string
		frames       []FrameSend
		ticks        []time.Duration
		q            float64
		lead, margin time.Duration
		ok           bool
	}{
		{"no frames", nil, durs(10), 0.99, 0, 0, false},
		{"no ticks", evenFrames(0, 50*msec, 10*msec, 0), nil, 0.99, 0, 0, false},
		// Frames at the tick starts, no delay: sent at the tick, on time.
		{"zero delay", evenFrames(0, 100*msec, 10*msec, 0), durs(50, 60), 0.99, 0, 0, true},
		// Frames at the tick starts, 3 ms: a lead short of a frame still
		// sends at the tick's own frame, late; one frame's worth sends at
		// the frame before, 7 ms early.
		{"frames at tick starts", evenFrames(0, 100*msec, 10*msec, 3*msec), durs(50, 60, 70), 0.99, 10 * msec, 7 * msec, true},
		// Frames half a tick after the tick starts: 5 ms lead is enough.
		{"frames at half ticks", evenFrames(5*msec, 105*msec, 10*msec, 3*msec), durs(50, 60, 70), 0.99, 5 * msec, 2 * msec, true},
		// All on time needs tick 80 sent at frame 30 (the last before
		// the stall): a lead of 50. Margins 49 × 4 (ticks 50–80, sent at
		// 0–30), 9 and 19 (ticks 90, 100, sent at 80).
		{"stall, all", stall, durs(50, 60, 70, 80, 90, 100), 1, 50 * msec, 224 * msec / 6, true},
		// Half on time: at 20, ticks 50 (frame 30), 90 and 100 (frame 80);
		// 60, 70, 80 wait for frame 80 and are 21, 11, 1 ms late.
		{"stall, half", stall, durs(50, 60, 70, 80, 90, 100), 0.5, 20 * msec, 14 * msec / 6, true},
		// A lost message counts neither way.
		{"lost", evenFrames(0, 100*msec, 10*msec, 3*msec, 50*msec), durs(50, 60, 70), 0.99, 10 * msec, 7 * msec, true},
		{"all lost", []FrameSend{{At: 0, Lost: true}, {At: 10 * msec, Lost: true}}, durs(10), 0.99, 0, 0, false},
		// Not monotone: frame 10 is fast, frame 0 slow. The smallest
		// lead is 10 ms, though 20 ms would be late again.
		{"smallest, not monotone", []FrameSend{{At: 0, Arrived: 25 * msec}, {At: 10 * msec, Arrived: 15 * msec}, {At: 20 * msec, Arrived: 21 * msec}},
			durs(20), 1, 10 * msec, 5 * msec, true},
		// A tick after the last frame is not sent (as a lost one, it counts
		// neither way) until the lead reaches back to that frame: at 5 ms
		// tick 15 leaves at 10, on time, and tick 35 is not sent.
		{"tick after the last frame", evenFrames(0, 20*msec, 10*msec, msec), durs(15, 35), 1, 5 * msec, 4 * msec, true},
		// 6 ms: tick 15 is late at every lead short of 15 ms, where it
		// leaves at frame 0 and tick 35 at frame 20, both 9 ms early.
		{"tick after the last frame, reached", evenFrames(0, 20*msec, 10*msec, 6*msec), durs(15, 35), 1, 15 * msec, 9 * msec, true},
	} {
		lead, margin, ok := OracleFrameLead(tc.frames, tc.ticks, tc.q)
		if lead != tc.lead || margin != tc.margin || ok != tc.ok {
			t.Errorf("%s: OracleFrameLead = %v, %v, %v; want %v, %v, %v", tc.name, lead, margin, ok, tc.lead, tc.margin, tc.ok)
		}
	}
}

// onTimeAt is the frame oracle's on-time fraction at lead L, directly from
// the definition.
func onTimeAt(frames []FrameSend, ticks []time.Duration, l time.Duration) (float64, bool) {
	var delivered, onTime int
	for _, t := range ticks {
		for _, f := range frames {
			if f.At >= t-l {
				if !f.Lost {
					delivered++
					if f.Arrived <= t {
						onTime++
					}
				}
				break
			}
		}
	}
	return float64(onTime) / float64(delivered), delivered > 0
}

// The sweep against the definition over random frames (jittered, with
// stalls and losses) and delays: the lead found reaches q, and no smaller
// lead at which a tick changes frame does.
func TestOracleFrameLeadMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		var frames []FrameSend
		at := time.Duration(0)
		for range 20 + rng.IntN(60) {
			at += time.Duration(1+rng.IntN(20)) * msec
			if rng.IntN(10) == 0 {
				at += time.Duration(rng.IntN(100)) * msec // a stall
			}
			frames = append(frames, FrameSend{At: at, Arrived: at + time.Duration(rng.IntN(40))*msec, Lost: rng.IntN(20) == 0})
		}
		var ticks []time.Duration
		for tk := 100 * msec; tk < at; tk += 10 * msec {
			ticks = append(ticks, tk)
		}
		q := []float64{0.5, 0.9, 0.99, 1}[rng.IntN(4)]
		lead, _, ok := OracleFrameLead(frames, ticks, q)
		// The candidates: 0 and every tick − frame time above it.
		cands := []time.Duration{0}
		for _, tk := range ticks {
			for _, f := range frames {
				if f.At < tk {
					cands = append(cands, tk-f.At)
				}
			}
		}
		slices.Sort(cands)
		want, wantOK := time.Duration(0), false
		for _, l := range cands {
			if r, any := onTimeAt(frames, ticks, l); any && r >= q {
				want, wantOK = l, true
				break
			}
		}
		if lead != want || ok != wantOK {
			t.Fatalf("trial %d (q %v): OracleFrameLead = %v, %v; the definition gives %v, %v", trial, q, lead, ok, want, wantOK)
		}
	}
}
