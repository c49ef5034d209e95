package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuTimes returns the process's user and system CPU time so far.
func cpuTimes() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// rssBytes returns the resident set size from /proc/self/statm (0 if
// unavailable).
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// MemSnapshot is the process's memory after a forced GC and scavenge.
type MemSnapshot struct {
	HeapInuse  uint64 `json:"heap_inuse_bytes"`  // runtime.MemStats.HeapInuse
	StackInuse uint64 `json:"stack_inuse_bytes"` // runtime.MemStats.StackInuse
	RSS        int64  `json:"rss_bytes"`         // resident set size, from /proc
	Goroutines int    `json:"goroutines"`        // runtime.NumGoroutine
}

// memSnapshot collects garbage and returns freed memory to the OS first,
// so HeapInuse and RSS count live memory rather than garbage.
func memSnapshot() MemSnapshot {
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return MemSnapshot{HeapInuse: ms.HeapInuse, StackInuse: ms.StackInuse, RSS: rssBytes(),
		Goroutines: runtime.NumGoroutine()}
}

// CPUReport is CPU time over a measurement window.
type CPUReport struct {
	UserS  float64 `json:"user_s"`  // user CPU seconds
	SysS   float64 `json:"sys_s"`   // system CPU seconds
	TotalS float64 `json:"total_s"` // user + system
	// Utilization is CPU time per wall time (1 = one core busy).
	Utilization float64 `json:"utilization"`
}

type cpuMark struct {
	wall      time.Time
	user, sys time.Duration
}

func markCPU() cpuMark {
	u, s := cpuTimes()
	return cpuMark{wall: time.Now(), user: u, sys: s}
}

func (m cpuMark) since() (CPUReport, time.Duration) {
	u, s := cpuTimes()
	wall := time.Since(m.wall)
	r := CPUReport{UserS: (u - m.user).Seconds(), SysS: (s - m.sys).Seconds()}
	r.TotalS = r.UserS + r.SysS
	if wall > 0 {
		r.Utilization = r.TotalS / wall.Seconds()
	}
	return r, wall
}

// pollUntil calls cond every interval until it returns true (true), or ctx
// ends or timeout passes (false). timeout <= 0 waits for ctx only.
func pollUntil(ctx context.Context, interval, timeout time.Duration, cond func() bool) bool {
	if cond() {
		return true
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var deadline <-chan time.Time
	if timeout > 0 {
		d := time.NewTimer(timeout)
		defer d.Stop()
		deadline = d.C
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case <-deadline:
			return cond()
		case <-t.C:
			if cond() {
				return true
			}
		}
	}
}

// wait waits for d or until ctx ends; false if ctx ended.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "netclock-load: "+format+"\n", args...)
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()/10) / 100 }

// MachineCPU is the whole machine's CPU use over a window, from
// /proc/stat: every process, the other users of the machine included.
type MachineCPU struct {
	Cores int `json:"cores"` // cores the machine has
	// BusyCores is how many cores were busy on average (user, nice,
	// system, irq, softirq); StealCores how many the hypervisor took.
	BusyCores  float64 `json:"busy_cores"`
	StealCores float64 `json:"steal_cores"`
}

type statMark struct{ busy, steal, total int64 }

func readStat() (statMark, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return statMark{}, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return statMark{}, false
	}
	var v [8]int64
	for i := range v {
		v[i], _ = strconv.ParseInt(f[i+1], 10, 64)
	}
	// user nice system idle iowait irq softirq steal
	m := statMark{busy: v[0] + v[1] + v[2] + v[5] + v[6], steal: v[7]}
	m.total = m.busy + v[3] + v[4] + m.steal
	return m, true
}

func (m statMark) since() MachineCPU {
	n, ok := readStat()
	r := MachineCPU{Cores: runtime.NumCPU()}
	if !ok || n.total <= m.total {
		return r
	}
	t := float64(n.total - m.total)
	r.BusyCores = float64(n.busy-m.busy) / t * float64(r.Cores)
	r.StealCores = float64(n.steal-m.steal) / t * float64(r.Cores)
	return r
}

// GCReport is the garbage collector's work over a window.
type GCReport struct {
	Cycles       uint32  `json:"cycles"`         // GC cycles completed
	PauseTotalMS float64 `json:"pause_total_ms"` // stop-the-world pauses, summed
	// MaxPauseMS is the longest stop-the-world pause among the last 256.
	MaxPauseMS float64 `json:"max_pause_ms"`
	// CPUFraction is the GC's share of the CPU since the program started.
	CPUFraction float64 `json:"cpu_fraction_since_start"`
}

func gcMark() runtime.MemStats {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms
}

func gcSince(a runtime.MemStats) GCReport {
	b := gcMark()
	r := GCReport{Cycles: b.NumGC - a.NumGC, PauseTotalMS: float64(b.PauseTotalNs-a.PauseTotalNs) / 1e6,
		CPUFraction: b.GCCPUFraction}
	// Cycle k (from 1) paused PauseNs[(k+255)%256]; the window ran
	// cycles a.NumGC+1 .. b.NumGC, of which the last 256 are kept.
	for k := max(a.NumGC+1, b.NumGC-min(b.NumGC, 255)); k <= b.NumGC && k > a.NumGC; k++ {
		r.MaxPauseMS = max(r.MaxPauseMS, float64(b.PauseNs[(k+255)%256])/1e6)
	}
	return r
}
