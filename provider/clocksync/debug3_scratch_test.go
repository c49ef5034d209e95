package clocksync

import (
	"fmt"
	"testing"
	"time"

	"github.com/netclock/netclock/provider"
)

func TestScratchExact(t *testing.T) {
	e := newEst(t)
	offset, up, down := 3*time.Second, 10*time.Millisecond, 10*time.Millisecond
	var now time.Duration
	ex := func() {
		t1 := now
		t2 := t1 + offset + up
		e.Observe(provider.Sample{ClientSend: t1, ServerReceive: t2, ServerSend: t2, ClientReceive: t1 + up + down})
		now = t1 + 100*time.Millisecond
		est := e.Estimate()
		ru, rw := e.floorsAt(e.ref)
		fmt.Printf("%5.1f ev=%-12s off=%v bound=%v asym=%d acq=%d ref=(%d,%d) below=%d/%d n=%d sp=%d/%d tilt=%d\n", now.Seconds(), e.LastEvent(), est.Offset, est.ErrorBound, e.asym, e.acquiring, ru, rw, e.belowU, e.belowW, e.n, e.spU, e.spW, e.driftTilt())
	}
	for range 60 {
		ex()
	}
	offset += 500 * time.Millisecond
	for range 60 {
		ex()
	}
	up -= 5 * time.Millisecond
	for range 10 {
		ex()
	}
}
