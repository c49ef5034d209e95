package liveview

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestServe(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "live "+r.URL.Path) })
	url, stop, err := Serve("127.0.0.1:0", h, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, Path) {
		t.Errorf("url %q", url)
	}
	root := strings.TrimSuffix(url, Path) + "/"
	resp, err := http.Get(root) // redirected to the page
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got, want := string(b), "live "+Path; got != want {
		t.Errorf("GET / = %q, want %q", got, want)
	}
	if _, _, err := Serve("127.0.0.1:bad", h, io.Discard); err == nil {
		t.Error("a bad address was accepted")
	}
}
