package main

import (
	"testing"
	"testing/synctest"
)

// TestMeasureInVirtualTime runs the measurement in fake time, where every
// wake-up is exact: every tick is counted, none late, for both providers
// and both kinds of wait.
func TestMeasureInVirtualTime(t *testing.T) {
	for _, client := range []bool{false, true} {
		for _, coarse := range []bool{false, true} {
			synctest.Test(t, func(t *testing.T) {
				res, err := measure(100, 2e9, client, mode{coarse: coarse}) // 2s at 100 Hz
				if err != nil {
					t.Fatal(err)
				}
				// The slewing client's predicted time runs up to 5% fast.
				if n := len(res.late); n < 199 || n > 211 {
					t.Errorf("client=%v coarse=%v: %d ticks in 2s at 100 Hz", client, coarse, n)
				}
				for i, l := range res.late {
					// The slewing client aims 1µs past each tick start;
					// its first tick is late by the slew, 5% of 10ms.
					if l < 0 || l > 2000 && !(client && i == 0 && l <= 500000) {
						t.Fatalf("client=%v coarse=%v: tick %d late %v", client, coarse, i, l)
					}
				}
			})
		}
	}
}
