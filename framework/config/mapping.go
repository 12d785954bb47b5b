package config

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// DefaultImageRegistry is the ImageRegistry template value unless an
// override file sets another; object templates of clusterloader2 configs
// build image names from it.
const DefaultImageRegistry = "registry.k8s.io"

// envPrefix marks the environment variables that become template values.
// The variable's full name is the key (CL2_FOO → .CL2_FOO), because that is
// how clusterloader2 configs refer to them.
const envPrefix = "CL2_"

// BuildMapping builds the template mapping of a run from the override
// files, the environment and the node count.
//
// Override files are applied in order and a later file may change what an
// earlier one set: that is how users layer a site file over a test's
// defaults. Across kinds of source (an override file, an environment
// variable, the node count) a key given two different values is an error
// naming both, because one of them would be silently ignored otherwise.
// ImageRegistry is only a default: any override replaces it.
func BuildMapping(opts Options) (map[string]any, error) {
	type setting struct {
		val  any
		from string // the source, for conflict messages
		pos  *Error // where it was set in an override file
	}
	var errs ErrorList

	overrides := map[string]setting{}
	for _, path := range opts.Overrides {
		vals, err := readOverrides(path)
		if err != nil {
			errs = append(errs, err...)
			continue
		}
		for _, kv := range vals {
			overrides[kv.key] = setting{val: kv.val, from: kv.pos.File, pos: kv.pos}
		}
	}

	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	env := map[string]setting{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, envPrefix) {
			continue
		}
		env[k] = setting{val: ParseEnvValue(v), from: "environment variable " + k + "=" + v}
	}

	mapping := map[string]any{"ImageRegistry": DefaultImageRegistry}
	for _, k := range sortedKeys(overrides) {
		mapping[k] = overrides[k].val
	}
	for _, k := range sortedKeys(env) {
		e := env[k]
		if o, ok := overrides[k]; ok && !sameValue(o.val, e.val) {
			errs = append(errs, &Error{File: o.pos.File, Line: o.pos.Line, Col: o.pos.Col, Field: k,
				Msg: fmt.Sprintf("set to %s here but to %s by %s; remove one of them", describeValue(o.val), describeValue(e.val), e.from)})
		}
		mapping[k] = e.val
	}
	if opts.Nodes > 0 {
		if o, ok := overrides["Nodes"]; ok && !sameValue(o.val, opts.Nodes) {
			errs = append(errs, &Error{File: o.pos.File, Line: o.pos.Line, Col: o.pos.Col, Field: "Nodes",
				Msg: fmt.Sprintf("set to %s here but the node count of the run is %d; remove one of them", describeValue(o.val), opts.Nodes)})
		}
		mapping["Nodes"] = opts.Nodes
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return mapping, nil
}

// ParseEnvValue types an environment value the way clusterloader2 does, so
// that templates can compute with CL2_* numbers and test CL2_* flags:
// an int if it parses as one, else a float, else a bool, else the string.
func ParseEnvValue(s string) any {
	if i, err := strconv.ParseInt(s, 10, 0); err == nil {
		return int(i)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	if b, err := strconv.ParseBool(s); err == nil {
		return b
	}
	return s
}

type overrideValue struct {
	key string
	val any
	pos *Error // file, line and column of the key; Msg unused
}

// readOverrides reads one --testoverrides file: a YAML mapping of template
// values, kept in file order with positions for conflict messages.
func readOverrides(path string) ([]overrideValue, ErrorList) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, ErrorList{{File: path, Msg: fmt.Sprintf("cannot read overrides file: %v", err)}}
	}
	src := &source{disp: path, text: text, rendered: text, aligned: true}
	doc, perr := parseYAML(src)
	if perr != nil {
		return nil, ErrorList{perr}
	}
	if doc == nil {
		return nil, nil // an empty file sets nothing
	}
	root := doc.Content[0]
	if isNull(root) {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, ErrorList{position{src, root.Line, root.Column}.errorf("", "an overrides file must be a mapping of template values, got %s", describeNode(root))}
	}
	var out []overrideValue
	var errs ErrorList
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		p := position{src, k.Line, k.Column}
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			errs = append(errs, p.errorf("", "an override key must be a non-empty name"))
			continue
		}
		var val any
		if err := safeDecode(v, &val); err != nil {
			errs = append(errs, position{src, v.Line, v.Column}.errorf(k.Value, "%v", err))
			continue
		}
		out = append(out, overrideValue{key: k.Value, val: val, pos: p.errorf("", "")})
	}
	return out, errs
}

// sameValue treats numbers as equal by value so that CL2_X=5 and an
// override "X: 5.0" do not count as a conflict.
func sameValue(a, b any) bool {
	fa, aNum := asFloat(a)
	fb, bNum := asFloat(b)
	if aNum && bNum {
		return fa == fb
	}
	return reflect.DeepEqual(a, b)
}

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x)
	}
	return 0, false
}

func describeValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
