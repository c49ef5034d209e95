package main

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/netclock/netclock/bench/harness"
)

// writePlot draws one profile's error over time, or several profiles' p99
// side by side, into file (PNG) and says where it wrote it.
func writePlot(out io.Writer, file string, reps []harness.Report, warmup time.Duration) error {
	if warmup == 0 {
		warmup = 10 * time.Second // what harness.Run takes for 0
	}
	var err error
	if len(reps) == 1 {
		err = plotErrors(file, reps[0], warmup)
	} else {
		err = plotP99(file, reps, warmup)
	}
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	fmt.Fprintf(out, "wrote %s\n", file)
	return nil
}

// palette gives every system its own colour: Okabe and Ito's colour-blind
// safe set without its yellow (too faint on white), then Tol's wine, olive
// and teal, and a grey. Past its end, colours are generated: a chart never
// shows two systems in one colour.
var palette = []color.Color{
	color.RGBA{0x00, 0x00, 0x00, 0xff}, // black: netclock, first in harness.Systems
	color.RGBA{0xe6, 0x9f, 0x00, 0xff}, // orange
	color.RGBA{0x56, 0xb4, 0xe9, 0xff}, // sky blue
	color.RGBA{0x00, 0x9e, 0x73, 0xff}, // bluish green
	color.RGBA{0x00, 0x72, 0xb2, 0xff}, // blue
	color.RGBA{0xd5, 0x5e, 0x00, 0xff}, // vermillion
	color.RGBA{0xcc, 0x79, 0xa7, 0xff}, // reddish purple
	color.RGBA{0x88, 0x22, 0x55, 0xff}, // wine
	color.RGBA{0x99, 0x99, 0x33, 0xff}, // olive
	color.RGBA{0x44, 0xaa, 0x99, 0xff}, // teal
	color.RGBA{0x77, 0x77, 0x77, 0xff}, // grey
}

// shapes are the markers, in order; past the end they repeat with another
// dash pattern, so the pair (shape, dashes) is never repeated either.
var shapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.RingGlyph{},
	draw.PyramidGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
}

var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(2)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}

// style is how one system is drawn, the same in every chart.
type style struct {
	color  color.Color
	shape  draw.GlyphDrawer
	dashes []vg.Length
	width  vg.Length
	radius vg.Length
}

func styleOf(i int, system string) style {
	s := style{shape: shapes[i%len(shapes)], dashes: dashes[i/len(shapes)%len(dashes)],
		width: vg.Points(0.8), radius: vg.Points(3)}
	if i < len(palette) {
		s.color = palette[i]
	} else {
		s.color = generated(i - len(palette))
	}
	if system == "netclock" {
		s.width, s.radius = vg.Points(2), vg.Points(4)
	}
	return s
}

// generated returns the i-th extra colour: hues a golden angle apart, at
// two alternating lightnesses.
func generated(i int) color.Color {
	h := math.Mod(float64(i)*137.508+20, 360)
	l := 0.40
	if i%2 == 1 {
		l = 0.55
	}
	return hsl(h, 0.65, l)
}

