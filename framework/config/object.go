package config

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"gopkg.in/yaml.v3"
)

// ObjectVars are the per-object template values the executor knows when it
// creates, updates or deletes object <BaseName>-<Index> in Namespace.
type ObjectVars struct {
	Name      string // <BaseName>-<Index>
	Index     int
	Namespace string // "" for cluster-scoped objects
	BaseName  string
	// TemplateFillMap is the object's templateFillMap from the config.
	TemplateFillMap map[string]any
	// Lenient renders a missing key as "<no value>" instead of failing.
	// Use it when only apiVersion, kind and metadata.name are read, that
	// is for deletions: clusterloader2 configs commonly omit the
	// templateFillMap in deleting phases (replicasPerNamespace: 0) while
	// their templates reference its keys, and clusterloader2 tolerates it.
	Lenient bool
}

// objectTemplate is an object template parsed once per run; objects are
// rendered from it thousands of times, possibly concurrently.
type objectTemplate struct {
	src *source
	// strict and lenient are the template parsed with missingkey=error and
	// missingkey=default; lenient is parsed on first use.
	strict, lenient *template.Template
}

// RenderObject renders the object template at path (relative to Dir; a
// leading "/" too) for one object and returns YAML for the executor to
// decode. The template sees the run's mapping, then the templateFillMap
// entries, then Name, Index, Namespace and BaseName, later ones winning.
// It is safe for concurrent use.
func (c *Compiled) RenderObject(path string, vars ObjectVars) ([]byte, error) {
	ot, err := c.objectTemplate(path)
	if err != nil {
		return nil, err
	}
	out, e := c.execObject(ot, vars)
	if e != nil {
		return nil, e
	}
	return out, nil
}

// objectTemplate returns the parsed template at path, reading and parsing
// it on first use. The error is a read error or a template *Error.
func (c *Compiled) objectTemplate(path string) (*objectTemplate, error) {
	rel := strings.TrimPrefix(path, "/")
	abs := filepath.Join(c.Dir, rel)
	c.mu.Lock()
	ot, ok := c.objects[abs]
	c.mu.Unlock()
	if ok {
		return ot, nil
	}
	text, err := os.ReadFile(abs)
	if err != nil {
		return nil, readError(path, abs, err)
	}
	src := &source{disp: filepath.Join(c.r.topDisp, rel), abs: abs, text: text}
	t, e := c.r.parse(src)
	if e != nil {
		return nil, e
	}
	ot = &objectTemplate{src: src, strict: t}
	c.mu.Lock()
	if prev, ok := c.objects[abs]; ok {
		ot = prev // another goroutine won; keep one template per file
	} else {
		c.objects[abs] = ot
	}
	c.mu.Unlock()
	return ot, nil
}

func (c *Compiled) execObject(ot *objectTemplate, vars ObjectVars) ([]byte, *Error) {
	data := maps.Clone(c.Mapping)
	if data == nil {
		data = map[string]any{}
	}
	maps.Copy(data, vars.TemplateFillMap)
	data["Name"] = vars.Name
	data["Index"] = vars.Index
	data["Namespace"] = vars.Namespace
	data["BaseName"] = vars.BaseName
	if vars.Lenient {
		lt, e := c.lenient(ot)
		if e != nil {
			return nil, e
		}
		return execute(ot.src, lt, data)
	}
	out, e := execute(ot.src, ot.strict, data)
	if e == nil || c.r.strict || !strings.Contains(e.Msg, missingKeyMsg) {
		return out, e
	}
	// A key nobody set renders empty, as in clusterloader2 (see
	// renderer.execute), from the lenient template parsed once.
	lt, le := c.lenient(ot)
	if le != nil {
		return nil, le
	}
	if out, le = execute(ot.src, lt, data); le != nil {
		return nil, le
	}
	c.r.warn(e)
	return out, nil
}

// lenient returns the template parsed with missingkey=default, parsing it
// on first use.
func (c *Compiled) lenient(ot *objectTemplate) (*template.Template, *Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ot.lenient == nil {
		lt, e := c.r.parseWith(ot.src, "missingkey=default")
		if e != nil {
			return nil, e
		}
		ot.lenient = lt
	}
	return ot.lenient, nil
}

// checkObject validates an object entry and trial-renders its template for
// index 0, so that a broken template or a missing parameter is found
// before the run starts rather than after an hour of load. Objects of a
// deleting phase are rendered leniently, as the executor will (see
// ObjectVars.Lenient).
func (c *compiler) checkObject(obj *Object, p, namespace string, deleting bool) {
	if obj.Basename == "" {
		c.errAt(p+".basename", "required (objects are named <basename>-<index>)")
	}
	if obj.ObjectTemplatePath == "" {
		c.errAt(p+".objectTemplatePath", "required")
		return
	}
	ot, err := c.out.objectTemplate(obj.ObjectTemplatePath)
	if err != nil {
		if e, ok := err.(*Error); ok {
			c.addOnce(e, p)
		} else {
			c.errAt(p+".objectTemplatePath", "%v", err)
		}
		return
	}
	out, e := c.out.execObject(ot, ObjectVars{
		Name: obj.Basename + "-0", Index: 0, Namespace: namespace, BaseName: obj.Basename,
		TemplateFillMap: obj.TemplateFillMap, Lenient: deleting,
	})
	if e != nil {
		e.Msg += " (trial render for index 0)"
		c.addOnce(e, p)
		return
	}
	rsrc := &source{disp: ot.src.disp, text: ot.src.text, rendered: out, aligned: linesAligned(ot.src.text, out)}
	doc, e := parseYAML(rsrc)
	if e != nil {
		c.addOnce(e, p)
		return
	}
	var root *yaml.Node
	if doc != nil {
		root = doc.Content[0]
	}
	if root == nil || root.Kind != yaml.MappingNode {
		c.addOnce(&Error{File: rsrc.label(), Msg: "an object template must render to a Kubernetes object (a mapping with apiVersion and kind)"}, p)
		return
	}
	for _, k := range []string{"apiVersion", "kind"} {
		v := findExactKey(root, k)
		if v == nil || v.Kind != yaml.ScalarNode || v.Value == "" {
			c.addOnce(&Error{File: rsrc.label(), Line: root.Line, Col: root.Column, Msg: fmt.Sprintf("the rendered object has no %s", k)}, p)
		}
	}
}

// addOnce reports an error about a template file once, however many
// objects use the template, naming the first field path that uses it.
func (c *compiler) addOnce(e *Error, field string) {
	key := e.Error()
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	if e.Field == "" {
		e.Field = field
	}
	c.add(e)
}

// findExactKey matches Kubernetes object keys, which are case-sensitive.
func findExactKey(m *yaml.Node, name string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Kind == yaml.ScalarNode && m.Content[i].Value == name {
			return m.Content[i+1]
		}
	}
	return nil
}
