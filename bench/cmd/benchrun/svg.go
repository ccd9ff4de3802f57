package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// svgSeries are the bars drawn per cell, with their colours.
var svgSeries = []struct {
	rc    ratioCol
	color string
}{
	{ratioCol{"edge-lean", "haproxy"}, "#1f77b4"},
	{ratioCol{"edge-lean", "nginx"}, "#2ca02c"},
	{ratioCol{"edge-lean", "caddy"}, "#9467bd"},
	{ratioCol{"edge-full", "edge-lean"}, "#d62728"},
}

// svg draws the closed-loop edge ÷ peer ratios as horizontal bars, one group
// per cell, with the parity line at 1.0 and the goal lines at 1.15, 1.2 and
// 1.35. Bars longer than the axis are cut and labelled with their value.
func (b *bench) svg() string {
	const (
		left, barH, gap, top, width = 190.0, 13.0, 12.0, 70.0, 900.0
		axisMax                     = 3.0
	)
	plotW := width - left - 60
	x := func(v float64) float64 { return left + plotW*math.Min(v, axisMax)/axisMax }
	var rows strings.Builder
	y := top
	for _, c := range b.cells {
		groupTop := y
		for _, s := range svgSeries {
			r := b.ratio("closed", s.rc, c.key())
			if math.IsNaN(r) {
				continue
			}
			fmt.Fprintf(&rows, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", left, y, x(r)-left, barH-2, s.color)
			label := fmt.Sprintf("%.2f", r)
			if r > axisMax {
				label += " →"
			}
			fmt.Fprintf(&rows, `<text x="%.1f" y="%.1f" font-size="10">%s</text>`+"\n", x(r)+4, y+barH-4, label)
			y += barH
		}
		if y == groupTop {
			continue
		}
		fmt.Fprintf(&rows, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="end">%s</text>`+"\n", left-8, (groupTop+y)/2+4, html.EscapeString(c.String()))
		y += gap
	}
	height := y + 40
	var w strings.Builder
	fmt.Fprintf(&w, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif">`+"\n", width, height)
	fmt.Fprintf(&w, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&w, `<text x="10" y="22" font-size="15" font-weight="bold">edge ÷ peer, proxy CPU per request (closed loop, median of %d rounds; lower is better for edge)</text>`+"\n", b.rounds)
	fmt.Fprintf(&w, `<text x="10" y="40" font-size="11">%s · %s · mode %s</text>`+"\n", html.EscapeString(b.commit()), b.started.Format("2006-01-02 15:04 UTC"), b.mode)
	lx := 10.0
	for _, s := range svgSeries {
		name := b.label(s.rc.num) + " ÷ " + b.label(s.rc.den)
		fmt.Fprintf(&w, `<rect x="%.0f" y="50" width="10" height="10" fill="%s"/><text x="%.0f" y="59" font-size="11">%s</text>`+"\n", lx, s.color, lx+14, html.EscapeString(name))
		lx += 14 + float64(len(name))*6.5 + 16
	}
	for _, t := range []float64{0, 0.5, 1, 1.5, 2, 2.5, 3} {
		fmt.Fprintf(&w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x(t), top-4, x(t), y)
		fmt.Fprintf(&w, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="middle">%.1f×</text>`+"\n", x(t), y+14, t)
	}
	w.WriteString(rows.String())
	fmt.Fprintf(&w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black" stroke-width="1.5"/>`+"\n", x(1), top-4, x(1), y)
	for _, g := range []struct {
		v    float64
		name string
	}{{1.15, "1.15 stack goal"}, {1.2, "1.2 H1 goal"}, {1.35, "1.35 H2 goal"}} {
		fmt.Fprintf(&w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e69500" stroke-dasharray="4 3"/>`+"\n", x(g.v), top-4, x(g.v), y)
		fmt.Fprintf(&w, `<text x="%.1f" y="%.1f" font-size="9" fill="#b36b00" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n", x(g.v)-2, y-2, x(g.v)-2, y-2, g.name)
	}
	fmt.Fprintf(&w, `<text x="10" y="%.0f" font-size="10">Bars are cut at %.0f×; the number is the true ratio. Source: bench/results/latest-samples.csv</text>`+"\n", height-10, axisMax)
	w.WriteString("</svg>\n")
	return w.String()
}
