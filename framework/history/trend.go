package history

import (
	"fmt"
	"io"
	"strings"

	"github.com/kscale/kscale/framework/report"
)

// Trend is one series drawn on its own, outside history.html: a figure of
// the docs, say.
type Trend struct {
	Title string
	Unit  string
	// Values are the runs' values, oldest first; Names name the runs (the
	// dots' tooltips) and Links are where they point, both optional.
	Values       []float64
	Names, Links []string
	Threshold    *float64
	// ChangePoints are a series' change points, their Point an index into
	// Values.
	ChangePoints []Change
}

// WriteSVG writes the trend as a standalone SVG file, its style inside, as
// history.html draws it.
func (t Trend) WriteSVG(w io.Writer) error {
	pts := make([]trendPoint, len(t.Values))
	index := make([]int, len(t.Values))
	for i, v := range t.Values {
		pts[i] = trendPoint{run: i, value: v, has: true, name: fmt.Sprintf("run %d", i+1)}
		if i < len(t.Names) {
			pts[i].name = t.Names[i]
		}
		if i < len(t.Links) {
			pts[i].link = t.Links[i]
		}
		index[i] = i
	}
	for _, c := range t.ChangePoints {
		if c.Point <= 0 || c.Point >= len(t.Values) {
			return fmt.Errorf("trend %q: change point at %d is outside its %d values", t.Title, c.Point, len(t.Values))
		}
	}
	// A file, unlike an inline drawing, names its namespace.
	svg := strings.Replace(string(trendSVG(t.Title, t.Unit, pts, t.Threshold, t.ChangePoints, index)), "<svg ", `<svg xmlns="http://www.w3.org/2000/svg" `, 1)
	open := strings.Index(svg, ">") + 1
	style := "\n<style>" + svgRules(report.StyleSheet+historyStyle) + "</style>"
	_, err := io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+svg[:open]+style+svg[open:]+"\n")
	return err
}

// svgRules keeps the rules of a style sheet that style an SVG file: its
// variables and the plots'.
func svgRules(sheet string) string {
	var keep []string
	for _, line := range strings.Split(sheet, "\n") {
		if strings.HasPrefix(line, ":root") || strings.HasPrefix(line, "svg.") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}
