// Package timeline draws a run as an SVG picture, from its event log
// alone (so a real cluster's log draws the same way): per Deployment, one
// bar per pod over virtual time (created → ready → deleting → deleted),
// the image writes and the upgrade's phase changes as markers, and fault
// windows as shaded spans. Hand-written SVG, no dependency.
package timeline

import (
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// Span is a shaded window, in seconds since the start of the log.
type Span struct {
	Label      string
	Start, End float64
}

// Input is what to draw.
type Input struct {
	Title  string
	Events []eventlog.Event
	// Order lists Deployments top to bottom (worker first); others follow
	// in order of appearance.
	Order []string
	// Faults are shaded over the whole picture.
	Faults []Span
	// From, when > 0, starts the axis there (e.g. a little before the
	// upgrade was created) instead of 0.
	From float64
}

const (
	width     = 1100.0
	left      = 230.0
	right     = 30.0
	rowH      = 16.0
	barH      = 10.0
	headerH   = 22.0
	faultTop  = 30.0  // fault labels: two rows from here
	topLanes  = 112.0 // bottom of the phase lane
	legendH   = 46.0
	axisH     = 24.0
	colorTerm = "#f28e2b"
)

var palette = []string{"#7f8fa6", "#59a14f", "#4e79a7", "#b07aa1", "#9c755f"}

type pod struct {
	name, dep, image                  string
	created, ready, deleting, deleted float64
}

type depRows struct {
	name   string
	images []string // in order of appearance; [0] is the initial one
	writes []eventlog.Event
	pods   []*pod
}

// Render writes the SVG of in to w.
func Render(w io.Writer, in Input) error {
	deps, phases, end := collect(in)
	for _, f := range in.Faults {
		end = math.Max(end, f.End)
	}
	end = math.Ceil((end+2)/10) * 10
	from := math.Max(0, in.From)
	if from >= end {
		from = 0
	}
	x := func(t float64) float64 { return left + (math.Max(t, from)-from)/(end-from)*(width-left-right) }
	height := topLanes + axisH + legendH + 10
	for _, d := range deps {
		height += headerH + float64(len(d.pods))*rowH
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="Helvetica,Arial,sans-serif" font-size="11">`+"\n", width, height, width, height)
	b.WriteString(`<defs><pattern id="term" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="` + colorTerm + `"/><line x1="0" y1="0" x2="0" y2="6" stroke="#fff" stroke-width="2"/></pattern></defs>` + "\n")
	fmt.Fprintf(b, `<rect width="100%%" height="100%%" fill="#fff"/>`+"\n")
	fmt.Fprintf(b, `<text x="10" y="18" font-size="14" font-weight="bold">%s</text>`+"\n", esc(in.Title))
	bottom := height - legendH - axisH
	drawFaults(b, in.Faults, x, bottom)
	drawPhases(b, phases, x, bottom)
	y := topLanes
	for _, d := range deps {
		y = drawDeployment(b, d, x, y, end)
	}
	drawAPIWrites(b, deps, x, bottom)
	drawAxis(b, x, from, end, bottom)
	drawLegend(b, bottom+axisH+8)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func esc(s string) string { return html.EscapeString(s) }

// collect turns the log into per-Deployment pod rows, the phase changes
// and the time of the last event.
func collect(in Input) ([]*depRows, []eventlog.Event, float64) {
	byDep := map[string]*depRows{}
	var order []string
	dep := func(name string) *depRows {
		d := byDep[name]
		if d == nil {
			d = &depRows{name: name}
			byDep[name] = d
			order = append(order, name)
		}
		return d
	}
	pods := map[string]*pod{}
	var phases []eventlog.Event
	end := 0.0
	podImage := eventlog.PodImages(in.Events)
	for _, e := range in.Events {
		end = math.Max(end, e.T)
		switch e.Event {
		case eventlog.DeploymentWrite:
			d := dep(e.Name)
			if e.Image != "" {
				d.addImage(e.Image)
			}
			d.writes = append(d.writes, e)
		case eventlog.Phase:
			phases = append(phases, e)
		case eventlog.PodCreated, eventlog.PodReady, eventlog.PodDeleting, eventlog.PodDeleted:
			if e.Deployment == "" {
				continue
			}
			key := e.Namespace + "/" + e.Name
			p := pods[key]
			if p == nil || (e.Event == eventlog.PodCreated && p.deleted >= 0) {
				p = &pod{name: e.Name, dep: e.Deployment, image: podImage(e), created: e.T, ready: -1, deleting: -1, deleted: -1}
				pods[key] = p
				d := dep(e.Deployment)
				d.addImage(p.image)
				d.pods = append(d.pods, p)
			}
			switch e.Event {
			case eventlog.PodReady:
				p.ready = e.T
			case eventlog.PodDeleting:
				p.deleting = e.T
			case eventlog.PodDeleted:
				p.deleted = e.T
			}
		}
	}
	var deps []*depRows
	seen := map[string]bool{}
	for _, name := range append(append([]string(nil), in.Order...), order...) {
		if d := byDep[name]; d != nil && !seen[name] {
			seen[name] = true
			deps = append(deps, d)
		}
	}
	for _, d := range deps {
		sort.SliceStable(d.pods, func(i, j int) bool { return d.pods[i].created < d.pods[j].created })
	}
	return deps, phases, end
}

func (d *depRows) addImage(img string) {
	for _, i := range d.images {
		if i == img {
			return
		}
	}
	d.images = append(d.images, img)
}

func (d *depRows) color(img string) string {
	for i, im := range d.images {
		if im == img {
			return palette[min(i, len(palette)-1)]
		}
	}
	return palette[0]
}

func short(img string) string {
	if i := strings.LastIndex(img, "/"); i >= 0 {
		return img[i+1:]
	}
	return img
}

func tag(img string) string {
	if i := strings.LastIndex(img, ":"); i > strings.LastIndex(img, "/") {
		return img[i:]
	}
	return ""
}

func drawFaults(b *strings.Builder, spans []Span, x func(float64) float64, bottom float64) {
	for i, f := range spans {
		x0, x1 := x(f.Start), x(f.End)
		if x1-x0 < 2 {
			x0, x1 = x0-1, x0+1
		}
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#e15759" fill-opacity="0.12" stroke="#e15759" stroke-opacity="0.5" stroke-dasharray="3,2"><title>%s</title></rect>`+"\n",
			x0, faultTop+float64(i%2)*12+3, x1-x0, bottom-faultTop-float64(i%2)*12-3, esc(f.Label))
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="#c03030" font-size="10">⚡ %s</text>`+"\n", x0+2, faultTop+10+float64(i%2)*12, esc(f.Label))
	}
}

func drawPhases(b *strings.Builder, phases []eventlog.Event, x func(float64) float64, bottom float64) {
	fmt.Fprintf(b, `<text x="10" y="%.1f" font-weight="bold">ApplicationUpgrade phase</text>`+"\n", topLanes-6)
	// phases close together are stacked, the first on top
	rows := make([]int, len(phases))
	for start := 0; start < len(phases); {
		end := start + 1
		for end < len(phases) && end-start < 4 && x(phases[end].T)-x(phases[start].T) < 110 {
			end++
		}
		for i := start; i < end; i++ {
			rows[i] = end - 1 - i
		}
		start = end
	}
	for i, p := range phases {
		px, row := x(p.T), rows[i]
		color := "#555"
		switch p.Phase {
		case "Completed":
			color = "#2b8a3e"
		case "Failed":
			color = "#c92a2a"
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1" stroke-dasharray="1,3"/>`+"\n", px, topLanes-14, px, bottom, color)
		fmt.Fprintf(b, `<path d="M%.1f %.1f l4 -5 l-4 -5 l-4 5 z" fill="%s"><title>%s at %.1fs</title></path>`+"\n", px, topLanes-4, color, esc(p.Phase), p.T)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="%s" font-size="10">%s</text>`+"\n", px+6, topLanes-6-float64(row)*11, color, esc(p.Phase))
	}
}

func drawDeployment(b *strings.Builder, d *depRows, x func(float64) float64, y, end float64) float64 {
	fmt.Fprintf(b, `<rect x="0" y="%.1f" width="%.0f" height="%.1f" fill="#f4f4f4"/>`+"\n", y, width, headerH)
	fmt.Fprintf(b, `<text x="10" y="%.1f" font-weight="bold">Deployment %s</text>`+"\n", y+15, esc(d.name))
	for i, w := range d.writes {
		what := "image written"
		if i == 0 {
			what = "created"
		}
		wx := x(w.T)
		fmt.Fprintf(b, `<path d="M%.1f %.1f l6 -6 l-6 -6 l-6 6 z" fill="%s" stroke="#222"><title>%s %s at %.1fs</title></path>`+"\n",
			wx, y+17, d.color(w.Image), what, esc(w.Image), w.T)
		if i > 0 {
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="10">write %s</text>`+"\n", wx+8, y+15, esc(short(w.Image)))
		}
	}
	y += headerH
	for _, p := range d.pods {
		drawPod(b, d, p, x, y, end)
		y += rowH
	}
	return y
}

