//go:build !linux

package ticksys

import (
	"context"
	"time"
)

const haveKernelTimer = false

type kernelTimer struct{}

func newKernelTimer() *kernelTimer { return nil }

func (*kernelTimer) wait(context.Context, time.Duration) error { return nil }

func (*kernelTimer) close() {}

func rawMonotonic() time.Duration { return 0 }
