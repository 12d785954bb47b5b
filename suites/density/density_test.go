package density

import (
	"testing"

	"github.com/kscale/kscale/framework/suite"
)

var density = suite.Suite{Name: "density", Config: "configs/density/config.yaml", Labels: []string{"density", "slo"}}

var _ = suite.Define(density)

func TestDensity(t *testing.T) { suite.Run(t, density) }
