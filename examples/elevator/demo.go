package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// runDemo starts the server and then a client as two processes of this
// program, on a free port, prints what both say, and stops the server
// when the client is done.
func runDemo(ctx context.Context, o options, stdout, stderr io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "elevator")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cert := filepath.Join(dir, "cert.pem")
	var mu sync.Mutex // one line at a time on the terminal
	lines := func(w io.Writer, prefix string) io.Writer { return &prefixWriter{mu: &mu, w: w, prefix: prefix} }

	srv := exec.Command(exe, "-server", "-addr", "127.0.0.1:0", "-cert", cert, "-duration", o.duration.String())
	srv.Stderr = lines(stderr, "server | ")
	out, err := srv.StdoutPipe()
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	stopped := make(chan error, 1)
	stop := func() error {
		srv.Process.Signal(os.Interrupt)
		select {
		case err := <-stopped:
			return err
		case <-time.After(5 * time.Second):
			srv.Process.Kill()
			return errors.New("the server did not stop on an interrupt")
		}
	}
	// The server's first line says where it listens.
	sc := bufio.NewScanner(out)
	var addr string
	if sc.Scan() {
		fmt.Sscanf(sc.Text(), "listening on %s", &addr)
		fmt.Fprintln(lines(stdout, "server | "), sc.Text())
	}
	go func() {
		w := lines(stdout, "server | ")
		for sc.Scan() {
			fmt.Fprintln(w, sc.Text())
		}
		stopped <- srv.Wait()
	}()
	if addr == "" {
		stop()
		return errors.New("the server did not say where it listens")
	}

	cl := exec.CommandContext(ctx, exe, "-client", "-addr", addr, "-cert", cert,
		"-projectiles", strconv.Itoa(o.projectiles), "-duration", o.duration.String())
	cl.Cancel = func() error { return cl.Process.Signal(os.Interrupt) }
	cl.WaitDelay = 5 * time.Second
	cl.Stdout, cl.Stderr = lines(stdout, "client | "), lines(stderr, "client | ")
	clientErr := cl.Run()
	if ctx.Err() != nil {
		clientErr = nil // the deadline or Ctrl-C: the client said what it saw
	}
	return errors.Join(clientErr, stop())
}

// prefixWriter writes whole lines, each with a prefix, under a shared lock.
type prefixWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		if _, err := fmt.Fprintf(p.w, "%s%s", p.prefix, p.buf[:i+1]); err != nil {
			return len(b), err
		}
		p.buf = p.buf[i+1:]
	}
}
