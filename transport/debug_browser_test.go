package transport

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// browserEnv makes a missing Chromium a failure instead of a skip (CI
// sets it).
const browserEnv = "NETCLOCK_BROWSER_TEST"

// chromium returns the path of a headless-capable Chromium, skipping the
// test if there is none (failing it if browserEnv is 1).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(browserEnv) == "1" {
		t.Fatalf("%s=1 but no chromium in PATH (apt-get install chromium)", browserEnv)
	}
	t.Skipf("no chromium in PATH; install it (apt-get install chromium) or set %s=1 to require it", browserEnv)
	return ""
}

// dumpDOM loads url in headless Chromium, lets the page run for a few
// seconds of virtual time (its polls are real requests), and returns the
// DOM it built.
func dumpDOM(t *testing.T, browser, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--disable-gpu", "--no-sandbox",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=3000", "--dump-dom", url)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("chromium: %v\n%s", err, stderr)
	}
	return string(out)
}

// row is what the page's table shows of a client.
type row struct {
	quality, state string
	rtt, bound     float64
	pings          int64
}

var (
	rowRE  = regexp.MustCompile(`(?s)<tr data-id="(\d+)">(.*?)</tr>`)
	cellRE = regexp.MustCompile(`<td data-k="(\w+)"[^>]*>(?:<span[^>]*></span>)?([^<]*)</td>`)
	nowRE  = regexp.MustCompile(`<body [^>]*data-now="([0-9.]+)"`)
)

// parseRows reads the client rows and the page's clock out of a DOM dump.
func parseRows(t *testing.T, dom string) (map[uint64]row, float64) {
	t.Helper()
	rows := map[uint64]row{}
	for _, m := range rowRE.FindAllStringSubmatch(dom, -1) {
		id, _ := strconv.ParseUint(m[1], 10, 64)
		cells := map[string]string{}
		for _, c := range cellRE.FindAllStringSubmatch(m[2], -1) {
			cells[c[1]] = c[2]
		}
		var r row
		var err error
		r.quality, r.state = cells["quality"], cells["state"]
		if r.rtt, err = strconv.ParseFloat(cells["rtt"], 64); err != nil {
			t.Fatalf("client %d: rtt cell %q", id, cells["rtt"])
		}
		if r.bound, err = strconv.ParseFloat(cells["bound"], 64); err != nil {
			t.Fatalf("client %d: bound cell %q", id, cells["bound"])
		}
		if r.pings, err = strconv.ParseInt(cells["pings"], 10, 64); err != nil {
			t.Fatalf("client %d: pings cell %q", id, cells["pings"])
		}
		rows[id] = r
	}
	var now float64
	if m := nowRE.FindStringSubmatch(dom); m != nil {
		now, _ = strconv.ParseFloat(m[1], 64)
	}
	return rows, now
}

// TestDebugPageInBrowser loads the server's live view in headless Chromium
// twice, with three clients pinging in between, and checks the page lists
// them with values that moved.
func TestDebugPageInBrowser(t *testing.T) {
	browser := chromium(t)
	srv := startServer(t, ServerConfig{TickRate: 60})
	web := httptest.NewServer(srv.DebugHandler())
	defer web.Close()
	for range 3 {
		c, err := dialTest(t, srv, ClientConfig{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = c.WaitSynced(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "every client's report", func() bool {
		for _, ci := range srv.Clients() {
			if ci.Report == nil || !ci.Report.Synchronized {
				return false
			}
		}
		return true
	})

	first, now1 := parseRows(t, dumpDOM(t, browser, web.URL+"/"))
	if len(first) != 3 {
		t.Fatalf("first load lists %d clients, want 3: %v", len(first), first)
	}
	for id, r := range first {
		if r.state == "no report" || r.quality == "" || r.quality == "unknown" || r.rtt <= 0 {
			t.Errorf("first load, client %d: %+v: want its report shown", id, r)
		}
	}
	// Progress of the protocol, not of a timer: every client has had 20
	// more pings answered (2 s at 10 Hz) and so new samples and reports.
	eventually(t, 30*time.Second, "20 more pings from every client", func() bool {
		for _, ci := range srv.Clients() {
			if ci.Pings < first[uint64(ci.ID)].pings+20 {
				return false
			}
		}
		return true
	})
	second, now2 := parseRows(t, dumpDOM(t, browser, web.URL+"/"))
	if len(second) != 3 {
		t.Fatalf("second load lists %d clients, want 3", len(second))
	}
	for id, r := range second {
		f, ok := first[id]
		switch {
		case !ok:
			t.Errorf("client %d is new in the second load", id)
		case r.pings < f.pings+20:
			t.Errorf("client %d: pings %d then %d: the page did not follow", id, f.pings, r.pings)
		}
	}
	if now2 <= now1 {
		t.Errorf("page clock %v then %v: want it to advance", now1, now2)
	}
	t.Logf("first load %v (server clock %.1f s), second %v (%.1f s)", first, now1, second, now2)
}
