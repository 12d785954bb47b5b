package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles creates files (path → content) under a new temporary folder
// and returns the folder.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// compileFiles writes files, changes into their folder and compiles
// config.yaml, with no environment unless opts says otherwise.
func compileFiles(t *testing.T, files map[string]string, opts Options) (*Compiled, error) {
	t.Helper()
	// Run in the folder so that messages name files as a user would.
	t.Chdir(writeFiles(t, files))
	if opts.Environ == nil {
		opts.Environ = []string{}
	}
	return Compile("config.yaml", opts)
}

// errorLines returns the lines of an ErrorList, failing if err is not one.
func errorLines(t *testing.T, err error) []string {
	t.Helper()
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("want an ErrorList, got %T: %v", err, err)
	}
	if got := strings.Count(list.Error(), "\n") + 1; got != len(list) {
		t.Errorf("ErrorList.Error() has %d lines for %d errors", got, len(list))
	}
	lines := make([]string, len(list))
	for i, e := range list {
		lines[i] = e.Error()
	}
	return lines
}

// wantErrors checks that every wanted pattern matches some error line and
// that there are exactly as many errors as wanted. A pattern is a
// substring, or substrings separated by "*" that must appear in order
// (for temporary paths in the middle of a message).
func wantErrors(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	lines := errorLines(t, err)
	for _, w := range want {
		found := false
		for _, l := range lines {
			if containsInOrder(l, strings.Split(w, "*")) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no error contains %q; errors:\n%s", w, strings.Join(lines, "\n"))
		}
	}
	if len(lines) != len(want) {
		t.Errorf("got %d errors, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
}

func containsInOrder(s string, parts []string) bool {
	for _, p := range parts {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}
