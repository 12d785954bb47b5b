package config

import (
	"fmt"
	"maps"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// expandSteps replaces every module step of the steps list seq (written in
// src, rendered with mapping) by the steps of its module, recursively, and
// records for every remaining step the file and field path it came from.
//
// Expansion works on YAML nodes rather than decoded steps so that each
// spliced step keeps the positions of its own file for error messages.
func (c *compiler) expandSteps(seq *yaml.Node, src *source, mapping map[string]any, prefix string) {
	seq = c.dec.resolve(seq, src, prefix+"steps")
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return // the decoder reports what is wrong with it
	}
	var out []*yaml.Node
	for i, item := range seq.Content {
		p := fmt.Sprintf("%ssteps[%d]", prefix, i)
		if m := c.dec.resolve(item, src, p); m != nil && m.Kind == yaml.MappingNode && findKey(m, "module") != nil {
			out = append(out, c.expandModule(m, src, mapping, p)...)
			continue
		}
		c.dec.scopes[item] = scope{src, p}
		out = append(out, item)
	}
	seq.Content = out
}

// expandModule returns the steps of the module named by step, expanded.
// On any error it reports it and returns no steps, so that the compiled
// config never holds a module step.
func (c *compiler) expandModule(step *yaml.Node, src *source, mapping map[string]any, p string) []*yaml.Node {
	var st Step
	c.dec.decode(step, reflect.ValueOf(&st).Elem(), src, p)
	var others []string
	for _, f := range []string{"phases", "measurements"} {
		if _, set := c.dec.pos[p+"."+f]; set {
			others = append(others, f)
		}
	}
	if len(others) > 0 {
		c.errAt(p, "a step needs exactly one of phases, measurements or module; found module and %s", strings.Join(others, " and "))
		return nil
	}
	if st.Module == nil || st.Module.Path == "" {
		c.errAt(p+".module.path", "required (the module file; \"/x.yaml\" is relative to the config's folder)")
		return nil
	}
	field := p + ".module"
	abs, disp := c.r.resolve(src, st.Module.Path)
	if err := checkInclude(src, abs, "module"); err != nil {
		c.errAt(field+".path", "%v", err)
		return nil
	}
	msrc, err := readSource(abs, disp, src)
	if err != nil {
		c.errAt(field+".path", "%v", readError(st.Module.Path, abs, err))
		return nil
	}
	merged := maps.Clone(mapping)
	maps.Copy(merged, st.Module.Params)
	if e := c.r.render(msrc, merged); e != nil {
		if e.Field == "" {
			e.Field = field
		}
		c.add(e)
		return nil
	}
	c.record(msrc, field)
	doc, e := parseYAML(msrc)
	if e != nil {
		e.Field = field
		c.add(e)
		return nil
	}
	if doc == nil {
		return nil // an empty module contributes no steps
	}
	steps := c.moduleSteps(c.dec.resolve(doc.Content[0], msrc, field), msrc, field)
	if steps == nil {
		return nil
	}
	c.expandSteps(steps, msrc, merged, field+".")
	return steps.Content
}

// moduleSteps finds the steps list of a module file: a mapping with the
// one key "steps" (clusterloader2's form), or a bare list of steps.
func (c *compiler) moduleSteps(root *yaml.Node, msrc *source, field string) *yaml.Node {
	if root == nil || isNull(root) {
		return nil
	}
	var steps *yaml.Node
	switch root.Kind {
	case yaml.SequenceNode:
		steps = root
	case yaml.MappingNode:
		for i := 0; i+1 < len(root.Content); i += 2 {
			k := root.Content[i]
			if k.Kind == yaml.ScalarNode && strings.EqualFold(k.Value, "steps") && steps == nil {
				k.Value = "steps"
				steps = root.Content[i+1]
				continue
			}
			c.add(position{msrc, k.Line, k.Column}.errorf(field, "unknown field %q in a module file (valid: steps)", k.Value))
		}
	default:
		c.add(position{msrc, root.Line, root.Column}.errorf(field, "a module file holds \"steps: [...]\", got %s", describeNode(root)))
		return nil
	}
	if steps == nil {
		return nil
	}
	if steps = c.dec.resolve(steps, msrc, field+".steps"); steps == nil || isNull(steps) {
		return nil
	}
	if steps.Kind != yaml.SequenceNode {
		c.add(position{msrc, steps.Line, steps.Column}.errorf(field+".steps", "want a list of steps, got %s", describeNode(steps)))
		return nil
	}
	return steps
}
