package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/internal/wire"
	"github.com/netclock/netclock/transport"
)

// goodClients dials n well-behaved clients with Reconnect, waits for them
// to sync, and runs their driver loops until ctx ends.
func goodClients(ctx context.Context, n int, addr string, dev devCert, log *slog.Logger) ([]*transport.Client, error) {
	var cs []*transport.Client
	for i := range n {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		cfg := transport.ClientConfig{TLSConfig: dev.ClientTLS(), Reconnect: true}
		if log != nil {
			cfg.Logger = log.With("client", i)
		}
		c, err := transport.Dial(dctx, addr, cfg)
		cancel()
		if err != nil {
			closeAll(cs)
			return nil, fmt.Errorf("good client %d: %w", i, err)
		}
		cs = append(cs, c)
	}
	for i, c := range cs {
		select {
		case <-c.Synced():
		case <-time.After(10 * time.Second):
			closeAll(cs)
			return nil, fmt.Errorf("good client %d did not sync", i)
		}
		tallyResets(c, i, log)
		go c.Run(ctx)
	}
	return cs, nil
}

func closeAll(cs []*transport.Client) {
	for _, c := range cs {
		c.Close()
	}
}

// goodReport summarizes the good clients now.
func goodReport(cs []*transport.Client) string {
	var rtt, bound []time.Duration
	var synced, resets, reconnects, stalled int64
	for _, c := range cs {
		st := c.Stats()
		rtt, bound = append(rtt, st.RTT), append(bound, st.ErrorBound)
		if st.Synchronized {
			synced++
		}
		resets += st.Resets
		reconnects += st.Reconnects
		stalled += st.Stalled
	}
	return fmt.Sprintf("%d/%d synchronized, RTT median %v max %v, error bound median %v max %v, resets %d (%s), reconnects %d, %d pongs set aside as stalled",
		synced, len(cs), median(rtt), slices.Max(rtt), median(bound), slices.Max(bound), resets, resetSummary(cs), reconnects,
		stalled)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// serverWithGood starts a server process and o.good well-behaved clients
// of it; stop closes the clients, then the server.
func serverWithGood(ctx context.Context, o options, dir string, dev devCert) (p *serverProc, good []*transport.Client, stop func(), err error) {
	p, err = startServer("127.0.0.1:0", dir, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	good, err = goodClients(cctx, o.good, p.addr, dev, o.log)
	if err != nil {
		cancel()
		p.close()
		return nil, nil, nil, err
	}
	return p, good, func() {
		closeAll(good)
		cancel()
		p.close()
	}, nil
}

// partial replays the partial-frame attack: hostile clients that hold all
// the streams the server allows, filled.
func partial(ctx context.Context, o options, dir string, dev devCert) error {
	p, good, stop, err := serverWithGood(ctx, o, dir, dev)
	if err != nil {
		return err
	}
	defer stop()
	base, baseErr, err := p.observe(good, o.hold)
	if err != nil {
		return err
	}
	b := base[len(base)-1]
	fmt.Fprintf(o.out, "baseline, %d good clients for %v: server RSS %s, heap %s, %d goroutines\n",
		o.good, o.hold, mib(b.RSS), mib(int64(b.HeapInuse)), b.Goroutines)
	fmt.Fprintf(o.out, "  good clients: %s\n", goodReport(good))
	fmt.Fprintf(o.out, "  good clients: %v\n", baseErr)

	end := time.Now().Add(o.hold)
	var wg sync.WaitGroup
	var connected, failed, stopped atomic.Int64
	for i := range o.hostile {
		wg.Go(func() {
			n, err := hostile(ctx, i, p.addr, dev, end, o.extraStream)
			stopped.Add(n)
			if err != nil {
				failed.Add(1)
				fmt.Fprintf(o.out, "  hostile %d: %v\n", i, err)
				return
			}
			connected.Add(1)
		})
	}
	during, duringErr, err := p.observe(good, o.hold)
	if err != nil {
		return err
	}
	wg.Wait()
	rss, gr := peak(during)
	last := during[len(during)-1]
	fmt.Fprintf(o.out, "attack: %d hostile clients (%d failed to connect) for %v; the server stopped %d stalled frames\n",
		o.hostile, failed.Load(), o.hold, stopped.Load())
	fmt.Fprintf(o.out, "  server peak RSS %s: growth %s (%s per hostile client), peak %d goroutines; %d connections, %d malformed\n",
		mib(rss), mib(rss-b.RSS), fmt.Sprintf("%.0f KiB", float64(rss-b.RSS)/1024/float64(o.hostile)), gr,
		last.Server.Connections, last.Server.Malformed)
	fmt.Fprintf(o.out, "  good clients at the end: %s\n", goodReport(good))
	fmt.Fprintf(o.out, "  good clients during: %v (%.2f× the baseline p99)\n", duringErr,
		float64(quantile(duringErr.abs, 0.99))/float64(max(quantile(baseErr.abs, 0.99), 1)))
	after, err := p.watch(o.settle, time.Second)
	if err != nil {
		return err
	}
	a := after[len(after)-1]
	fmt.Fprintf(o.out, "%v after: server RSS %s, heap %s, %d goroutines, %d connections\n",
		o.settle, mib(a.RSS), mib(int64(a.HeapInuse)), a.Goroutines, a.Server.Connections)
	return nil
}

// hostile is one hostile client, from its own loopback address 127.0.1.x:
// junk after its hello, a 64 KiB message frame it never finishes, reopened
// each time the server stops it, and with extraStream a bidirectional
// stream the protocol does not have, filled as far as flow control lets
// it. It holds on until end and returns how many of
// its frames the server stopped.
func hostile(ctx context.Context, i int, addr string, dev devCert, end time.Time, extraStream bool) (int64, error) {
	raddr, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		return 0, err
	}
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 1, byte(1+i%250))})
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	tr := &quic.Transport{Conn: conn}
	defer tr.Close()
	tlsConf := dev.ClientTLS()
	tlsConf.NextProtos = []string{transport.ALPN}
	ctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	qc, err := tr.Dial(ctx, raddr, tlsConf, &quic.Config{EnableDatagrams: true, KeepAlivePeriod: 2 * time.Second})
	if err != nil {
		return 0, err
	}
	defer qc.CloseWithError(0, "")
	junk := bytes.Repeat([]byte{0xa5}, 16<<10)

	hello, err := qc.OpenStreamSync(ctx)
	if err != nil {
		return 0, err
	}
	hello.SetDeadline(end)
	// The server stops the stream's sending side right after the hello:
	// a late return from this write may already report it.
	hello.Write(wire.AppendClientHello(nil, wire.ClientHello{}))
	var sh [wire.ServerHelloLen]byte
	if _, err := io.ReadFull(hello, sh[:]); err != nil {
		return 0, fmt.Errorf("server hello: %w", err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	fill := func(w interface{ Write([]byte) (int, error) }) {
		for range 64 { // 1 MiB at most; flow control or a stop ends it sooner
			if _, err := w.Write(junk); err != nil {
				return
			}
		}
	}
	wg.Go(func() { fill(hello) })
	if extraStream {
		// The server closes the connection at once (a stream the
		// protocol does not have): the attack then costs it nothing.
		if extra, err := qc.OpenStreamSync(ctx); err == nil {
			extra.SetWriteDeadline(end)
			wg.Go(func() { fill(extra) })
		}
	}
	var stopped int64
	for time.Now().Before(end) {
		u, err := qc.OpenUniStreamSync(ctx)
		if err != nil {
			break
		}
		u.SetWriteDeadline(end)
		frame := binary.BigEndian.AppendUint32(nil, wire.MaxMessageFrameLen)
		frame = append(frame, bytes.Repeat([]byte{0}, 60<<10)...)
		if _, err := u.Write(frame); err != nil {
			break
		}
		select {
		case <-u.Context().Done():
			var se *quic.StreamError
			if errors.As(context.Cause(u.Context()), &se) && se.Remote {
				stopped++
			}
		case <-ctx.Done():
		}
	}
	return stopped, nil
}

// flood replays the connection flood against a server with good clients:
// many connections from one UDP socket (another address than theirs), each
// held if admitted.
func flood(ctx context.Context, o options, dir string, dev devCert) error {
	p, good, stop, err := serverWithGood(ctx, o, dir, dev)
	if err != nil {
		return err
	}
	defer stop()
	base, err := p.watch(3*time.Second, time.Second)
	if err != nil {
		return err
	}
	b := base[len(base)-1]
	fmt.Fprintf(o.out, "baseline, %d good clients: server RSS %s, heap %s, %d goroutines\n",
		o.good, mib(b.RSS), mib(int64(b.HeapInuse)), b.Goroutines)

	raddr, err := net.ResolveUDPAddr("udp4", p.addr)
	if err != nil {
		return err
	}
	// The flood's own address: the good clients are on 127.0.0.1.
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	if err != nil {
		return err
	}
	defer conn.Close()
	tr := &quic.Transport{Conn: conn}
	defer tr.Close()
	tlsConf := dev.ClientTLS()
	tlsConf.NextProtos = []string{transport.ALPN}

	var mu sync.Mutex
	var held []*quic.Conn
	var admitted, refused, other atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	interval := o.floodFor / time.Duration(max(o.floodConns, 1))
	samples := make(chan []serverStats, 1)
	go func() {
		s, _ := p.watch(o.floodFor, time.Second)
		samples <- s
	}()
	start := time.Now()
	for i := range o.floodConns {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			c, err := tr.Dial(dctx, raddr, tlsConf, &quic.Config{EnableDatagrams: true, KeepAlivePeriod: 2 * time.Second})
			if err != nil {
				var te *quic.TransportError
				if errors.As(err, &te) && te.Remote && te.ErrorCode == quic.ConnectionRefused {
					refused.Add(1)
				} else {
					other.Add(1)
				}
				return
			}
			// Say hello, so the server holds the connection.
			if str, err := c.OpenStreamSync(dctx); err == nil {
				str.Write(wire.AppendClientHello(nil, wire.ClientHello{}))
			}
			admitted.Add(1)
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		})
	}
	wg.Wait()
	during := <-samples
	rss, gr := peak(during)
	st, err := p.stats()
	if err != nil {
		return err
	}
	fmt.Fprintf(o.out, "flood: %d attempts from one socket in %v: %d admitted, %d refused (ErrRefused), %d other errors\n",
		o.floodConns, time.Since(start).Round(time.Millisecond), admitted.Load(), refused.Load(), other.Load())
	fmt.Fprintf(o.out, "  server: peak RSS %s, peak %d goroutines; now %d connections, %d clients, %d refusals counted, %d Retries\n",
		mib(rss), gr, st.Server.Connections, st.Server.Clients, st.Server.AdmissionRefused, st.Server.AddressValidations)
	fmt.Fprintf(o.out, "  good clients: %s\n", goodReport(good))
	mu.Lock()
	for _, c := range held {
		c.CloseWithError(0, "")
	}
	mu.Unlock()
	after, err := p.watch(o.settle, time.Second)
	if err != nil {
		return err
	}
	for i, at := range []int{1, 5, 10, len(after) - 1} {
		if at < len(after) && (i < 3 || at > 10) {
			a := after[at]
			fmt.Fprintf(o.out, "  %2ds after closing: RSS %s (%+.0f%% of baseline), heap %s, %d goroutines, %d connections\n",
				at, mib(a.RSS), 100*float64(a.RSS-b.RSS)/float64(b.RSS), mib(int64(a.HeapInuse)), a.Goroutines,
				a.Server.Connections)
		}
	}
	return nil
}

