package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxAliases bounds alias expansion so that a small file of nested aliases
// cannot make the decoder build millions of objects.
const maxAliases = 10000

// decoder fills the config types from YAML nodes.
//
// It exists because clusterloader2 configs are read by Go's JSON decoder,
// which matches keys case-insensitively, and real configs rely on it
// (Method, Identifier, Params, Instances). yaml.v3 matches exactly and drops
// unknown keys, so this decoder walks the node tree alongside the Go types,
// matches keys to yaml tags ignoring case, rewrites them to the tag's
// spelling (so the generated YAML is canonical) and reports unknown and
// duplicate keys with their positions. Maps (params, templateFillMap) and
// scalars are left to yaml.v3, so params keep their keys as written.
type decoder struct {
	errs    ErrorList
	pos     map[string]position // field path → where its value is written
	bad     map[string]bool     // field paths whose value could not be decoded
	scopes  map[*yaml.Node]scope
	aliases int
}

// scope re-homes a node: steps spliced in from a module belong to the
// module's file and carry a field path through the including step.
type scope struct {
	src  *source
	path string
}

func newDecoder() *decoder {
	return &decoder{pos: map[string]position{}, bad: map[string]bool{}, scopes: map[*yaml.Node]scope{}}
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

func (d *decoder) decode(n *yaml.Node, v reflect.Value, src *source, path string) {
	if s, ok := d.scopes[n]; ok {
		src, path = s.src, s.path
	}
	n = d.resolve(n, src, path)
	if n == nil {
		return
	}
	d.pos[path] = position{src, n.Line, n.Column}
	if isNull(n) {
		return // absent and null both mean the zero value
	}
	t := v.Type()
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		d.scalar(n, v, src, path)
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		d.decode(n, p.Elem(), src, path)
		v.Set(p)
	case reflect.Struct:
		d.structure(n, v, src, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.fail(n, src, path, "want a list, got %s", describeNode(n))
			return
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			d.decode(item, s.Index(i), src, fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	default:
		d.scalar(n, v, src, path)
	}
}

// resolve follows aliases, within the alias budget.
func (d *decoder) resolve(n *yaml.Node, src *source, path string) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		d.aliases++
		if d.aliases > maxAliases {
			if d.aliases == maxAliases+1 {
				d.fail(n, src, path, "more than %d alias expansions; simplify the anchors", maxAliases)
			}
			return nil
		}
		n = n.Alias
	}
	return n
}

type fieldInfo struct {
	name  string // the yaml tag
	index int
}

func fieldsOf(t reflect.Type) []fieldInfo {
	var fs []fieldInfo
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name[:1]) + f.Name[1:]
		}
		fs = append(fs, fieldInfo{name, i})
	}
	return fs
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, src *source, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, src, path, "want a mapping, got %s", describeNode(n))
		return
	}
	fields := fieldsOf(v.Type())
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	seen := map[int]*yaml.Node{}
	for _, kv := range d.pairs(n, src, path) {
		k, val := kv[0], kv[1]
		if k.Kind != yaml.ScalarNode {
			d.fail(k, src, path, "a key must be a plain name, got %s", describeNode(k))
			continue
		}
		var f *fieldInfo
		for i := range fields {
			if strings.EqualFold(fields[i].name, k.Value) {
				f = &fields[i]
				break
			}
		}
		if f == nil {
			msg := fmt.Sprintf("unknown field %q", k.Value)
			if s := suggest(k.Value, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
				// "required" errors about the meant field would only
				// repeat this one.
				d.bad[joinPath(path, s)] = true
			} else {
				msg += fmt.Sprintf(" (valid: %s)", strings.Join(names, ", "))
			}
			d.errs = append(d.errs, position{src, k.Line, k.Column}.errorf(path, "%s", msg))
			continue
		}
		fp := joinPath(path, f.name)
		if prev, dup := seen[f.index]; dup {
			d.errs = append(d.errs, position{src, k.Line, k.Column}.errorf(fp,
				"%q is set twice (also as %q at line %d); keys match ignoring case", k.Value, prev.Value, prev.Line))
			continue
		}
		seen[f.index] = k
		k.Value = f.name
		d.decode(val, v.Field(f.index), src, fp)
	}
}

// pairs lists the key/value pairs of a mapping with YAML merge keys ("<<")
// applied: explicit keys win over merged ones.
func (d *decoder) pairs(n *yaml.Node, src *source, path string) [][2]*yaml.Node {
	var explicit, merged [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			v = d.resolve(v, src, path)
			if v == nil {
				continue
			}
			sources := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				sources = v.Content
			}
			for _, m := range sources {
				if m = d.resolve(m, src, path); m == nil {
					continue
				}
				if m.Kind != yaml.MappingNode {
					d.fail(m, src, path, "a merge (<<) needs a mapping, got %s", describeNode(m))
					continue
				}
				merged = append(merged, d.pairs(m, src, path)...)
			}
			continue
		}
		explicit = append(explicit, [2]*yaml.Node{k, v})
	}
	out := explicit
	for _, m := range merged {
		overridden := false
		for _, e := range out {
			if e[0].Kind == yaml.ScalarNode && strings.EqualFold(e[0].Value, m[0].Value) {
				overridden = true
				break
			}
		}
		if !overridden {
			out = append(out, m)
		}
	}
	return out
}

// scalar decodes scalars, maps and yaml.Unmarshalers with yaml.v3 and
// rewrites its errors into "want X, got Y" at the node's position.
func (d *decoder) scalar(n *yaml.Node, v reflect.Value, src *source, path string) {
	p := reflect.New(v.Type())
	if err := safeDecode(n, p.Interface()); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			d.fail(n, src, path, "want %s, got %s", describeType(v.Type()), describeNode(n))
		} else {
			d.fail(n, src, path, "%v", err)
		}
		return
	}
	v.Set(p.Elem())
}

func (d *decoder) fail(n *yaml.Node, src *source, path, format string, args ...any) {
	d.bad[path] = true
	d.errs = append(d.errs, position{src, n.Line, n.Column}.errorf(path, format, args...))
}

func describeType(t reflect.Type) string {
	if t == reflect.TypeFor[Duration]() {
		return "a duration (like 30s or 5m)"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Map:
		return "a mapping"
	case reflect.Slice:
		return "a list"
	}
	return t.String()
}

func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// parentPath drops the last element of a field path:
// "a.b[2].c" → "a.b[2]" → "a.b" → "a" → "".
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}
