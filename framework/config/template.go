package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"
)

// maxRendered bounds the output of one template execution; no real config
// comes near it, and a runaway range should fail rather than eat memory.
const maxRendered = 64 << 20

// maxIncludeDepth bounds nested IncludeEmbedFile and module expansion.
const maxIncludeDepth = 32

var errTooBig = fmt.Errorf("rendered output exceeds %d MiB", maxRendered>>20)

// renderer renders the templates of one compiled config. It knows the top
// config's folder because paths starting with "/" are relative to it.
type renderer struct {
	topAbs  string // absolute folder of the top config
	topDisp string // the same folder as the user wrote it
	// strict makes a key nobody set an error (Options.StrictTemplates);
	// otherwise it renders empty, as in clusterloader2, and is warned of.
	strict bool

	mu       sync.Mutex
	warnings []*Error
}

// resolve turns a path written in a template or config into the absolute
// and the displayed path. As in clusterloader2, a path is relative to the
// top config's folder, whichever file names it ("/x" too). A path that
// names no file there but one beside the file that names it is taken from
// there, so that a module may also name its neighbours.
func (r *renderer) resolve(from *source, p string) (abs, disp string) {
	rel := strings.TrimPrefix(p, "/")
	abs, disp = filepath.Join(r.topAbs, rel), filepath.Join(r.topDisp, rel)
	if rel != p || from == nil {
		return abs, disp
	}
	if _, err := os.Stat(abs); err == nil {
		return abs, disp
	}
	local := filepath.Join(filepath.Dir(from.abs), p)
	if _, err := os.Stat(local); err == nil {
		return local, filepath.Join(filepath.Dir(from.disp), p)
	}
	return abs, disp
}

// render parses and executes src with data and records the rendered text.
func (r *renderer) render(src *source, data any) *Error {
	t, err := r.parse(src)
	if err != nil {
		return err
	}
	out, err := r.execute(src, t, data)
	if err != nil {
		return err
	}
	src.rendered = out
	src.aligned = linesAligned(src.text, out)
	return nil
}

// parse parses src as a template with the kscale functions.
//
// Templates execute with missingkey=error so that a misspelt parameter is
// an error, not "<no value>" in a rendered field. Clusterloader2 configs
// however write {{$X := DefaultParam .CL2_X 5}} for optional parameters,
// and missingkey=error would fail on .CL2_X before DefaultParam runs. So
// the first argument of every DefaultParam call that is a field (.A.B) or
// a variable's field ($.A) is rewritten to (index . "A" "B"), which yields
// nil for a missing key, and DefaultParam turns nil into the default.
// Every other reference to a missing key stays an error.
func (r *renderer) parse(src *source) (*template.Template, *Error) {
	return r.parseWith(src, "missingkey=error")
}

// parseWith parses with a given missingkey option; object templates of
// deletions use "missingkey=default" (see ObjectVars.Lenient).
func (r *renderer) parseWith(src *source, missingKey string) (*template.Template, *Error) {
	t, err := template.New(src.disp).Funcs(r.funcMap(src)).Option(missingKey).Parse(string(src.text))
	if err != nil {
		return nil, templateError(src, err)
	}
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			lenientDefaults(tt.Tree, tt.Tree.Root)
		}
	}
	return t, nil
}

// execute runs t on data. A key nobody set fails the strict template; then,
// unless the renderer is strict, the text is rendered again as
// clusterloader2 renders it, the key empty, and the failure is kept as a
// warning.
func (r *renderer) execute(src *source, t *template.Template, data any) ([]byte, *Error) {
	out, e := execute(src, t, data)
	if e == nil || r.strict || !strings.Contains(e.Msg, missingKeyMsg) {
		return out, e
	}
	lenient, pe := r.parseWith(src, "missingkey=default")
	if pe != nil {
		return nil, pe
	}
	out, le := execute(src, lenient, data)
	if le != nil {
		return nil, le
	}
	r.warn(e)
	return out, nil
}

// missingKeyMsg is how text/template says a key is missing.
const missingKeyMsg = "map has no entry for key"

// warn records a missing key once, with where it is used.
func (r *renderer) warn(e *Error) {
	w := *e
	w.Msg += " (renders empty, as in clusterloader2; --strict-templates makes it an error)"
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.warnings {
		if *o == w {
			return
		}
	}
	r.warnings = append(r.warnings, &w)
}

// Warnings returns what the renders so far warned of.
func (r *renderer) Warnings() []*Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.warnings)
}

func execute(src *source, t *template.Template, data any) ([]byte, *Error) {
	w := &limitedBuffer{max: maxRendered}
	if err := t.Execute(w, data); err != nil {
		if errors.Is(err, errTooBig) {
			return nil, &Error{File: src.disp, Msg: err.Error()}
		}
		return nil, templateError(src, err)
	}
	return w.buf.Bytes(), nil
}

type limitedBuffer struct {
	buf bytes.Buffer
	max int
}

func (w *limitedBuffer) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.max {
		return 0, errTooBig
	}
	return w.buf.Write(p)
}

