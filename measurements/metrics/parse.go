package metrics

import (
	"bytes"
	"fmt"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ParseText parses Prometheus text exposition (what a /metrics endpoint
// serves) into metric families by name.
//
// Recent versions of expfmt refuse to parse without a name validation
// scheme; UTF-8 is the permissive one, so metrics with names the legacy
// scheme would reject (none on a kube component today) still parse rather
// than failing the whole scrape.
func ParseText(text []byte) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parsing Prometheus text exposition: %w", err)
	}
	return families, nil
}

// LabelMap returns a metric's labels by name.
func LabelMap(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, lp := range m.GetLabel() {
		out[lp.GetName()] = lp.GetValue()
	}
	return out
}
