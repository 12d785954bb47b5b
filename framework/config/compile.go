package config

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// Options are the inputs of a compile besides the config file.
type Options struct {
	// Overrides are --testoverrides files, applied in order.
	Overrides []string
	// Nodes is the node count of the run, the template value .Nodes.
	// Zero or less means unknown: .Nodes is then only set if an override
	// file sets it.
	Nodes int
	// Environ supplies the CL2_* template values; nil means os.Environ().
	// Tests pass an empty, non-nil slice to be independent of the host.
	Environ []string
	// KnownMethods are the measurement methods this build implements.
	// Nil skips the check (for example when only the syntax is wanted).
	KnownMethods map[string]bool
	// SkipUnsupported reports measurements with unknown methods in
	// Compiled.Unsupported instead of failing the compile, for users who
	// want to run the rest of a clusterloader2 config; the caller must
	// tell the user about them.
	SkipUnsupported bool
	// StrictTemplates makes a template key nobody set an error. Without
	// it the key renders empty, as clusterloader2 renders it, and
	// Compiled.Warnings names it.
	StrictTemplates bool
}

// Compiled is a config ready to run: rendered, modules expanded, decoded,
// defaulted and validated. It also renders the object templates the config
// names, with the run's mapping.
type Compiled struct {
	Config *Config
	// YAML is the expanded config (modules spliced in, keys spelt as in
	// the format), the content of generatedConfig_<name>.yaml.
	YAML []byte
	// Mapping is the template mapping of the run (overrides, Nodes,
	// ImageRegistry, CL2_*).
	Mapping map[string]any
	// Dir is the absolute folder of the top config, which object template
	// paths and "/" paths are relative to.
	Dir string
	// Rendered holds the rendered text of the config and of each module,
	// keyed by the file name used in error messages.
	Rendered map[string][]byte
	// Unsupported lists measurement entries whose method is not in
	// Options.KnownMethods, when Options.SkipUnsupported is set.
	Unsupported []Unsupported
	// SkippedDependencies lists dependencies kscale cannot set up, when
	// Options.SkipUnsupported is set; they are left out of Config and
	// the caller must tell the user about them.
	SkippedDependencies []Unsupported

	r       *renderer
	mu      sync.Mutex
	objects map[string]*objectTemplate
}

// Warnings are the template keys nobody set that the config, its modules
// and its objects (index 0, rendered at compile time) use, each with where
// it is used; they rendered empty.
func (c *Compiled) Warnings() []*Error { return c.r.Warnings() }

// Unsupported is a measurement entry kscale cannot run.
type Unsupported struct {
	Method      string
	Identifiers []string
	Where       *Error // position and field path of the method; Msg says why
}

// defaultDeleteNamespaceTimeout is clusterloader2's default.
const defaultDeleteNamespaceTimeout = 10 * time.Minute

// compiler holds the state of one Compile.
type compiler struct {
	opts     Options
	r        *renderer
	dec      *decoder
	out      *Compiled
	rendered map[string][]byte
	seen     map[string]bool // template errors already reported
}

