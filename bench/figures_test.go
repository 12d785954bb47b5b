package bench

// The docs' figures, drawn from the recorded results, so that a figure in
// the docs is the results file it names.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kscale/kscale/framework/golden"
	"github.com/kscale/kscale/framework/history"
)

// podStartupP99 is the figure the series are drawn for, as history keys it.
const podStartupP99 = "PodStartupLatency_PodStartupLatency: pod_startup p99 ms"

// podStartupSLO is the pod startup SLO's threshold, in ms.
const podStartupSLO = 5000.0

// nightlySeriesFile is the part of nightly-series.json drawn.
type nightlySeriesFile struct {
	Results struct {
		Series []struct {
			Name          string                      `json:"name"`
			PodStartupP99 []float64                   `json:"podStartupP99Ms"`
			ChangePoints  map[string][]history.Change `json:"changePoints"`
			ExitCode      int                         `json:"exitCode"`
		} `json:"series"`
	} `json:"results"`
}

// nightlySeriesFigures draws nightly-series-<series>.svg for each series of
// results/nightly-series.json: its pod startup p99 per run, with the change
// points kscale history found on it. It returns the files by name.
func nightlySeriesFigures(results string) (map[string][]byte, error) {
	in := filepath.Join(results, "nightly-series.json")
	data, err := os.ReadFile(in)
	if err != nil {
		return nil, err
	}
	var f nightlySeriesFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("reading %s: %w", in, err)
	}
	if len(f.Results.Series) == 0 {
		return nil, fmt.Errorf("%s has no series", in)
	}
	slo := podStartupSLO
	out := map[string][]byte{}
	for _, s := range f.Results.Series {
		tr := history.Trend{
			Title:        fmt.Sprintf("pod startup p99, %s series (kscale history exit %d)", s.Name, s.ExitCode),
			Unit:         "ms",
			Values:       s.PodStartupP99,
			Threshold:    &slo,
			ChangePoints: s.ChangePoints[podStartupP99],
		}
		var b bytes.Buffer
		if err := tr.WriteSVG(&b); err != nil {
			return nil, fmt.Errorf("drawing the %s series of %s: %w", s.Name, in, err)
		}
		out["nightly-series-"+s.Name+".svg"] = b.Bytes()
	}
	return out, nil
}

// TestFiguresReference: docs/img/ holds the figures drawn from
// results/bench, and nothing else; `make docs` redraws them.
func TestFiguresReference(t *testing.T) {
	files, err := nightlySeriesFigures("../results/bench")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if !strings.Contains(string(b), `class="change worse"`) && strings.Contains(name, "delayed") {
			t.Errorf("%s: the delayed series has no worse change point drawn", name)
		}
	}
	golden.CheckDir(t, "../docs/img", files)
}
