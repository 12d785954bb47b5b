package load

import (
	"testing"

	"github.com/kscale/kscale/framework/suite"
)

var load = suite.Suite{Name: "load", Config: "configs/load/config.yaml", Labels: []string{"load", "slo"}}

var _ = suite.Define(load)

func TestLoad(t *testing.T) { suite.Run(t, load) }