func drawPod(b *strings.Builder, d *depRows, p *pod, x func(float64) float64, y, end float64) {
	fmt.Fprintf(b, `<text x="18" y="%.1f" font-size="10" fill="#333">%s <tspan fill="#888">%s</tspan><title>%s</title></text>`+"\n", y+11, esc(p.name), esc(tag(p.image)), esc(p.image))
	stop := end
	if p.deleted >= 0 {
		stop = p.deleted
	}
	seg := func(from, to float64, fill, opacity, what string) {
		if from < 0 || to < from {
			return
		}
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="%s"><title>%s %s: %.1fs–%.1fs</title></rect>`+"\n",
			x(from), y+3, math.Max(x(to)-x(from), 0.8), barH, fill, opacity, esc(p.name), what, from, to)
	}
	color := d.color(p.image)
	readyEnd := stop
	if p.deleting >= 0 {
		readyEnd = p.deleting
	}
	if p.ready >= 0 {
		seg(p.created, p.ready, color, "0.35", "starting")
		seg(p.ready, readyEnd, color, "1", "ready")
	} else {
		seg(p.created, readyEnd, color, "0.35", "not ready")
	}
	if p.deleting >= 0 {
		seg(p.deleting, stop, "url(#term)", "1", "terminating")
	}
	if p.deleted >= 0 {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#222" stroke-width="1.5"/>`+"\n", x(p.deleted), y+2, x(p.deleted), y+3+barH+1)
	}
}

