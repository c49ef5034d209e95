package main

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/netclock/netclock/bench/harness"
)

// plotErrors draws every system's |error| over time on a log scale.
func plotErrors(file string, rep harness.Report) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("|shared time error|, profile %s", rep.Profile)
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "|error| (ms, log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	for i, r := range rep.Results {
		pts := make(plotter.XYs, 0, len(r.Trace))
		for _, tp := range r.Trace {
			pts = append(pts, plotter.XY{X: tp.T, Y: math.Max(math.Abs(tp.ErrMS), 1e-3)})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1)
		if r.System == "netclock" {
			l.Width = vg.Points(2)
			l.Color = color.Black
		}
		p.Add(l)
		p.Legend.Add(r.System, l)
	}
	return p.Save(10*vg.Inch, 5*vg.Inch, file)
}

// plotP99 draws each system's p99 error per profile as a dot chart on a
// log scale (bars cannot start at zero on a log axis).
func plotP99(file string, reps []harness.Report) error {
	p := plot.New()
	p.Title.Text = "p99 |shared time error| per profile"
	p.Y.Label.Text = "p99 (ms, log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	names := make([]string, len(reps))
	for i, rep := range reps {
		names[i] = rep.Profile
	}
	n := len(reps[0].Results)
	for s := range n {
		pts := make(plotter.XYs, len(reps))
		for i, rep := range reps {
			pts[i] = plotter.XY{X: float64(i) + 0.6*(float64(s)/float64(n-1)-0.5),
				Y: math.Max(rep.Results[s].SharedErrorMS.P99, 1e-3)}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.Color = plotutil.Color(s)
		sc.Shape = plotutil.Shape(s)
		sc.Radius = vg.Points(3)
		if reps[0].Results[s].System == "netclock" {
			sc.Color = color.Black
			sc.Radius = vg.Points(5)
		}
		p.Add(sc)
		p.Legend.Add(reps[0].Results[s].System, sc)
	}
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign = -1
	p.Add(plotter.NewGrid())
	return p.Save(14*vg.Inch, 6*vg.Inch, file)
}
