package clocksync

import "testing"

// TestKeepsRate: a refit far less certain than the drift, and within the
// errors of it, is ignored, unless the drift is a slew's, was fitted on
// too few bins, or on more than the history now holds.
func TestKeepsRate(t *testing.T) {
	const ppm = 1e-6
	tests := []struct {
		name        string
		fitted      bool
		r, rSE      float64 // the drift, ppm
		rBins, binN int     // the drift's fit's bins, and the history's now
		before      float64 // the rate before the last shift, ppm
		beforeOK    bool
		newR, newSE float64 // the refit, ppm
		want        bool
	}{
		{"noisier and within its errors", true, -11, 4, 76, 80, 0, false, 315, 130, true},
		{"noisier but far off", true, -11, 4, 76, 80, 0, false, 600, 130, false},
		{"about as certain", true, -11, 4, 76, 80, 0, false, 20, 10, false},
		{"no drift fitted yet", false, -11, 4, 76, 80, 0, false, 315, 130, false},
		{"the drift is a slew's", true, -270, 4, 76, 80, 30, true, -100, 130, false},
		{"the drift is back at the rate before the slew", true, 30, 4, 76, 80, 40, true, 200, 130, true},
		{"the drift from the first seconds' bins", true, 63, 1.8, keptBins - 1, keptBins, 0, false, 51, 6, false},
		{"the drift from a history longer than now's", true, 23, 2, 200, 12, 0, false, -25, 194, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Estimator{fitted: tt.fitted, r: tt.r * ppm, rSE: tt.rSE * ppm, rBins: tt.rBins, binN: tt.binN,
				before: tt.before * ppm, beforeOK: tt.beforeOK}
			if got := e.keepsRate(tt.newR*ppm, tt.newSE*ppm); got != tt.want {
				t.Errorf("keepsRate(%v ± %v ppm) = %v, want %v", tt.newR, tt.newSE, got, tt.want)
			}
		})
	}
}
