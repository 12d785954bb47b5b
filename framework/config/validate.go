package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// errAt reports a problem with the field at path, positioned at the field
// or, when the field is absent, at the nearest enclosing one. Problems under
// a field that could not be decoded are consequences of that error and are
// not reported again.
func (c *compiler) errAt(path, format string, args ...any) {
	var pos *position
	for p := path; ; p = parentPath(p) {
		if c.dec.bad[p] {
			return
		}
		if pos == nil {
			if q, ok := c.dec.pos[p]; ok {
				pos = &q
			}
		}
		if p == "" {
			break
		}
	}
	if pos == nil {
		c.add(&Error{Field: path, Msg: fmt.Sprintf(format, args...)})
		return
	}
	c.add(pos.errorf(path, format, args...))
}

func (c *compiler) has(path string) bool {
	_, ok := c.dec.pos[path]
	return ok
}

// validate checks what the types cannot express. stepPaths[i] is where
// step i was written (see compiler.stepPaths).
func (c *compiler) validate(cfg *Config, stepPaths []string) {
	if cfg.Name == "" {
		c.errAt("name", "required (it names the reports)")
	}
	if cfg.Namespace.Number < 0 {
		c.errAt("namespace.number", "must be > 0, got %d", cfg.Namespace.Number)
	}
	if cfg.Namespace.DeleteNamespaceTimeout < 0 {
		c.errAt("namespace.deleteNamespaceTimeout", "must not be negative")
	}
	sets := c.validateTuningSets(cfg.TuningSets)
	for i, d := range cfg.Dependencies {
		p := fmt.Sprintf("dependencies[%d]", i)
		if d.Name == "" {
			c.errAt(p+".name", "required")
		}
		switch {
		case d.Method == "":
			c.errAt(p+".method", "required")
		case c.opts.SkipUnsupported:
			// Never ignored silently: the caller names each one.
			c.out.SkippedDependencies = append(c.out.SkippedDependencies, Unsupported{
				Method: d.Method, Identifiers: []string{d.Name},
				Where: c.dec.pos[p+".method"].errorf(p+".method", "dependency method %q is not supported by kscale: skipped", d.Method)})
		default:
			// A run without the dependency a config asks for would measure
			// something else.
			c.errAt(p+".method", "dependency method %q is not supported by kscale (it has no dependency methods yet): set it up before the run and remove the entry, or skip it with --skip-unsupported-measurements", d.Method)
		}
		if d.Timeout < 0 {
			c.errAt(p+".timeout", "must not be negative")
		}
	}
	for i := range cfg.Steps {
		c.validateStep(cfg, &cfg.Steps[i], stepPaths[i], sets)
	}
}

// validateTuningSets returns the names of the defined tuning sets.
func (c *compiler) validateTuningSets(sets []TuningSet) map[string]bool {
	defined := map[string]bool{}
	for i := range sets {
		ts := &sets[i]
		p := fmt.Sprintf("tuningSets[%d]", i)
		switch {
		case ts.Name == "":
			c.errAt(p+".name", "required (phases refer to tuning sets by name)")
		case defined[ts.Name]:
			c.errAt(p+".name", "tuning set %q is defined twice", ts.Name)
		}
		defined[ts.Name] = true
		if ts.InitialDelay < 0 {
			c.errAt(p+".initialDelay", "must not be negative, got %v", ts.InitialDelay.Std())
		}
		switch types := ts.Types(); len(types) {
		case 0:
			c.errAt(p, "tuning set %q has no type; set exactly one of %s", ts.Name, strings.Join(TuningSetTypes, ", "))
		case 1:
			c.validateTuningSetParams(ts, p+"."+types[0])
		default:
			c.errAt(p, "tuning set %q has %d types (%s); set exactly one", ts.Name, len(types), strings.Join(types, ", "))
		}
	}
	return defined
}

func (c *compiler) validateTuningSetParams(ts *TuningSet, p string) {
	positive := func(field string, v float64) {
		if v <= 0 {
			c.errAt(p+"."+field, "must be > 0, got %v", v)
		}
	}
	notNegative := func(field string, d Duration) {
		if d < 0 {
			c.errAt(p+"."+field, "must not be negative, got %v", d.Std())
		}
	}
	switch {
	case ts.QPSLoad != nil:
		positive("qps", ts.QPSLoad.QPS)
	case ts.RandomizedLoad != nil:
		positive("averageQps", ts.RandomizedLoad.AverageQPS)
	case ts.SteppedLoad != nil:
		positive("burstSize", float64(ts.SteppedLoad.BurstSize))
		notNegative("stepDelay", ts.SteppedLoad.StepDelay)
	case ts.TimeLimitedLoad != nil:
		notNegative("timeLimit", ts.TimeLimitedLoad.TimeLimit)
	case ts.RandomizedTimeLimitedLoad != nil:
		notNegative("timeLimit", ts.RandomizedTimeLimitedLoad.TimeLimit)
	case ts.ParallelismLimitedLoad != nil:
		positive("parallelismLimit", float64(ts.ParallelismLimitedLoad.ParallelismLimit))
	case ts.GlobalQPSLoad != nil:
		positive("qps", ts.GlobalQPSLoad.QPS)
		positive("burst", float64(ts.GlobalQPSLoad.Burst))
	case ts.PoissonLoad != nil:
		positive("expectedActionsPerSecond", ts.PoissonLoad.ExpectedActionsPerSecond)
	}
}

