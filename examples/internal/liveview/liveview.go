// Package liveview serves a netclock live view (transport's DebugHandler)
// over HTTP for the examples' -debug flag.
package liveview

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Path is where the live view is mounted; / redirects to it.
const Path = "/debug/netclock/"

// Serve serves the live view h over HTTP on addr ("host:port"; ":8080"
// listens on every interface, "localhost:8080" on loopback only; port 0
// picks one) until stop is called, and returns the page's URL. A server
// that fails after starting says so on errw.
func Serve(addr string, h http.Handler, errw io.Writer) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("-debug: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, h)
	mux.Handle("/{$}", http.RedirectHandler(Path, http.StatusFound))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(errw, "live view stopped:", err)
		}
	}()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + Path, func() { hs.Close(); <-done }, nil
}