// restart kills the server (SIGKILL) under its clients and starts another
// on the same port with the same certificate, so the same stateless reset
// key: it reports how soon each client says it is not synchronized, and
// how soon it is reinitialized on the new server.
func restart(ctx context.Context, o options, dir string, dev devCert) error {
	p, err := startServer("127.0.0.1:0", dir, 0)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := min(o.good, 10)
	cs, err := goodClients(cctx, n, p.addr, dev, o.log)
	if err != nil {
		p.close()
		return err
	}
	defer closeAll(cs)
	time.Sleep(2 * time.Second)
	fmt.Fprintf(o.out, "before: %s\n", goodReport(cs))
	killed := time.Now()
	p.kill()
	p2, err := startServer(p.addr, dir, 0)
	if err != nil {
		return err
	}
	defer p2.close()
	restarted := time.Now()
	unsynced := make([]time.Duration, n) // from the restart
	reinit := make([]time.Duration, n)
	for time.Since(restarted) < 10*time.Second {
		done := true
		for i, c := range cs {
			st := c.Stats()
			if unsynced[i] == 0 && !st.Synchronized {
				unsynced[i] = time.Since(restarted)
			}
			if reinit[i] == 0 && st.Reinitializations > 0 {
				reinit[i] = time.Since(restarted)
			}
			done = done && unsynced[i] != 0 && reinit[i] != 0
		}
		if done {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	fmt.Fprintf(o.out, "server killed; the new process listened %v later\n", restarted.Sub(killed).Round(time.Millisecond))
	fmt.Fprintf(o.out, "  not synchronized, after the restart: max %v (per client %v)\n", slices.Max(unsynced), unsynced)
	fmt.Fprintf(o.out, "  reinitialized, after the restart:    max %v (per client %v)\n", slices.Max(reinit), reinit)
	var resets int64
	for _, c := range cs {
		resets += c.Stats().ServerResets
	}
	fmt.Fprintf(o.out, "  connections ended by a stateless reset: %d of %d\n", resets, n)
	time.Sleep(time.Second)
	fmt.Fprintf(o.out, "after: %s\n", goodReport(cs))
	return nil
}

// pause stops the server process for -pause (SIGSTOP, as a GC pause, a VM
// hiccup or a debugger would) under its good clients, and reports what
// the clients said during the pause and in the -settle that follows.
func pause(ctx context.Context, o options, dir string, dev devCert) error {
	p, good, stop, err := serverWithGood(ctx, o, dir, dev)
	if err != nil {
		return err
	}
	defer stop()
	_, baseErr, err := p.observe(good, 5*time.Second)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.out, "baseline: %s\n  %v\n", goodReport(good), baseErr)
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	time.Sleep(o.pause)
	fmt.Fprintf(o.out, "at the end of a %v pause: %s\n", o.pause, goodReport(good))
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		return err
	}
	_, afterErr, err := p.observe(good, o.settle)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.out, "%v after the resume: %s\n  %v\n", o.settle, goodReport(good), afterErr)
	return nil
}
