package ticksys

import (
	"syscall"
	"time"
	"unsafe"
)

const preciseSleep = true

// sleep blocks the calling thread for d in nanosleep, resuming after
// signals until d has passed.
func sleep(d time.Duration) {
	deadline := rawMonotonic() + d
	for d > 0 {
		ts := syscall.NsecToTimespec(int64(d))
		if err := syscall.Nanosleep(&ts, nil); err == nil {
			return
		}
		d = deadline - rawMonotonic()
	}
}

// rawMonotonic reads CLOCK_MONOTONIC with a system call, which
// testing/synctest does not fake.
func rawMonotonic() time.Duration {
	var ts syscall.Timespec
	const clockMonotonic = 1
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}
