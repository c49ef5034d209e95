package main

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/plot/plotter"

	"github.com/netclock/netclock/bench/harness"
)

// TestStylesDistinct: no two systems share a colour, however many there
// are, nor a marker and dash pattern among the first 32.
func TestStylesDistinct(t *testing.T) {
	const n = 100
	colours := map[[4]uint32]int{}
	looks := map[string]int{}
	for i := range n {
		st := styleOf(i, "x")
		r, g, b, a := st.color.RGBA()
		if j, ok := colours[[4]uint32{r, g, b, a}]; ok {
			t.Errorf("systems %d and %d share colour %v", j, i, st.color)
		}
		colours[[4]uint32{r, g, b, a}] = i
		if i >= len(shapes)*len(dashes) {
			continue
		}
		look := fmt.Sprintf("%T %v", st.shape, st.dashes)
		if j, ok := looks[look]; ok {
			t.Errorf("systems %d and %d share marker and dashes %s", j, i, look)
		}
		looks[look] = i
	}
	if st := styleOf(0, "netclock"); st.width <= styleOf(1, "ngo").width {
		t.Error("netclock's line is not the boldest")
	}
}

func TestEnvelope(t *testing.T) {
	trace := []harness.TracePoint{{T: 0, ErrMS: 1}, {T: 0.5, ErrMS: -3}, {T: 1, ErrMS: 2}, {T: 1.9, ErrMS: 0}, {T: 2.2, ErrMS: 0.5}}
	want := plotter.XYs{{X: 0, Y: 3}, {X: 1, Y: 2}, {X: 2, Y: 0.5}, {X: 3, Y: 0.5}}
	if diff := cmp.Diff(want, envelope(trace, 1)); diff != "" {
		t.Errorf("envelope (-want +got):\n%s", diff)
	}
}

// TestSteadyRange: the range fits what follows the warm-up, not the
// start-up spike.
func TestSteadyRange(t *testing.T) {
	trace := []harness.TracePoint{{T: 0, ErrMS: 5000}, {T: 5, ErrMS: 800}}
	for s := 10.0; s < 100; s++ {
		trace = append(trace, harness.TracePoint{T: s, ErrMS: 0.5 + math.Mod(s, 3), BoundMS: 4})
	}
	res := []harness.Result{{System: "netclock", Trace: trace}}
	lo, hi := steadyRange([]plotter.XYs{envelope(trace, 1)}, res, 10)
	if !(lo <= 0.5 && lo >= 0.1 && hi >= 4 && hi <= 10) {
		t.Errorf("range [%g, %g] ms, want about [0.25, 8]", lo, hi)
	}
}

func TestBoundBand(t *testing.T) {
	trace := []harness.TracePoint{{T: 0}, {T: 1, BoundMS: 2}, {T: 2, BoundMS: 3}, {T: 3}, {T: 4, BoundMS: 1}}
	band, tops := boundBand(trace, 0.1)
	if band == nil || len(tops) != 2 {
		t.Fatalf("band %v and %d bound lines, want a band and 2 lines (one gap)", band, len(tops))
	}
	if b, tops := boundBand([]harness.TracePoint{{T: 0, ErrMS: 1}}, 0.1); b != nil || tops != nil {
		t.Error("a band for a system without a bound")
	}
}

func TestStepTicks(t *testing.T) {
	var got []float64
	for _, tk := range (stepTicks{}).Ticks(0, 600) {
		got = append(got, tk.Value)
	}
	want := []float64{0, 100, 200, 300, 400, 500, 600}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ticks (-want +got):\n%s", diff)
	}
}

func TestMS(t *testing.T) {
	for v, want := range map[float64]string{1749.6: "1750 ms", 17.24: "17.2 ms", 1.742: "1.74 ms", 0.0863: "0.0863 ms"} {
		if got := ms(v); got != want {
			t.Errorf("ms(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestWritePlot: -plot writes a PNG of the promised size and says where.
func TestWritePlot(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		file string
	}{
		{[]string{"-profile", "fiber", "-duration", "20s", "-warmup", "5s"}, "one.png"},
		{[]string{"-profile", "all", "-duration", "3s", "-warmup", "1s"}, "all.png"},
	} {
		file := filepath.Join(dir, tc.file)
		var out bytes.Buffer
		if err := run(append(tc.args, "-plot", file), &out); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(out.Bytes(), []byte("wrote "+file+"\n")) {
			t.Errorf("%s: output does not end with the path:\n%s", tc.file, out.String())
		}
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != 14*96 || cfg.Height != 6*96 {
			t.Errorf("%s: %dx%d, %v; want a 1344x576 PNG", tc.file, cfg.Width, cfg.Height, err)
		}
	}
	if err := run([]string{"-profile", "lan", "-duration", "20s", "-plot", filepath.Join(dir, "no-such-dir", "x.png")}, &bytes.Buffer{}); err == nil {
		t.Error("writing into a missing directory did not fail")
	}
}
