package nettime

import (
	"testing"
	"time"
)

// Sinks keep results alive, and the inputs are variables, so the compiler
// can neither fold nor drop the calls being measured.
var (
	sinkTime Time
	sinkInt  int64
	sinkCmp  int
	sinkDur  time.Duration

	// 30 days into a session at 60 Hz, mid-tick.
	benchT     = New(60, 30*24*time.Hour+123_456_789)
	benchU     = New(60, 30*24*time.Hour+987_654_321)
	benchDelta = 16_666_667 * time.Nanosecond
	benchTick  = int64(155_520_007)
	benchOff   = 5 * time.Millisecond
)

func BenchmarkAdd(b *testing.B) {
	b.ReportAllocs()
	t := benchT
	for b.Loop() {
		t = t.Add(benchDelta)
	}
	sinkTime = t
}

func BenchmarkSub(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkDur = benchT.Sub(benchU)
	}
}

func BenchmarkTick(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkInt = benchT.Tick()
	}
}

func BenchmarkTickOffset(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkDur = benchT.TickOffset()
	}
}

func BenchmarkFromTick(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkTime = FromTick(60, benchTick, benchOff)
	}
}

func BenchmarkCompare(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkCmp = benchT.Compare(benchU)
	}
}

func BenchmarkFixedTime(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkDur = benchT.FixedTime()
	}
}
