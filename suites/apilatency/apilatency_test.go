package apilatency

import (
	"testing"

	"github.com/onsi/ginkgo/v2"

	"github.com/kscale/kscale/framework/suite"
)

var apilatency = suite.Suite{Name: "apilatency", Config: "configs/apilatency/config.yaml", Labels: []string{"apilatency", "slo"}}

var _ = suite.Define(apilatency)

// TestAPILatency settles the flags and the config (bad input exits 2 before
// anything starts), then runs a spec per step and per measurement.
func TestAPILatency(t *testing.T) {
	suite.Prepare(apilatency)
	ginkgo.RunSpecs(t, "apilatency")
}
