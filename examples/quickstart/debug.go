package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// debugPath is where the live view is mounted.
const debugPath = "/debug/netclock/"

// serveDebug serves the live view h over HTTP on addr ("host:port"; ":8080"
// listens on every interface, "localhost:8080" on loopback only; port 0
// picks one) until stop is called. It returns the page's URL.
func serveDebug(addr string, h http.Handler) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("-debug: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(debugPath, h)
	mux.Handle("/{$}", http.RedirectHandler(debugPath, http.StatusFound))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Println("live view stopped:", err)
		}
	}()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + debugPath, func() { hs.Close(); <-done }, nil
}
