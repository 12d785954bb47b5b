package load

import (
	"testing"

	"github.com/onsi/ginkgo/v2"

	"github.com/kscale/kscale/framework/suite"
)

var load = suite.Suite{Name: "load", Config: "configs/load/config.yaml", Labels: []string{"load", "slo"}}

var _ = suite.Define(load)

// TestLoad settles the flags and the config (bad input exits 2 before
// anything starts), then runs a spec per step and per measurement.
func TestLoad(t *testing.T) {
	suite.Prepare(load)
	ginkgo.RunSpecs(t, "load")
}
