package config

import (
	"fmt"
	"strings"
)

// Error is one problem with a config, located so that an editor can jump to
// it and a user can tell which field is wrong without reading our code.
//
// File is the file as the user named it. Line and Col are positions in the
// rendered text of that file (the template after execution). When the
// rendered text keeps the template's lines (true for the usual
// clusterloader2 config: parameter lines rendering to blank lines and values
// substituted inside a line), File is the plain path and the line is also
// the template's line; otherwise File is "<path> (rendered)" and the
// rendered text is in Compiled.Rendered. Errors raised by text/template
// itself carry the template's own path, line and column.
type Error struct {
	File  string
	Line  int
	Col   int
	Field string // e.g. steps[2].phases[0].tuningSet
	Msg   string // what is wrong and, where known, what would be valid
}

// Error formats as "file:line:col: field: msg", leaving out what is unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
			if e.Col > 0 {
				fmt.Fprintf(&b, ":%d", e.Col)
			}
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList lets validation report every problem of a config at once, so a
// user fixes them in one round instead of one per run.
type ErrorList []*Error

// Error prints one error per line.
func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// orNil avoids the typed-nil trap of returning an empty ErrorList as error.
func (l ErrorList) orNil() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// source is one template file of a compile: the config, a module, an
// included file or an object template.
type source struct {
	disp     string // the path as shown to the user
	abs      string // the absolute path, for cycle detection and includes
	text     []byte // the template text
	rendered []byte
	aligned  bool    // rendered line N is template line N
	parent   *source // the file that included or embedded this one
	// renderedAs names a second, different rendering of the same file
	// (a module used twice with different params).
	renderedAs string
}

// label names the file the way error positions should be read.
func (s *source) label() string {
	if s == nil {
		return ""
	}
	if s.aligned {
		return s.disp
	}
	if s.renderedAs != "" {
		return s.renderedAs
	}
	return s.disp + " (rendered)"
}

// position is where a YAML node of a rendered file starts.
type position struct {
	src       *source
	line, col int
}

func (p position) errorf(field, format string, args ...any) *Error {
	return &Error{File: p.src.label(), Line: p.line, Col: p.col, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// suggest returns the candidate closest to s when it is close enough to be
// a likely typo, so messages can say `did you mean "X"?`.
func suggest(s string, candidates []string) string {
	limit := max(2, len(s)/4)
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestDist && d < len(s) {
			best, bestDist = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
