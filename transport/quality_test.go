package transport

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestQualityGrade(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		in   qualityInput
		want Quality
	}{
		{"no estimate", qualityInput{}, QualityUnknown},
		{"not synchronized", qualityInput{valid: true}, QualityPoor},
		{"perfect", qualityInput{valid: true, synced: true}, QualityGood},
		{"good limits", qualityInput{valid: true, synced: true, bound: 2 * ms, jitter: 10 * ms, loss: 0.02}, QualityGood},
		{"bound fair", qualityInput{valid: true, synced: true, bound: 3 * ms}, QualityFair},
		{"jitter fair", qualityInput{valid: true, synced: true, jitter: 11 * ms}, QualityFair},
		{"loss fair", qualityInput{valid: true, synced: true, loss: 0.03}, QualityFair},
		{"fair limits", qualityInput{valid: true, synced: true, bound: 10 * ms, jitter: 40 * ms, loss: 0.1}, QualityFair},
		{"bound poor", qualityInput{valid: true, synced: true, bound: 11 * ms}, QualityPoor},
		{"jitter poor", qualityInput{valid: true, synced: true, jitter: 41 * ms}, QualityPoor},
		{"loss poor", qualityInput{valid: true, synced: true, loss: 0.11}, QualityPoor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := grade(tc.in, 1); got != tc.want {
				t.Errorf("grade = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestQualityHysteresis feeds the meter a sequence of inputs, 100 ms
// apart on an injected clock, and checks the grade after each.
func TestQualityHysteresis(t *testing.T) {
	ms := time.Millisecond
	in := func(bound time.Duration) qualityInput {
		return qualityInput{valid: true, synced: true, bound: bound}
	}
	repeat := func(n int, x qualityInput) []qualityInput {
		s := make([]qualityInput, n)
		for i := range s {
			s[i] = x
		}
		return s
	}
	type step struct {
		in   []qualityInput
		want []Quality // the grade after each input
	}
	grades := func(n int, q Quality) []Quality {
		s := make([]Quality, n)
		for i := range s {
			s[i] = q
		}
		return s
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"first grade at once", []step{
			{[]qualityInput{{}}, []Quality{QualityUnknown}},
			{[]qualityInput{in(1 * ms)}, []Quality{QualityGood}},
		}},
		{"drops at once", []step{
			{[]qualityInput{in(1 * ms), in(5 * ms), in(20 * ms)}, []Quality{QualityGood, QualityFair, QualityPoor}},
		}},
		{"no flicker at the threshold", []step{
			{[]qualityInput{in(1 * ms)}, []Quality{QualityGood}},
			// 2.1 ms and 1.9 ms alternate: below the limit half the
			// time, never below the margin (1.6 ms).
			{[]qualityInput{in(2100 * time.Microsecond), in(1900 * time.Microsecond), in(2100 * time.Microsecond),
				in(1900 * time.Microsecond), in(1900 * time.Microsecond)},
				[]Quality{QualityFair, QualityFair, QualityFair, QualityFair, QualityFair}},
			{repeat(40, in(1900*time.Microsecond)), grades(40, QualityFair)},
		}},
		{"rises after the hold", []step{
			{[]qualityInput{in(5 * ms)}, []Quality{QualityFair}},
			// 30 inputs 100 ms apart: the 31st is 3 s after the first.
			{repeat(30, in(1*ms)), grades(30, QualityFair)},
			{[]qualityInput{in(1 * ms)}, []Quality{QualityGood}},
		}},
		{"a break restarts the hold", []step{
			{[]qualityInput{in(5 * ms)}, []Quality{QualityFair}},
			{repeat(20, in(1*ms)), grades(20, QualityFair)},
			{[]qualityInput{in(1900 * time.Microsecond)}, []Quality{QualityFair}}, // good, not with margin
			{repeat(30, in(1*ms)), grades(30, QualityFair)},
			{[]qualityInput{in(1 * ms)}, []Quality{QualityGood}},
		}},
		{"silence is poor, a new server unknown", []step{
			{[]qualityInput{in(1 * ms), {valid: true}, {}}, []Quality{QualityGood, QualityPoor, QualityUnknown}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m qualityMeter
			var at time.Duration
			var got, want []Quality
			for _, s := range tc.steps {
				for _, x := range s.in {
					x.at = at
					at += 100 * ms
					q, _ := m.update(x)
					got = append(got, q)
				}
				want = append(want, s.want...)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("grades (-want +got):\n%s", d)
			}
		})
	}
}

func TestRecentLoss(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sent     int
		answered func(i int) bool
		want     float64
	}{
		{"none sent", 0, nil, 0},
		{"none answered", 10, func(int) bool { return false }, 0},
		{"two of ten lost", 10, func(i int) bool { return i != 3 && i != 5 }, 0.2},
		{"in flight is not lost", 10, func(i int) bool { return i < 5 && i != 3 }, 0.2},
		{"only the last 100", 300, func(i int) bool { return i >= 100 }, 0},
		{"half of the last 100", 300, func(i int) bool { return i%2 == 0 || i == 299 }, 0.49},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr seqTracker
			for i := range tc.sent {
				tr.send(time.Duration(i))
			}
			for i := range tc.sent {
				if tc.answered(i) {
					tr.answer(uint32(i), time.Duration(i))
				}
			}
			if got := tr.recentLoss(); got != tc.want {
				t.Errorf("recentLoss = %v, want %v", got, tc.want)
			}
		})
	}
}