// lenientDefaults rewrites DefaultParam's first argument; see parse.
func lenientDefaults(tr *parse.Tree, n parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			lenientDefaults(tr, c)
		}
	case *parse.ActionNode:
		lenientDefaults(tr, n.Pipe)
	case *parse.IfNode:
		lenientBranch(tr, &n.BranchNode)
	case *parse.RangeNode:
		lenientBranch(tr, &n.BranchNode)
	case *parse.WithNode:
		lenientBranch(tr, &n.BranchNode)
	case *parse.TemplateNode:
		lenientDefaults(tr, n.Pipe)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			lenientDefaults(tr, c)
		}
	case *parse.CommandNode:
		if len(n.Args) >= 2 {
			if id, ok := n.Args[0].(*parse.IdentifierNode); ok && id.Ident == "DefaultParam" {
				n.Args[1] = missingAsNil(tr, n.Args[1])
			}
		}
		for _, a := range n.Args {
			lenientDefaults(tr, a)
		}
	case *parse.ChainNode:
		lenientDefaults(tr, n.Node)
	}
}

func lenientBranch(tr *parse.Tree, b *parse.BranchNode) {
	lenientDefaults(tr, b.Pipe)
	lenientDefaults(tr, b.List)
	lenientDefaults(tr, b.ElseList)
}

// missingAsNil rewrites .A.B into (index . "A" "B") and $v.A into
// (index $v "A"), keeping the position for error messages.
func missingAsNil(tr *parse.Tree, arg parse.Node) parse.Node {
	var base parse.Node
	var fields []string
	var pos parse.Pos
	switch a := arg.(type) {
	case *parse.FieldNode:
		pos = a.Pos
		base, fields = &parse.DotNode{NodeType: parse.NodeDot, Pos: pos}, a.Ident
	case *parse.VariableNode:
		if len(a.Ident) < 2 {
			return arg
		}
		pos = a.Pos
		base, fields = &parse.VariableNode{NodeType: parse.NodeVariable, Pos: pos, Ident: a.Ident[:1]}, a.Ident[1:]
	default:
		return arg
	}
	args := []parse.Node{parse.NewIdentifier("index").SetTree(tr).SetPos(pos), base}
	for _, f := range fields {
		args = append(args, &parse.StringNode{NodeType: parse.NodeString, Pos: pos, Quoted: strconv.Quote(f), Text: f})
	}
	cmd := &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pos, Args: args}
	return &parse.PipeNode{NodeType: parse.NodePipe, Pos: pos, Cmds: []*parse.CommandNode{cmd}}
}

// templateError turns text/template's "template: NAME:LINE:COL: executing
// "NAME" at <X>: msg" into an Error on the template's own position, with
// the column counted from 1.
func templateError(src *source, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "template: ")
	rest, ok := strings.CutPrefix(msg, src.disp+":")
	if !ok {
		return &Error{File: src.disp, Msg: msg}
	}
	e := &Error{File: src.disp}
	e.Line, rest = leadingInt(rest)
	if r, ok := strings.CutPrefix(rest, ":"); ok && r != "" && r[0] >= '0' && r[0] <= '9' {
		// text/template counts columns from 0; YAML positions and
		// editors count from 1, and one list should not mix the two.
		e.Col, rest = leadingInt(r)
		e.Col++
	}
	rest = strings.TrimPrefix(rest, ": ")
	rest = strings.TrimPrefix(rest, fmt.Sprintf("executing %q ", src.disp))
	e.Msg = rest
	if e.Col == 0 {
		e.Col = firstActionColumn(src.text, e.Line)
	}
	return e
}

// firstActionColumn is where the first action ("{{") of a template line
// starts, counted from 1, or 0 when the line has none. Go's template
// parser reports a line but no column for a parse error (an unclosed
// {{if}}, an unknown function); the action that opens on that line is
// where to look.
func firstActionColumn(text []byte, line int) int {
	lines := bytes.Split(text, []byte("\n"))
	if line < 1 || line > len(lines) {
		return 0
	}
	return bytes.Index(lines[line-1], []byte("{{")) + 1
}

func leadingInt(s string) (int, string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.Atoi(s[:i])
	return n, s[i:]
}

// linesAligned reports whether rendered line N is template line N: same
// number of lines, and every line without a template action unchanged.
// Then positions in the rendered text are positions in the template too,
// and messages can name the plain file.
func linesAligned(tmpl, rendered []byte) bool {
	a := bytes.Split(tmpl, []byte("\n"))
	b := bytes.Split(rendered, []byte("\n"))
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if bytes.Contains(a[i], []byte("{{")) || bytes.Contains(a[i], []byte("}}")) {
			continue
		}
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// readSource reads a template file for a source.
func readSource(abs, disp string, parent *source) (*source, error) {
	text, err := os.ReadFile(abs)
	if err != nil {
		return nil, err
	}
	return &source{disp: disp, abs: abs, text: text, parent: parent}, nil
}

// checkInclude refuses include and module cycles and runaway nesting; kind
// names the relation in the message.
func checkInclude(from *source, abs, kind string) error {
	depth := 0
	var chain []string
	for s := from; s != nil; s = s.parent {
		chain = append([]string{s.disp}, chain...)
		if s.abs == abs {
			return fmt.Errorf("%s cycle: %s -> %s", kind, strings.Join(chain, " -> "), s.disp)
		}
		depth++
	}
	if depth > maxIncludeDepth {
		return fmt.Errorf("%ss nested deeper than %d", kind, maxIncludeDepth)
	}
	return nil
}

// readError says which file could not be read and where it was looked for,
// since "/x" and relative paths resolve against different folders.
func readError(written, abs string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("cannot read %q (looked at %s): %v", written, abs, err)
}
