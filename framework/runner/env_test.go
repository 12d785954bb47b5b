package runner

import (
	"reflect"
	"testing"

	"github.com/kscale/kscale/measurements"
)

func TestSplitPrometheus(t *testing.T) {
	apiserver := measurements.Component{Name: "kube-apiserver", HealthURL: "https://127.0.0.1:6443/readyz"}
	prom := measurements.Component{Name: "prometheus", PID: 7, HealthURL: "http://127.0.0.1:9090/-/ready"}
	for name, c := range map[string]struct {
		in      []measurements.Component
		rest    []measurements.Component
		wantURL string
	}{
		"with Prometheus":    {[]measurements.Component{apiserver, prom}, []measurements.Component{apiserver}, "http://127.0.0.1:9090"},
		"without Prometheus": {[]measurements.Component{apiserver}, []measurements.Component{apiserver}, ""},
		"no local cluster":   {nil, nil, ""},
	} {
		t.Run(name, func(t *testing.T) {
			rest, url := splitPrometheus(c.in)
			if url != c.wantURL || !reflect.DeepEqual(rest, c.rest) {
				t.Fatalf("splitPrometheus = %v, %q; want %v, %q", rest, url, c.rest, c.wantURL)
			}
		})
	}
}
