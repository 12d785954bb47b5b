package density

import (
	"testing"

	"github.com/onsi/ginkgo/v2"

	"github.com/kscale/kscale/framework/suite"
)

var density = suite.Suite{Name: "density", Config: "configs/density/config.yaml", Labels: []string{"density", "slo"}}

var _ = suite.Define(density)

// TestDensity settles the flags and the config (bad input exits 2 before
// anything starts), then runs a spec per step and per measurement.
func TestDensity(t *testing.T) {
	suite.Prepare(density)
	ginkgo.RunSpecs(t, "density")
}
