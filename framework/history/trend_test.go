package history

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/kscale/kscale/framework/changepoint"
)

// TestTrendSVG: a standalone trend is well-formed SVG with its style inside,
// a dot per value, the SLO line and a red line at a worse change point;
// a change point outside the values is refused.
func TestTrendSVG(t *testing.T) {
	slo := 5000.0
	tr := Trend{
		Title: "pod_startup p99", Unit: "ms",
		Values:    []float64{400, 380, 390, 1060, 1050, 1070},
		Threshold: &slo,
		ChangePoints: []Change{{Point: 3, Before: changepoint.Stats{N: 3, Mean: 390}, After: changepoint.Stats{N: 3, Mean: 1060},
			Change: 1.72, Worse: true}},
	}
	var b bytes.Buffer
	if err := tr.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	dec := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	var root string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, b.String())
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Space + " " + se.Name.Local
			}
			for _, a := range se.Attr {
				if a.Name.Local == "class" {
					count[se.Name.Local+"."+a.Value]++
				}
			}
			count[se.Name.Local]++
		}
	}
	if root != "http://www.w3.org/2000/svg svg" {
		t.Errorf("root element %q, want an svg in the SVG namespace", root)
	}
	want := map[string]int{"circle.run ": 6, "style": 1, "g.change worse": 1, "g.threshold above": 1, "polyline.values": 1, "line.mean": 2}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%d × %s, want %d (all: %v)", count[k], k, n, count)
		}
	}
	if !strings.Contains(b.String(), "svg.trend .change.worse line{") {
		t.Error("the change point's rule is not in the file's style")
	}

	tr.ChangePoints[0].Point = 6
	if err := tr.WriteSVG(io.Discard); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("change point past the values: err %v", err)
	}
}
