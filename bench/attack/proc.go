package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/netclock/netclock/transport"
)

type devCert = transport.DevCert

func newDevCert() (devCert, error) { return transport.DevCertificate() }

// serverProc is a server process this driver started.
type serverProc struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	addr string
}

// startServer starts this binary as a server on addr with the certificate
// in dir.
func startServer(addr, dir string, perSource int) (*serverProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-role", "server", "-addr", addr, "-dir", dir,
		"-per-source", strconv.Itoa(perSource))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &serverProc{cmd: cmd, in: in, out: bufio.NewScanner(outPipe)}
	if !p.out.Scan() {
		p.kill()
		return nil, fmt.Errorf("server process said nothing: %v", p.out.Err())
	}
	a, ok := strings.CutPrefix(p.out.Text(), "addr ")
	if !ok {
		p.kill()
		return nil, fmt.Errorf("server process said %q", p.out.Text())
	}
	p.addr = a
	return p, nil
}

// stats asks the server process for its numbers.
func (p *serverProc) stats() (serverStats, error) {
	var st serverStats
	if _, err := io.WriteString(p.in, "stats\n"); err != nil {
		return st, err
	}
	if !p.out.Scan() {
		return st, fmt.Errorf("server process gone: %v", p.out.Err())
	}
	return st, json.Unmarshal(p.out.Bytes(), &st)
}

// close ends the server process gracefully.
func (p *serverProc) close() error {
	p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		return <-done
	}
}

// kill ends the server process at once (SIGKILL): it tells no client.
func (p *serverProc) kill() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

// watch samples the server's stats every interval for d and returns the
// samples.
func (p *serverProc) watch(d, interval time.Duration) ([]serverStats, error) {
	var out []serverStats
	end := time.Now().Add(d)
	for {
		st, err := p.stats()
		if err != nil {
			return out, err
		}
		out = append(out, st)
		if time.Now().After(end) {
			return out, nil
		}
		time.Sleep(interval)
	}
}

// peak returns the largest RSS and goroutine count of samples.
func peak(samples []serverStats) (rss int64, goroutines int) {
	for _, s := range samples {
		rss, goroutines = max(rss, s.RSS), max(goroutines, s.Goroutines)
	}
	return rss, goroutines
}

// trueError returns c's shared time minus the server's clock at the same
// instant: the server reads its clock between two readings of c's, whose
// midpoint stands for it; the second result is half their distance, the
// uncertainty.
func (p *serverProc) trueError(c *transport.Client) (time.Duration, time.Duration, error) {
	s1, ok1 := c.SharedTime()
	if _, err := io.WriteString(p.in, "now\n"); err != nil {
		return 0, 0, err
	}
	if !p.out.Scan() {
		return 0, 0, fmt.Errorf("server process gone: %v", p.out.Err())
	}
	s2, ok2 := c.SharedTime()
	now, err := strconv.ParseInt(p.out.Text(), 10, 64)
	if err != nil {
		return 0, 0, err
	}
	if !ok1 || !ok2 {
		return 0, 0, errNotSynced
	}
	return s1 + (s2-s1)/2 - time.Duration(now), (s2 - s1) / 2, nil
}

var errNotSynced = errors.New("client not synchronized")

// errorSampler collects the good clients' |true error| while an attack
// runs.
type errorSampler struct {
	abs      []time.Duration
	window   []time.Duration
	unsynced int
	covered  int // samples whose |error| is within ErrorBound (plus the reading window)
}

// sample reads every client's true error once.
func (e *errorSampler) sample(p *serverProc, cs []*transport.Client) error {
	for _, c := range cs {
		// Of three readings, the tightest: a reading the scheduler
		// stretched says little about the clock.
		var d, w time.Duration
		var err error
		for i := range 3 {
			di, wi, erri := p.trueError(c)
			if i == 0 || erri != nil || wi < w {
				d, w, err = di, wi, erri
			}
			if erri != nil {
				break
			}
		}
		if errors.Is(err, errNotSynced) {
			e.unsynced++
			continue
		}
		if err != nil {
			return err
		}
		e.abs, e.window = append(e.abs, max(d, -d)), append(e.window, w)
		if max(d, -d) <= c.Estimate().ErrorBound+w {
			e.covered++
		}
	}
	return nil
}

// quantile returns the q-quantile of ds (0 for none).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func (e *errorSampler) String() string {
	return fmt.Sprintf("|true error| p50 %v p99 %v max %v over %d samples (reading window p50 %v), bound covers %.1f%%, %d not synchronized",
		quantile(e.abs, 0.5), quantile(e.abs, 0.99), quantile(e.abs, 1), len(e.abs), quantile(e.window, 0.5),
		100*float64(e.covered)/float64(max(len(e.abs), 1)), e.unsynced)
}

// observe samples the good clients' true error every 200 ms and the
// server's stats every second, for d.
func (p *serverProc) observe(cs []*transport.Client, d time.Duration) ([]serverStats, *errorSampler, error) {
	var stats []serverStats
	errs := &errorSampler{}
	end := time.Now().Add(d)
	for i := 0; ; i++ {
		if err := errs.sample(p, cs); err != nil {
			return stats, errs, err
		}
		if i%5 == 0 || !time.Now().Before(end) {
			st, err := p.stats()
			if err != nil {
				return stats, errs, err
			}
			stats = append(stats, st)
		}
		if !time.Now().Before(end) {
			return stats, errs, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
}
