package liveview_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/netclock/netclock/examples/internal/liveview"
)

func ExampleServe() {
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "the live view") })
	url, stop, err := liveview.Serve("127.0.0.1:0", page, os.Stderr)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	resp, err := http.Get(url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(strings.HasSuffix(url, liveview.Path), string(b))
	// Output: true the live view
}
