package netsim

import (
	"testing"
	"time"
)

func BenchmarkLinkSend(b *testing.B) {
	for _, name := range []string{"fiber", "broadband", "congested", "mobile-4g", "leo-satellite", "wifi", "ue-bad-both"} {
		p, _ := ProfileByName(name)
		b.Run(name+"/SendAppend", func(b *testing.B) {
			up, _, err := p.NewLinks(1)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			buf := make([]time.Duration, 0, 2)
			var now time.Duration
			for b.Loop() {
				now += ms
				buf = up.SendAppend(buf[:0], now)
			}
		})
	}
	p, _ := ProfileByName("broadband")
	b.Run("broadband/Send", func(b *testing.B) {
		up, _, _ := p.NewLinks(1)
		b.ReportAllocs()
		var now time.Duration
		for b.Loop() {
			now += ms
			_ = up.Send(now)
		}
	})
	pareto := LinkSpec{Base: 10 * ms, Jitter: JitterSpec{Kind: JitterPareto, Scale: 2 * ms, Shape: 1.5}}
	b.Run("pareto/SendAppend", func(b *testing.B) {
		l, _ := NewLink(pareto, DirUp, nil, 1)
		b.ReportAllocs()
		buf := make([]time.Duration, 0, 2)
		var now time.Duration
		for b.Loop() {
			now += ms
			buf = l.SendAppend(buf[:0], now)
		}
	})
}

func BenchmarkClock(b *testing.B) {
	c, _ := NewClock(clockSpecs["everything"])
	b.Run("Read", func(b *testing.B) {
		var t time.Duration
		for b.Loop() {
			t += 7919 * time.Microsecond
			_ = c.Read(t % (100 * time.Second))
		}
	})
	b.Run("TrueTime", func(b *testing.B) {
		var t time.Duration
		for b.Loop() {
			t += 7919 * time.Microsecond
			_ = c.TrueTime(t % (100 * time.Second))
		}
	})
}

func BenchmarkFramesNext(b *testing.B) {
	f, _ := NewFrames(desktopFrames, 1)
	b.ReportAllocs()
	for b.Loop() {
		_ = f.Next()
	}
}
