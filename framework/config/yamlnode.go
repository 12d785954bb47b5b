package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	goccy "github.com/goccy/go-yaml"
	goccyparser "github.com/goccy/go-yaml/parser"
	"gopkg.in/yaml.v3"
)

// parseYAML parses the rendered text of src into a document node, or nil
// for an empty file. A config is one document: a second one would be
// ignored by a plain yaml.Unmarshal, which hides mistakes.
func parseYAML(src *source) (doc *yaml.Node, e *Error) {
	defer func() {
		// yaml.v3 is third-party code fed user input; never let a bug
		// there take the whole run down.
		if r := recover(); r != nil {
			doc, e = nil, &Error{File: src.label(), Msg: fmt.Sprintf("invalid YAML: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(src.rendered))
	var first yaml.Node
	if err := dec.Decode(&first); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, yamlError(src, err)
	}
	var second yaml.Node
	switch err := dec.Decode(&second); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, yamlError(src, err)
	default:
		return nil, &Error{File: src.label(), Line: second.Line, Col: second.Column,
			Msg: "a second YAML document; a config file holds exactly one (remove the '---')"}
	}
	if len(first.Content) == 0 {
		return nil, nil
	}
	return &first, nil
}

// yamlError turns "yaml: line 5: msg" into a positioned Error. yaml.v3
// gives only a line, and for some errors the line before the mistake, so
// the position comes from a second parser (goccy/go-yaml) that reports the
// offending token's line and column, when it finds the same file broken.
func yamlError(src *source, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := &Error{File: src.label(), Msg: "invalid YAML: " + msg}
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, tail, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(n); err == nil {
				e.Line, e.Msg = line, "invalid YAML: "+tail
			}
		}
	}
	if line, col, ok := syntaxErrorPosition(src.rendered); ok {
		e.Line, e.Col = line, col
	}
	return e
}

// syntaxErrorPosition is where goccy/go-yaml finds the syntax error in
// text, if it finds one.
func syntaxErrorPosition(text []byte) (line, col int, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false // third-party code fed user input: never crash on it
		}
	}()
	_, err := goccyparser.ParseBytes(text, 0)
	var perr goccy.Error
	if err == nil || !errors.As(err, &perr) || perr.GetToken() == nil || perr.GetToken().Position == nil {
		return 0, 0, false
	}
	pos := perr.GetToken().Position
	return pos.Line, pos.Column, pos.Line > 0
}

// safeDecode is yaml.Node.Decode with its panics turned into errors.
func safeDecode(n *yaml.Node, out any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid value: %v", r)
		}
	}()
	return n.Decode(out)
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describeNode says what a node is, for "want X, got Y" messages.
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}
		if n.ShortTag() == "!!str" {
			return strconv.Quote(n.Value)
		}
		return n.Value
	case yaml.AliasNode:
		return "an alias"
	}
	return "a YAML document"
}

// findKey returns the value of the first key of mapping m equal to name
// ignoring case, the way the decoder will match it.
func findKey(m *yaml.Node, name string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Kind == yaml.ScalarNode && strings.EqualFold(m.Content[i].Value, name) {
			return m.Content[i+1]
		}
	}
	return nil
}
