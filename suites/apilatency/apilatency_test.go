package apilatency

import (
	"testing"

	"github.com/kscale/kscale/framework/suite"
)

var apilatency = suite.Suite{Name: "apilatency", Config: "configs/apilatency/config.yaml", Labels: []string{"apilatency", "slo"}}

var _ = suite.Define(apilatency)

func TestAPILatency(t *testing.T) { suite.Run(t, apilatency) }
