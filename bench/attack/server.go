package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/netclock/netclock/transport"
)

// serverStats is what the server process reports on each "stats" line.
type serverStats struct {
	RSS        int64                 `json:"rss_bytes"`
	HeapInuse  uint64                `json:"heap_inuse_bytes"`
	Goroutines int                   `json:"goroutines"`
	Server     transport.ServerStats `json:"server"`
}

// runServer is the server process: a transport.Server with the default
// limits (but for perSource, if not zero) on addr, with the certificate
// and key in dir. It prints "addr <host:port>", then answers each "stats"
// line on in with a JSON serverStats line, and each "now" line with the
// server clock in nanoseconds, until in ends.
func runServer(addr, dir string, perSource int, in io.Reader, out io.Writer) error {
	cert, err := tls.LoadX509KeyPair(dir+"/cert.pem", dir+"/key.pem")
	if err != nil {
		return err
	}
	srv, err := transport.Listen(addr, transport.ServerConfig{
		TLSConfig:           &tls.Config{Certificates: []tls.Certificate{cert}},
		MaxClientsPerSource: perSource,
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx)
	fmt.Fprintf(out, "addr %s\n", srv.Addr())
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		switch strings.TrimSpace(sc.Text()) {
		case "now": // the server clock, for the clients' true error
			fmt.Fprintf(out, "%d\n", int64(srv.SharedTime()))
			continue
		case "stats":
		default:
			continue
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b, _ := json.Marshal(serverStats{RSS: rssOf("self"), HeapInuse: ms.HeapInuse,
			Goroutines: runtime.NumGoroutine(), Server: srv.Stats()})
		fmt.Fprintf(out, "%s\n", b)
	}
	return sc.Err()
}

// rssOf returns the resident set size of process pid ("self" for this
// one) from /proc, 0 if unavailable.
func rssOf(pid string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/statm")
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