func hsl(h, s, l float64) color.Color {
	c := (1 - math.Abs(2*l-1)) * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	var r, g, b float64
	switch {
	case h < 60:
		r, g = c, x
	case h < 120:
		r, g = x, c
	case h < 180:
		g, b = c, x
	case h < 240:
		g, b = x, c
	case h < 300:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := l - c/2
	u8 := func(v float64) uint8 { return uint8(math.Round(255 * (v + m))) }
	return color.RGBA{u8(r), u8(g), u8(b), 0xff}
}

var (
	bandColor   = color.NRGBA{0x00, 0x00, 0x00, 0x1c} // netclock's bound
	warmupColor = color.NRGBA{0xf0, 0xc0, 0x60, 0x40}
)

// minShownMS is the smallest |error| a log axis shows: 100 ns, below what
// any system holds for long but above exact zeros.
const minShownMS = 1e-4

// windowsPerRun is how many windows plotErrors splits a run into: each
// system's line is its largest |error| in each window. The raw trace
// crosses zero now and then, and every crossing is a spike down a log axis
// that says nothing; eight such lines hide one another.
const windowsPerRun = 200

// plotErrors draws every system's largest |error| per window over time on a
// log scale, with netclock's error bound as a band and the warm-up marked.
// The y-range fits the errors after the warm-up: the start-up spike runs off
// the top rather than squeezing the rest.
func plotErrors(file string, rep harness.Report, warmup time.Duration) error {
	window := rep.DurationS / windowsPerRun
	w := warmup.Seconds()
	lines := make([]plotter.XYs, len(rep.Results))
	for i, r := range rep.Results {
		if len(r.Trace) == 0 {
			return fmt.Errorf("system %s has no trace", r.System)
		}
		lines[i] = envelope(r.Trace, window)
	}
	ylo, yhi := steadyRange(lines, rep.Results, w)

	p := plot.New()
	p.Title.Text = fmt.Sprintf("|shared time − true server time|, profile %s (seed %d, %s simulated)",
		rep.Profile, rep.Seed, seconds(rep.DurationS))
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = "simulated time (s)"
	p.Y.Label.Text = fmt.Sprintf("largest |error| in each %s (ms, log scale)", seconds(window))
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())

	leg := newLegend()
	if w > 0 {
		shade, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: ylo}, {X: w, Y: ylo}, {X: w, Y: yhi}, {X: 0, Y: yhi}})
		if err != nil {
			return err
		}
		shade.Color, shade.LineStyle.Width = warmupColor, 0
		edge, err := plotter.NewLine(plotter.XYs{{X: w, Y: ylo}, {X: w, Y: yhi}})
		if err != nil {
			return err
		}
		edge.Color, edge.Width, edge.Dashes = color.Gray{0x60}, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}
		label, err := plotter.NewLabels(plotter.XYLabels{XYs: []plotter.XY{{X: w, Y: yhi}}, Labels: []string{" warm-up ends"}})
		if err != nil {
			return err
		}
		label.TextStyle[0].YAlign = draw.YTop
		label.TextStyle[0].Color = color.Gray{0x40}
		p.Add(shade, edge, label)
		leg.Add(fmt.Sprintf("warm-up: the first %s, not in the statistics", seconds(w)), shade, edge)
	}

	order := make([]int, len(rep.Results)) // legend order: best p99 first
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(rep.Results[a].SharedErrorMS.P99, rep.Results[b].SharedErrorMS.P99)
	})

	type drawn struct {
		line  *plotter.Line
		marks *plotter.Scatter
	}
	all := make([]drawn, len(rep.Results))
	var bands []plot.Plotter
	var bandLegend []func()
	for i, r := range rep.Results {
		st := styleOf(i, r.System)
		l, err := plotter.NewLine(lines[i])
		if err != nil {
			return err
		}
		l.Color, l.Width, l.Dashes, l.StepStyle = st.color, st.width, st.dashes, plotter.PostStep
		m, err := plotter.NewScatter(markers(lines[i], i, len(rep.Results), window))
		if err != nil {
			return err
		}
		m.Color, m.Shape, m.Radius = st.color, st.shape, st.radius
		all[i] = drawn{line: l, marks: m}
		if band, tops := boundBand(r.Trace, ylo); band != nil {
			band.Color, band.LineStyle.Width = bandColor, 0
			bands = append(bands, band)
			for _, top := range tops {
				top.Color, top.Width, top.Dashes = st.color, vg.Points(0.6), []vg.Length{vg.Points(2), vg.Points(2)}
				bands = append(bands, top)
			}
			name := r.System
			bandLegend = append(bandLegend, func() {
				leg.Add(fmt.Sprintf("%s's error bound (band below it)", name), band, tops[0])
			})
		}
	}
	// Bands under every line, netclock's line over the others.
	p.Add(bands...)
	for i, d := range all {
		if rep.Results[i].System != "netclock" {
			p.Add(d.line, d.marks)
		}
	}
	for i, d := range all {
		if rep.Results[i].System == "netclock" {
			p.Add(d.line, d.marks)
		}
	}
	// After every Add, which widens the axes to the data.
	p.X.Min, p.X.Max = 0, rep.DurationS
	p.X.Tick.Marker = stepTicks{}
	p.Y.Min, p.Y.Max = ylo, yhi
	for _, i := range order {
		r := rep.Results[i]
		leg.Add(fmt.Sprintf("%s  (p99 %s)", r.System, ms(r.SharedErrorMS.P99)), all[i].line, all[i].marks)
	}
	for _, add := range bandLegend {
		add()
	}
	return save(file, p, leg, 14*vg.Inch, 6*vg.Inch)
}