// Compile reads the config at path and everything it names, and returns it
// ready to run or every problem found, as an ErrorList.
//
// Stages: build the mapping; render the config template; parse it; expand
// module steps in place (recursively, each module rendered with its params
// over the including file's mapping); decode with case-insensitive keys;
// apply defaults; validate, including a trial render of every object
// template at index 0. A failing stage stops the compile when later stages
// could only report consequences of it; otherwise errors are collected.
func Compile(path string, opts Options) (*Compiled, error) {
	mapping, err := BuildMapping(opts)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, ErrorList{{File: path, Msg: err.Error()}}
	}
	disp := filepath.Clean(path)
	r := &renderer{topAbs: filepath.Dir(abs), topDisp: filepath.Dir(disp), strict: opts.StrictTemplates}
	c := &compiler{opts: opts, r: r, dec: newDecoder(), rendered: map[string][]byte{}}
	c.out = &Compiled{Mapping: mapping, Dir: r.topAbs, r: r, objects: map[string]*objectTemplate{}}

	top, err := readSource(abs, disp, nil)
	if err != nil {
		return nil, ErrorList{{File: disp, Msg: fmt.Sprintf("cannot read config: %v", err)}}
	}
	if e := r.render(top, mapping); e != nil {
		return nil, ErrorList{e}
	}
	c.record(top, "")
	doc, e := parseYAML(top)
	if e != nil {
		return nil, ErrorList{e}
	}
	if doc == nil {
		return nil, ErrorList{{File: top.label(), Msg: "the config is empty"}}
	}
	root := c.dec.resolve(doc.Content[0], top, "")
	if root == nil || root.Kind != yaml.MappingNode {
		what := "nothing"
		if root != nil {
			what = describeNode(root)
		}
		return nil, ErrorList{{File: top.label(), Line: doc.Line, Col: doc.Column, Msg: "a config must be a mapping (name, namespace, tuningSets, steps, ...), got " + what}}
	}

	if steps := findKey(root, "steps"); steps != nil {
		c.expandSteps(steps, top, mapping, "")
	}
	cfg := &Config{}
	c.dec.decode(root, reflect.ValueOf(cfg).Elem(), top, "")
	c.applyDefaults(cfg)
	c.validate(cfg, c.stepPaths(root, len(cfg.Steps)))
	if len(c.out.SkippedDependencies) > 0 {
		cfg.Dependencies = nil // every one is unsupported (see validate)
	}
	if len(c.dec.errs) > 0 {
		return nil, c.dec.errs
	}

	out, err := encodeYAML(doc)
	if err != nil {
		return nil, ErrorList{{File: top.label(), Msg: err.Error()}}
	}
	c.out.Config = cfg
	c.out.YAML = out
	c.out.Rendered = c.rendered
	return c.out, nil
}

func (c *compiler) add(e *Error) { c.dec.errs = append(c.dec.errs, e) }

// record keeps a rendered file for Compiled.Rendered under the name its
// errors use. A module rendered twice with different results gets a name
// saying which step it was rendered for, so positions stay unambiguous.
func (c *compiler) record(src *source, field string) {
	key := src.label()
	if prev, ok := c.rendered[key]; ok && !bytes.Equal(prev, src.rendered) {
		key = fmt.Sprintf("%s (rendered for %s)", src.disp, field)
		if !src.aligned {
			src.renderedAs = key
		}
	}
	c.rendered[key] = src.rendered
}

// stepPaths returns, for each step of the expanded config, the field path
// it was written at (through modules: steps[2].module.steps[0]).
func (c *compiler) stepPaths(root *yaml.Node, n int) []string {
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("steps[%d]", i)
	}
	if steps := findKey(root, "steps"); steps != nil {
		if steps = c.dec.resolve(steps, nil, ""); steps != nil && len(steps.Content) == n {
			for i, item := range steps.Content {
				if s, ok := c.dec.scopes[item]; ok {
					paths[i] = s.path
				}
			}
		}
	}
	return paths
}

// applyDefaults fills in what clusterloader2 defaults, so the executor
// never has to guess.
func (c *compiler) applyDefaults(cfg *Config) {
	ns := &cfg.Namespace
	switch a := cfg.AutomanagedNamespaces; {
	case a < 0:
		c.errAt("automanagedNamespaces", "must be > 0, got %d", a)
	case a > 0 && ns.Number > 0 && ns.Number != a:
		c.errAt("automanagedNamespaces", "%d disagrees with namespace.number %d (it is the older name of the same thing)", a, ns.Number)
	case a > 0:
		ns.Number = a
	}
	cfg.AutomanagedNamespaces = 0
	if ns.Number == 0 {
		ns.Number = 1
	}
	if ns.Prefix == "" {
		ns.Prefix = "test-" + randomSuffix(6)
	}
	for _, b := range []struct {
		p   **bool
		def bool
	}{{&ns.DeleteStaleNamespaces, false}, {&ns.DeleteAutomanagedNamespaces, true}, {&ns.EnableExistingNamespaces, false}} {
		if *b.p == nil {
			v := b.def
			*b.p = &v
		}
	}
	if ns.DeleteNamespaceTimeout == 0 {
		ns.DeleteNamespaceTimeout = Duration(defaultDeleteNamespaceTimeout)
	}
}

func randomSuffix(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}

func encodeYAML(doc *yaml.Node) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("cannot write the expanded config: %v", r)
		}
	}()
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("cannot write the expanded config: %v", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("cannot write the expanded config: %v", err)
	}
	return b.Bytes(), nil
}
