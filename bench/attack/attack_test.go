package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"testing"
	"time"
)

// TestMain lets the test binary be the server process the scenarios start
// (os.Executable with -role server).
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "-role" && os.Args[2] == "server" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestScenarios runs the scenarios at a small scale against a server
// process and checks what can be checked whatever the machine's load: the
// flood is cut at the per-source limit exactly, every hostile client
// connected, every client of the killed server was told by a stateless
// reset.
func TestScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	dir := t.TempDir()
	dev, err := writeCert(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		run  func(context.Context, options, string, devCert) error
		want []string // regexps the report must match
	}{
		{"partial", partial, []string{`attack: 3 hostile clients \(0 failed to connect\)`, `2/2 synchronized`}},
		{"flood", flood, []string{`flood: 40 attempts from one socket in .*: 32 admitted, 8 refused \(ErrRefused\), 0 other errors`}},
		{"restart", restart, []string{`connections ended by a stateless reset: 2 of 2`, `after: 2/2 synchronized`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			o := options{good: 2, hostile: 3, hold: time.Second, floodConns: 40, floodFor: time.Second,
				settle: time.Second, out: &out}
			if err := tc.run(t.Context(), o, dir, dev); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			for _, w := range tc.want {
				if !regexp.MustCompile(w).MatchString(out.String()) {
					t.Errorf("report lacks %q:\n%s", w, out.String())
				}
			}
			t.Log("\n" + out.String())
		})
	}
}
