//go:build !linux

package ticksys

import "time"

const preciseSleep = false

func sleep(d time.Duration) { time.Sleep(d) }

func rawMonotonic() time.Duration { return 0 }
