package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestServeDebug(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "live "+r.URL.Path) })
	url, stop, err := serveDebug("127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, debugPath) {
		t.Errorf("url %q", url)
	}
	root := strings.TrimSuffix(url, debugPath) + "/"
	resp, err := http.Get(root) // redirected to the page
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got, want := string(b), "live "+debugPath; got != want {
		t.Errorf("GET / = %q, want %q", got, want)
	}
	if _, _, err := serveDebug("127.0.0.1:bad", h); err == nil {
		t.Error("a bad address was accepted")
	}
}
