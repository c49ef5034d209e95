package ticksys

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"
)

const haveKernelTimer = true

const (
	clockMonotonic  = 1
	tfdNonblock     = syscall.O_NONBLOCK
	tfdCloexec      = syscall.O_CLOEXEC
	tfdTimerAbstime = 1
)

type itimerspec struct{ interval, value syscall.Timespec }

// kernelTimer is a timerfd on CLOCK_MONOTONIC, read through the Go poller,
// so a goroutine waiting on it holds no thread.
type kernelTimer struct {
	fd uintptr
	f  *os.File
}

// newKernelTimer returns a kernel timer, or nil if none can be made.
func newKernelTimer() *kernelTimer {
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdNonblock|tfdCloexec, 0)
	if errno != 0 {
		return nil
	}
	return &kernelTimer{fd: fd, f: os.NewFile(fd, "timerfd")} // non-blocking: polled
}

// wait blocks until d has passed, or ctx ends. Two timers race: the
// kernel's (the timerfd), precise when the process has an idle thread in
// the poller, and the Go runtime's (the read deadline), which busy
// schedulers check more often: whichever fires first ends the wait.
func (k *kernelTimer) wait(ctx context.Context, d time.Duration) error {
	deadline := rawMonotonic() + d
	k.f.SetReadDeadline(time.Now().Add(d)) // read after the raw clock: never before deadline
	spec := itimerspec{value: syscall.NsecToTimespec(int64(max(deadline, 1)))}
	if _, _, errno := syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, k.fd, tfdTimerAbstime,
		uintptr(unsafe.Pointer(&spec)), 0, 0, 0); errno == 0 {
		// Cancellation: a read deadline in the past ends the read.
		stop := context.AfterFunc(ctx, func() { k.f.SetReadDeadline(time.Unix(1, 0)) })
		defer stop()
		var buf [8]byte
		for rawMonotonic() < deadline {
			_, err := k.f.Read(buf[:])
			switch {
			case err == nil || errors.Is(err, os.ErrDeadlineExceeded):
				if ctx.Err() != nil {
					return ctx.Err()
				}
			case err != syscall.EINTR:
				goto fallback
			}
		}
		return nil
	}
fallback:
	// Only if the kernel timer failed: finish on the thread.
	for d := deadline - rawMonotonic(); d > 0; d = deadline - rawMonotonic() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		ts := syscall.NsecToTimespec(int64(min(d, time.Millisecond)))
		syscall.Nanosleep(&ts, nil)
	}
	return nil
}

func (k *kernelTimer) close() { k.f.Close() }

// rawMonotonic reads CLOCK_MONOTONIC with a system call, which
// testing/synctest does not fake.
func rawMonotonic() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}
