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

// svg draws the closed-loop edge ÷ peer ratios as bars on a log scale
// centred on parity (1.0): a bar to the right means edge costs more CPU per
// request than the peer, to the left less. One group per cell; dashed lines
// mark the goals 1.15, 1.2 and 1.35. Bars beyond the axis are cut and
// labelled with their value.
func (b *bench) svg() string {
	const (
		left, barH, gap, top, width = 190.0, 13.0, 12.0, 96.0, 900.0
		axisMax                     = 8.0 // the axis spans 1/8× .. 8×
	)
	plotW := width - left - 60
	center := left + plotW/2
	x := func(v float64) float64 {
		l := math.Log2(v) / math.Log2(axisMax)
		return center + plotW/2*math.Max(-1, math.Min(1, l))
	}
	type bar struct {
		v     float64
		color string
	}
	type group struct {
		label string
		bars  []bar
	}
	var groups []group
	for _, c := range b.cells {
		g := group{label: c.String()}
		for _, s := range svgSeries {
			g.bars = append(g.bars, bar{b.ratio("closed", s.rc, c.key()), s.color})
		}
		groups = append(groups, g)
	}
	// Open loop: a peer's highest sustained rate ÷ edge lean's, so that here too a bar to the
	// right means edge does worse than the peer.
	for _, proto := range olProtos {
		g := group{label: protoName(proto) + ", sustained rate"}
		for _, s := range svgSeries[:3] {
			g.bars = append(g.bars, bar{1 / b.olRatio(s.rc.den, proto), s.color})
		}
		groups = append(groups, g)
	}
	var rows strings.Builder
	y := top
	for _, g := range groups {
		groupTop := y
		for _, s := range g.bars {
			r := s.v
			if math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
				continue
			}
			x0, x1 := x(1), x(r)
			if x1 < x0 {
				x0, x1 = x1, x0
			}
			fmt.Fprintf(&rows, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x0, y, math.Max(x1-x0, 1), barH-2, s.color)
			label := fmt.Sprintf("%.2f", r)
			lx, anchor := x(r)+4, "start"
			if r < 1 {
				lx, anchor = x(r)-4, "end"
			}
			if r > axisMax || r < 1/axisMax {
				label += " (cut)"
			}
			fmt.Fprintf(&rows, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="%s">%s</text>`+"\n", lx, y+barH-4, anchor, label)
			y += barH
		}
		if y == groupTop {
			continue
		}
		fmt.Fprintf(&rows, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="end">%s</text>`+"\n", left-8, (groupTop+y)/2+4, html.EscapeString(g.label))
		y += gap
	}
	height := y + 40
	var w strings.Builder
	fmt.Fprintf(&w, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif">`+"\n", width, height)
	fmt.Fprintf(&w, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&w, `<text x="10" y="22" font-size="15" font-weight="bold">edge ÷ peer: proxy CPU per request (closed loop, median of %d rounds)</text>`+"\n", b.rounds)
	fmt.Fprintf(&w, `<text x="10" y="40" font-size="11">%s · %s · mode %s · log scale: right of 1.0 = edge uses more CPU than the peer, left = less</text>`+"\n", html.EscapeString(shortCommit(b.commit())), b.started.Format("2006-01-02 15:04 UTC"), b.mode)
	lx := 10.0
	for _, s := range svgSeries {
		name := b.label(s.rc.num) + " ÷ " + b.label(s.rc.den)
		fmt.Fprintf(&w, `<rect x="%.0f" y="50" width="10" height="10" fill="%s"/><text x="%.0f" y="59" font-size="11">%s</text>`+"\n", lx, s.color, lx+14, html.EscapeString(name))
		lx += 14 + float64(len(name))*6.5 + 16
	}
	for _, t := range []float64{0.125, 0.25, 0.5, 1, 2, 4, 8} {
		fmt.Fprintf(&w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x(t), top-4, x(t), y)
		fmt.Fprintf(&w, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="middle">%g×</text>`+"\n", x(t), y+14, t)
	}
	w.WriteString(rows.String())
	fmt.Fprintf(&w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black" stroke-width="1.5"/>`+"\n", x(1), top-4, x(1), y)
	for i, g := range []struct {
		v    float64
		name string
	}{{1.15, "1.15 security-stack goal"}, {1.2, "1.2 H1 TLS goal"}, {1.35, "1.35 H2 goal"}} {
		fmt.Fprintf(&w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e69500" stroke-dasharray="4 3"/>`+"\n", x(g.v), top-8-float64(2-i)*10, x(g.v), y)
		fmt.Fprintf(&w, `<text x="%.1f" y="%.1f" font-size="9" fill="#b36b00">%s</text>`+"\n", x(g.v)+3, top-9-float64(2-i)*10, g.name)
	}
	fmt.Fprintf(&w, `<text x="10" y="%.0f" font-size="10">Bars beyond 1/8× or 8× are cut; the number is the true ratio. Closed-loop ratios are per round; sustained-rate bars are a peer's highest rate with p99 ≤ 10 ms ÷ edge lean's. Source: bench/results/latest-samples.json</text>`+"\n", height-10)
	w.WriteString("</svg>\n")
	return w.String()
}

// shortCommit keeps the hash of a commit() string for the chart subtitle.
func shortCommit(c string) string {
	if i := strings.IndexByte(c, ' '); i > 0 {
		return c[:i] + "+"
	}
	return c
}
