package tuningset

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kscale/kscale/framework/config"
)

// Validate reports every problem of spec, each prefixed with the path of the
// field in the config (tuningSets[name=X].qpsLoad.qps), so a user can fix a
// config in one go instead of one error per run.
func Validate(spec config.TuningSet) error {
	p := setPath(spec.Name)
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s%s: %s", p, field, fmt.Sprintf(format, args...)))
	}
	if spec.Name == "" {
		add(".name", "must not be empty")
	}

	set := spec.Types()
	switch len(set) {
	case 1:
	case 0:
		add("", "exactly one of %s must be set, got none", strings.Join(config.TuningSetTypes, ", "))
	default:
		add("", "exactly one of %s must be set, got %d: %s", strings.Join(config.TuningSetTypes, ", "), len(set), strings.Join(set, ", "))
	}

	positive := func(field string, v float64) {
		switch {
		case math.IsInf(v, 1):
			add(field, "must be finite, got %v", v)
		case !(v > 0): // also catches NaN
			add(field, "must be > 0, got %v", v)
		}
	}
	atLeastOne := func(field string, v int) {
		if v < 1 {
			add(field, "must be >= 1, got %d", v)
		}
	}
	notNegative := func(field string, d config.Duration) {
		if d < 0 {
			add(field, "must be >= 0, got %s", time.Duration(d))
		}
	}

	notNegative(".initialDelay", spec.InitialDelay)
	if s := spec.QPSLoad; s != nil {
		positive(".qpsLoad.qps", s.QPS)
	}
	if s := spec.RandomizedLoad; s != nil {
		positive(".randomizedLoad.averageQps", s.AverageQPS)
	}
	if s := spec.SteppedLoad; s != nil {
		atLeastOne(".steppedLoad.burstSize", s.BurstSize)
		notNegative(".steppedLoad.stepDelay", s.StepDelay)
	}
	if s := spec.TimeLimitedLoad; s != nil {
		notNegative(".timeLimitedLoad.timeLimit", s.TimeLimit)
	}
	if s := spec.RandomizedTimeLimitedLoad; s != nil {
		notNegative(".randomizedTimeLimitedLoad.timeLimit", s.TimeLimit)
	}
	if s := spec.ParallelismLimitedLoad; s != nil {
		atLeastOne(".parallelismLimitedLoad.parallelismLimit", s.ParallelismLimit)
	}
	if s := spec.GlobalQPSLoad; s != nil {
		positive(".globalQPSLoad.qps", s.QPS)
		atLeastOne(".globalQPSLoad.burst", s.Burst)
	}
	if s := spec.PoissonLoad; s != nil {
		positive(".poissonLoad.expectedActionsPerSecond", s.ExpectedActionsPerSecond)
	}
	return errors.Join(errs...)
}

func setPath(name string) string {
	if name == "" {
		return "tuningSets[name=" + strconv.Quote(name) + "]"
	}
	return "tuningSets[name=" + name + "]"
}