// envelope returns the largest |error| of each window of a trace, as the
// start of each window (a post-step line), and the end of the last.
func envelope(trace []harness.TracePoint, window float64) plotter.XYs {
	var out plotter.XYs
	cur, start := -1, 0.0
	for _, tp := range trace {
		v := math.Max(math.Abs(tp.ErrMS), minShownMS)
		if k := int(tp.T / window); k != cur {
			cur, start = k, float64(k)*window
			out = append(out, plotter.XY{X: start, Y: v})
		} else if v > out[len(out)-1].Y {
			out[len(out)-1].Y = v
		}
	}
	if len(out) > 0 {
		out = append(out, plotter.XY{X: out[len(out)-1].X + window, Y: out[len(out)-1].Y})
	}
	return out
}

// steadyRange returns a y-range (ms) that shows every line and bound after
// the warm-up, with a little room.
func steadyRange(lines []plotter.XYs, results []harness.Result, warmupS float64) (lo, hi float64) {
	lo, hi = math.Inf(1), 0
	for _, l := range lines {
		for _, pt := range l {
			if pt.X >= warmupS {
				lo, hi = math.Min(lo, pt.Y), math.Max(hi, pt.Y)
			}
		}
	}
	for _, r := range results {
		for _, tp := range r.Trace {
			if tp.T >= warmupS && tp.BoundMS > 0 {
				lo, hi = math.Min(lo, tp.BoundMS), math.Max(hi, tp.BoundMS)
			}
		}
	}
	if hi == 0 {
		return minShownMS, 1
	}
	return math.Max(lo/2, minShownMS), hi * 2
}

// markers picks a dozen points of a post-step line for its markers, in
// the middle of their windows, staggered by system so that markers of
// different systems do not sit on one another.
func markers(pts plotter.XYs, i, n int, window float64) plotter.XYs {
	const count = 12
	var out plotter.XYs
	for k := range count {
		j := int((float64(k) + (float64(i)+0.5)/float64(n)) / count * float64(len(pts)-1))
		if j < len(pts)-1 {
			out = append(out, plotter.XY{X: pts[j].X + window/2, Y: pts[j].Y})
		}
	}
	return out
}

// boundBand returns the area under a system's bound, down to the axis, and
// the bound as lines; nil for a system without one. Stretches without a
// bound are gaps.
func boundBand(trace []harness.TracePoint, floor float64) (*plotter.Polygon, []*plotter.Line) {
	var rings []plotter.XYer
	var tops []*plotter.Line
	var ring plotter.XYs
	flush := func() {
		if len(ring) > 0 {
			if top, err := plotter.NewLine(slices.Clone(ring)); err == nil {
				tops = append(tops, top)
			}
			ring = append(ring, plotter.XY{X: ring[len(ring)-1].X, Y: floor}, plotter.XY{X: ring[0].X, Y: floor})
			rings = append(rings, ring)
			ring = nil
		}
	}
	for _, tp := range trace {
		if tp.BoundMS > 0 {
			ring = append(ring, plotter.XY{X: tp.T, Y: math.Max(tp.BoundMS, floor)})
		} else {
			flush()
		}
	}
	flush()
	if len(rings) == 0 {
		return nil, nil
	}
	band, err := plotter.NewPolygon(rings...)
	if err != nil || len(tops) == 0 {
		return nil, nil
	}
	return band, tops
}