// drawAPIWrites draws a line across the picture at each image write of
// every Deployment but the first (the API writes of an ordered upgrade),
// so the handoff from the old worker pods shows.
func drawAPIWrites(b *strings.Builder, deps []*depRows, x func(float64) float64, bottom float64) {
	if len(deps) < 2 {
		return
	}
	for _, d := range deps[1:] {
		for _, w := range d.writes[1:] {
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#c92a2a" stroke-width="1.2" stroke-dasharray="5,3"><title>%s image %s written at %.1fs</title></line>`+"\n",
				x(w.T), topLanes, x(w.T), bottom, esc(d.name), esc(w.Image), w.T)
		}
	}
}

func drawAxis(b *strings.Builder, x func(float64) float64, from, end, y float64) {
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x(from), y, x(end), y)
	step := 10.0
	for span := end - from; span/step > 14; {
		step *= 2
	}
	for t := math.Ceil(from/step) * step; t <= end; t += step {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/><text x="%.1f" y="%.1f" text-anchor="middle" font-size="10">%gs</text>`+"\n",
			x(t), y, x(t), y+4, x(t), y+15, t)
	}
	fmt.Fprintf(b, `<text x="10" y="%.1f" font-size="10" fill="#555">virtual time →</text>`+"\n", y+15)
}

func drawLegend(b *strings.Builder, y float64) {
	items := []struct{ fill, opacity, label string }{
		{palette[0], "1", "old image, ready"},
		{palette[1], "0.35", "new image, starting"},
		{palette[1], "1", "new image, ready"},
		{"url(#term)", "1", "terminating (deletionTimestamp set)"},
		{"#e15759", "0.15", "fault window"},
	}
	xx := 10.0
	for _, it := range items {
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="18" height="10" fill="%s" fill-opacity="%s" stroke="#999" stroke-width="0.5"/><text x="%.1f" y="%.1f" font-size="10">%s</text>`+"\n",
			xx, y, it.fill, it.opacity, xx+22, y+9, esc(it.label))
		xx += 30 + float64(len(it.label))*5.6
	}
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#c92a2a" stroke-dasharray="5,3"/><text x="%.1f" y="%.1f" font-size="10">API image written</text>`+"\n",
		xx, y+5, xx+18, y+5, xx+22, y+9)
	fmt.Fprintf(b, `<text x="10" y="%.1f" font-size="10" fill="#555">◆ on a Deployment row: its image written; ◆ on the top lane: the upgrade's phase changes; | end of a bar: pod object deleted</text>`+"\n", y+28)
}
