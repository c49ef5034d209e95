package ticksys

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/netclock/netclock/provider"
)

// A game loop: it waits for its next frame and returns the dt it passes to
// Advance.
type gameLoop struct {
	name string
	// frame waits for the next frame on tk and returns dt; prev is the
	// previous frame's ticker timestamp and wall reading.
	frame func(tk *time.Ticker, prevTick, prevNow time.Time) (dt time.Duration, tick time.Time)
}

var usualLoops = []gameLoop{
	{"dt from a time.Ticker", func(tk *time.Ticker, prevTick, _ time.Time) (time.Duration, time.Time) {
		t := <-tk.C // after a hitch: a stale tick, then a long one
		return t.Sub(prevTick), t
	}},
	{"fixed 1/60 s", func(tk *time.Ticker, _, _ time.Time) (time.Duration, time.Time) {
		return time.Second / 60, <-tk.C
	}},
	{"clamped to 50ms", func(tk *time.Ticker, _, prevNow time.Time) (time.Duration, time.Time) {
		t := <-tk.C
		return min(time.Since(prevNow), 50*time.Millisecond), t
	}},
}

// TestHitchResetsAtMostOnce: a client whose game loop hitches once gets at
// most one reset, whichever dt the loop passes, because provider.Steered
// advances by its own clock (the one source of elapsed time) and dt is
// advisory. A 230ms hitch is below the stall cap (250ms): no reset at all,
// the ticks that passed fire as catch-up ticks. A 400ms one is beyond it:
// one ReasonStall. Before the rule, the ticker loop's 230ms hitch gave two
// hard resets (a stale tick left the times 214ms behind the clock, the
// long tick after it put them 230ms ahead).
func TestHitchResetsAtMostOnce(t *testing.T) {
	for _, loop := range usualLoops {
		for _, hitch := range []struct {
			d      time.Duration
			resets int
		}{{230 * time.Millisecond, 0}, {400 * time.Millisecond, 1}} {
			t.Run(loop.name+"/"+hitch.d.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					start := time.Now()
					c, err := provider.NewSteered(provider.SteeredConfig{Clock: func() time.Duration { return time.Since(start) }})
					if err != nil {
						t.Fatal(err)
					}
					c.SetEstimate(provider.Estimate{Valid: true, Offset: time.Hour, DriftPPM: 40,
						Uplink: 20 * time.Millisecond, Downlink: 25 * time.Millisecond})
					s := mustNew(t, Config{Provider: c, TickRate: 60})
					r := record(t, s)
					catchUps := 0
					s.OnNetworkTick(func(ev TickEvent) {
						if ev.CatchUp() {
							catchUps++
						}
					})
					tk := time.NewTicker(time.Second / 60)
					defer tk.Stop()
					prevTick, prevNow := start, start
					for frame := range 300 { // 5s
						if frame == 120 {
							time.Sleep(hitch.d) // a slow frame: GC, asset load, debugger
						}
						dt, tick := loop.frame(tk, prevTick, prevNow)
						prevTick, prevNow = tick, time.Now()
						s.Advance(dt)
					}
					if got := len(r.resets); got != hitch.resets {
						t.Fatalf("%d resets %+v, want %d", got, r.resets, hitch.resets)
					}
					if hitch.resets == 1 && r.resets[0].Reason != ReasonStall {
						t.Errorf("reset reason %v, want %v", r.resets[0].Reason, ReasonStall)
					}
					if catchUps == 0 {
						t.Error("no catch-up tick after the hitch")
					}
					// The timelines are where the clock says: no error to
					// slew away after the hitch.
					st := c.Status()
					if e := max(abs(st.PredictedError), abs(st.ServerError)); e > time.Millisecond {
						t.Errorf("timelines %v/%v off their targets after the hitch", st.PredictedError, st.ServerError)
					}
					if c.Status().Resets != 0 {
						t.Errorf("provider hard resets: %d", c.Status().Resets)
					}
				})
			})
		}
	}
}

func abs(d time.Duration) time.Duration { return max(d, -d) }