// plotP99 draws each system's p99 error per profile on a log scale, the
// profiles sorted from easiest to hardest by the median of every system's
// p99.
func plotP99(file string, reps []harness.Report, warmup time.Duration) error {
	reps = slices.Clone(reps)
	median := func(rep harness.Report) float64 {
		v := make([]float64, len(rep.Results))
		for i, r := range rep.Results {
			v[i] = r.SharedErrorMS.P99
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	slices.SortStableFunc(reps, func(a, b harness.Report) int {
		if c := cmp.Compare(median(a), median(b)); c != 0 {
			return c
		}
		return cmp.Compare(a.Profile, b.Profile)
	})

	p := plot.New()
	p.Title.Text = fmt.Sprintf("p99 |shared time − true server time| per profile (seed %d, %s simulated each, first %s excluded)",
		reps[0].Seed, seconds(reps[0].DurationS), seconds(warmup.Seconds()))
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = "profile, sorted by the median p99 of all systems"
	p.Y.Label.Text = "p99 |error| (ms, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}

	names := make([]string, len(reps))
	lo, hi := math.Inf(1), 0.0
	for i, rep := range reps {
		names[i] = rep.Profile
		for _, r := range rep.Results {
			v := math.Max(r.SharedErrorMS.P99, minShownMS)
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	ylo, yhi := lo/1.5, hi*1.5
	grid := plotter.NewGrid()
	grid.Vertical.Width = 0 // profile separators instead, below
	p.Add(grid)
	for i := 1; i < len(reps); i++ {
		sep, err := plotter.NewLine(plotter.XYs{{X: float64(i) - 0.5, Y: ylo}, {X: float64(i) - 0.5, Y: yhi}})
		if err != nil {
			return err
		}
		sep.Color, sep.Width = color.Gray{0xc8}, vg.Points(0.5)
		p.Add(sep)
	}

	leg := newLegend()
	n := len(reps[0].Results)
	for s := range n {
		name := reps[0].Results[s].System
		st := styleOf(s, name)
		pts := make(plotter.XYs, len(reps))
		for i, rep := range reps {
			if rep.Results[s].System != name {
				return fmt.Errorf("profile %s ran other systems than %s", rep.Profile, reps[0].Profile)
			}
			x := float64(i)
			if n > 1 {
				x += 0.7 * (float64(s)/float64(n-1) - 0.5)
			}
			pts[i] = plotter.XY{X: x, Y: math.Max(rep.Results[s].SharedErrorMS.P99, minShownMS)}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.Color, sc.Shape, sc.Radius = st.color, st.shape, st.radius*1.3
		p.Add(sc)
		leg.Add(name, sc)
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(reps))-0.5 // after every Add
	p.Y.Min, p.Y.Max = ylo, yhi
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	return save(file, p, leg, 14*vg.Inch, 6*vg.Inch)
}

// stepTicks marks about ten round values: 1, 2 or 5 times a power of 10
// apart.
type stepTicks struct{}

func (stepTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return nil
	}
	raw := (hi - lo) / 10
	step := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*step >= raw {
			step *= m
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step/1e6; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprintf("%g", v)})
	}
	return ticks
}

func newLegend() plot.Legend {
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.Padding = vg.Points(3)
	leg.ThumbnailWidth = vg.Points(28)
	return leg
}

// save draws p with leg to its right, outside the data, into a PNG.
func save(file string, p *plot.Plot, leg plot.Legend, w, h vg.Length) error {
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(96))
	dc := draw.New(img)
	lw := leg.Rectangle(dc).Size().X + vg.Points(16)
	p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
	// Top-aligned with the data area: below the title.
	top := p.Title.TextStyle.Height(p.Title.Text) + p.Title.Padding + vg.Points(4)
	leg.Draw(draw.Crop(dc, w-lw+vg.Points(8), 0, 0, -top))

	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// seconds formats a time in seconds without a needless fraction.
func seconds(s float64) string { return fmt.Sprintf("%g s", s) }

// ms formats milliseconds with about three significant digits, never in
// exponent form.
func ms(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	case v >= 1:
		return fmt.Sprintf("%.2f ms", v)
	}
	return fmt.Sprintf("%.3g ms", v)
}
