package transport

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/nettime"
)

func TestArrivalsFeedback(t *testing.T) {
	const ms = time.Millisecond
	tick10 := nettime.FromTick(60, 10, 0) // starts at 166.666667ms
	tests := []struct {
		name     string
		stamps   []nettime.Time
		at       []time.Duration
		want     wire.Feedback
		wantNone bool
	}{
		{name: "no messages", wantNone: true},
		{name: "unstamped messages say nothing", stamps: []nettime.Time{{}}, at: []time.Duration{0}, wantNone: true},
		{name: "early, measured from the tick start",
			// A stamp inside tick 10 counts from its start.
			stamps: []nettime.Time{tick10.Add(5 * ms)}, at: []time.Duration{tick10.Duration() - 3*ms},
			want: wire.Feedback{Total: 1, Count: 1, P1: 3 * ms, P5: 3 * ms, P50: 3 * ms}},
		{name: "late",
			stamps: []nettime.Time{tick10, tick10}, at: []time.Duration{tick10.Duration() + 2*ms, tick10.Duration() - 4*ms},
			want: wire.Feedback{Total: 2, Count: 2, Late: 1, P1: -2 * ms, P5: -2 * ms, P50: -2 * ms}},
		{name: "another tick rate",
			stamps: []nettime.Time{nettime.FromTick(30, 5, 0)}, at: []time.Duration{100 * ms},
			want: wire.Feedback{Total: 1, Count: 1, P1: 66666 * time.Microsecond, P5: 66666 * time.Microsecond, P50: 66666 * time.Microsecond}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a arrivals
			for i, s := range tc.stamps {
				a.add(s, tc.at[i])
			}
			p := a.withFeedback(wire.Pong{Seq: 3})
			if p.HasFeedback == tc.wantNone {
				t.Fatalf("HasFeedback %v, want %v", p.HasFeedback, !tc.wantNone)
			}
			// Through the wire: microseconds.
			got, err := wire.ParsePong(wire.AppendPong(nil, p))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Feedback); diff != "" {
				t.Errorf("feedback (-want +got):\n%s", diff)
			}
			if pf := feedbackFromWire(got.Feedback); pf.Count != int(tc.want.Count) || pf.Late != int(tc.want.Late) || pf.P1 != tc.want.P1 {
				t.Errorf("provider form %+v of %+v", pf, got.Feedback)
			}
		})
	}
}
