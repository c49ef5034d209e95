package harness

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFiguresWithoutAValueEncode: a spread or distribution with nothing to
// measure (NaN) encodes as null instead of failing the whole report.
func TestFiguresWithoutAValueEncode(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"spread", Spread{Median: 1.5, Min: 1, Max: 2}, `{"median":1.5,"min":1,"max":2}`},
		{"spread without values", Spread{nan, nan, nan}, `{"median":null,"min":null,"max":null}`},
		{"spread pointer", &Spread{Median: math.Inf(1), Min: 0, Max: 3}, `{"median":null,"min":0,"max":3}`},
		{"distribution", Distribution{Median: nan, P10: 0.1, P90: 0.9, Min: 0, Max: 1}, `{"median":null,"p10":0.1,"p90":0.9,"min":0,"max":1}`},
		{"in a result", ScenarioResult{P99MS: Spread{nan, nan, nan}, Coverage: Spread{1, 1, 1}}, `"p99_ms":{"median":null,"min":null,"max":null}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := string(b); got != tc.want && !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %s, want %s", tc.name, got, cmp.Diff(tc.want, got))
		}
	}
}
