package tuningset

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kscale/kscale/framework/config"
)

// Registry holds the tuning sets of one test run by name. Building them once
// per run is what makes a globalQPSLoad set one token bucket for every phase
// that names it; other types keep no state between Executes, so sharing
// their instance changes nothing.
type Registry struct {
	sets map[string]TuningSet
}

// NewRegistry validates every spec — reporting all problems, duplicate
// names included — and builds the sets with opts.
func NewRegistry(specs []config.TuningSet, opts ...Option) (*Registry, error) {
	var errs []error
	first := make(map[string]int, len(specs))
	for i, spec := range specs {
		if j, dup := first[spec.Name]; dup && spec.Name != "" {
			errs = append(errs, fmt.Errorf("%s: duplicate name: tuningSets[%d] and tuningSets[%d] are both named %q", setPath(spec.Name), j, i, spec.Name))
			continue
		}
		first[spec.Name] = i
		if err := Validate(spec); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	e := newEnv(opts)
	r := &Registry{sets: make(map[string]TuningSet, len(specs))}
	for _, spec := range specs {
		r.sets[spec.Name] = build(spec, e)
	}
	return r, nil
}

// Get returns the set a phase names; every call for one name returns the
// same instance.
func (r *Registry) Get(name string) (TuningSet, error) {
	if ts, ok := r.sets[name]; ok {
		return ts, nil
	}
	names := r.Names()
	if len(names) == 0 {
		return nil, fmt.Errorf("tuning set %q is not defined: the config defines no tuningSets", name)
	}
	return nil, fmt.Errorf("tuning set %q is not defined; defined: %s", name, strings.Join(names, ", "))
}

// Names lists the defined sets, sorted, for messages and listings.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.sets))
	for n := range r.sets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
