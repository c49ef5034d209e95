package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
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