func (c *compiler) validateStep(cfg *Config, st *Step, p string, sets map[string]bool) {
	var kinds []string
	for _, f := range []string{"phases", "measurements"} {
		if c.has(p + "." + f) {
			kinds = append(kinds, f)
		}
	}
	switch len(kinds) {
	case 0:
		c.errAt(p, "a step needs exactly one of phases, measurements or module; found none")
	case 2:
		c.errAt(p, "a step needs exactly one of phases, measurements or module; found phases and measurements (split it into two steps)")
	}
	for j := range st.Phases {
		c.validatePhase(cfg, &st.Phases[j], fmt.Sprintf("%s.phases[%d]", p, j), sets)
	}
	for j := range st.Measurements {
		c.validateMeasurement(&st.Measurements[j], fmt.Sprintf("%s.measurements[%d]", p, j))
	}
}

func definedList(sets map[string]bool) string {
	if len(sets) == 0 {
		return "no tuning sets are defined"
	}
	names := make([]string, 0, len(sets))
	for n := range sets {
		if n != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return "defined: " + strings.Join(names, ", ")
}

func (c *compiler) validatePhase(cfg *Config, ph *Phase, p string, sets map[string]bool) {
	switch {
	case ph.TuningSet == "":
		c.errAt(p+".tuningSet", "required (%s)", definedList(sets))
	case !sets[ph.TuningSet]:
		c.errAt(p+".tuningSet", "unknown tuning set %q (%s)", ph.TuningSet, definedList(sets))
	}
	if ph.NamespaceRange != nil && ph.NamespaceList != nil {
		c.errAt(p, "namespaceRange and namespaceList are both set; use one")
	}
	if r := ph.NamespaceRange; r != nil {
		rp := p + ".namespaceRange"
		if r.Min > r.Max {
			c.errAt(rp, "min %d is greater than max %d", r.Min, r.Max)
		}
		if r.Basename == nil {
			// Automanaged namespaces are <prefix>-1 .. <prefix>-<number>.
			for _, b := range []struct {
				field string
				v     int
			}{{"min", r.Min}, {"max", r.Max}} {
				if b.v < 1 || b.v > cfg.Namespace.Number {
					c.errAt(rp+"."+b.field, "%d is outside 1..%d (namespace.number)", b.v, cfg.Namespace.Number)
				}
			}
		} else if r.Min < 0 {
			c.errAt(rp+".min", "must not be negative, got %d", r.Min)
		}
	}
	for i, ns := range ph.NamespaceList {
		if ns == "" {
			c.errAt(fmt.Sprintf("%s.namespaceList[%d]", p, i), "empty namespace name")
		}
	}
	if ph.ReplicasPerNamespace < 0 {
		c.errAt(p+".replicasPerNamespace", "must not be negative, got %d", ph.ReplicasPerNamespace)
	}
	ns := ""
	switch {
	case ph.NamespaceRange != nil && ph.NamespaceRange.Basename != nil:
		ns = fmt.Sprintf("%s-%d", *ph.NamespaceRange.Basename, ph.NamespaceRange.Min)
	case ph.NamespaceRange != nil:
		ns = fmt.Sprintf("%s-%d", cfg.Namespace.Prefix, ph.NamespaceRange.Min)
	case len(ph.NamespaceList) > 0:
		ns = ph.NamespaceList[0]
	}
	for i := range ph.ObjectBundle {
		c.checkObject(&ph.ObjectBundle[i], fmt.Sprintf("%s.objectBundle[%d]", p, i), ns, ph.ReplicasPerNamespace == 0)
	}
}

func (c *compiler) validateMeasurement(m *Measurement, p string) {
	if m.Method == "" {
		c.errAt(p+".method", "required")
	}
	switch {
	case m.Identifier != "" && len(m.Instances) > 0:
		c.errAt(p, "set identifier or instances, not both")
	case m.Identifier == "" && len(m.Instances) == 0:
		c.errAt(p+".identifier", "required (or instances, a list of {identifier, params})")
	}
	var ids []string
	if m.Identifier != "" {
		ids = append(ids, m.Identifier)
	}
	for i, in := range m.Instances {
		if in.Identifier == "" {
			c.errAt(fmt.Sprintf("%s.instances[%d].identifier", p, i), "required")
		}
		ids = append(ids, in.Identifier)
	}
	c.checkFailIfNotMeasured(m.Params, p+".params")
	for i, in := range m.Instances {
		c.checkFailIfNotMeasured(in.Params, fmt.Sprintf("%s.instances[%d].params", p, i))
	}
	if m.Method == "" || c.opts.KnownMethods == nil || c.opts.KnownMethods[m.Method] {
		return
	}
	msg := fmt.Sprintf("unknown measurement method %q (%s)", m.Method, knownHint(m.Method, c.opts.KnownMethods))
	if c.opts.SkipUnsupported {
		pos := c.dec.pos[p+".method"]
		c.out.Unsupported = append(c.out.Unsupported, Unsupported{Method: m.Method, Identifiers: ids, Where: pos.errorf(p+".method", "%s", msg)})
		return
	}
	c.errAt(p+".method", "%s", msg)
}

// failIfNotMeasuredParam is the measurement param that says what being
// not measured means to the run (measurements.FailIfNotMeasuredParam): a
// boolean, checked before the run so that a typo does not surface as a
// failed step hours in.
const failIfNotMeasuredParam = "failIfNotMeasured"

func (c *compiler) checkFailIfNotMeasured(params map[string]any, p string) {
	v, ok := params[failIfNotMeasuredParam]
	if !ok || v == nil {
		return
	}
	switch b := v.(type) {
	case bool:
		return
	case string:
		if _, err := strconv.ParseBool(b); err == nil {
			return
		}
	}
	c.errAt(p+"."+failIfNotMeasuredParam, "want true or false, got %T %v", v, v)
}

func knownHint(method string, known map[string]bool) string {
	var names []string
	for n, ok := range known {
		if ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if s := suggest(method, names); s != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	if len(names) == 0 {
		return "no measurement methods are known"
	}
	return "known: " + strings.Join(names, ", ")
}
