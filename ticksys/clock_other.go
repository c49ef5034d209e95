//go:build !linux

package ticksys

import "time"

const preciseSleep = false

type kernelTimer struct{}

func newKernelTimer() *kernelTimer { return nil }

func (*kernelTimer) sleepUntil(time.Duration) {}

func (*kernelTimer) close() {}

func rawMonotonic() time.Duration { return 0 }
