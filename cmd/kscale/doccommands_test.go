package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kscale/kscale/framework/binaries"
	"github.com/kscale/kscale/framework/suite"
)

// walkthroughs are the pages whose commands a newcomer types as shown.
var walkthroughs = []string{"../../README.md", "../../docs/getting-started.md"}

// TestDocumentedCommands: every kscale, kubemark, suite and make command
// line shown in the walkthroughs names a command, target, suite and flags
// that exist. kscale lines are parsed by the command tree, suite flags by
// the suites' FlagSet, kubemark lines run with --help appended.
func TestDocumentedCommands(t *testing.T) {
	targets := makeTargets(t)
	checked := 0
	for _, page := range walkthroughs {
		for _, line := range shownCommands(t, page) {
			if !commandLine.MatchString(line) {
				continue
			}
			// A variable stands for a value of the reader's: a number, or a path.
			line = shellVariable.ReplaceAllStringFunc(line, func(v string) string {
				if v == "$PWD" || v == "$HOME" {
					return "/x"
				}
				return "1"
			})
			words, err := shellWords(line)
			if err != nil {
				t.Errorf("%s: %q: %v", page, line, err)
				continue
			}
			// Leading VAR=value assignments, as in `NODES=1000 make density`.
			var env []string
			for len(words) > 0 && regexp.MustCompile(`^[A-Z_]+=`).MatchString(words[0]) {
				env, words = append(env, words[0]), words[1:]
			}
			if len(words) == 0 {
				continue
			}
			var err2 error
			switch {
			case words[0] == "./bin/kscale" || words[0] == "kscale":
				err2 = checkKscale(words[1:])
			case words[0] == "./bin/kubemark":
				err2 = checkKubemark(words[1:])
			case words[0] == "make":
				err2 = checkMake(targets, words[1:], env)
			case len(words) > 2 && words[0] == "go" && (words[1] == "tool" || words[1] == "test"):
				err2 = checkSuite(words)
			default:
				continue
			}
			checked++
			if err2 != nil {
				t.Errorf("%s: %s\n  %v", page, line, err2)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d commands found in %v: is the extraction broken?", checked, walkthroughs)
	}
}

var (
	// commandLine: a line that starts with a command this test checks,
	// after any VAR=value.
	commandLine   = regexp.MustCompile(`^([A-Z_]+=\S+\s+)*(\./bin/kscale|kscale|\./bin/kubemark|make|go tool ginkgo|go test)\b`)
	shellVariable = regexp.MustCompile(`\$[A-Z_]+|\$\{[A-Z_]+\}`)
)

// shownCommands are the lines of a page's code blocks (indented or
// fenced), continuation lines joined and comments cut.
func shownCommands(t *testing.T, page string) []string {
	t.Helper()
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	var pending string
	fenced := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		raw := sc.Text()
		if strings.HasPrefix(raw, "```") {
			fenced = !fenced
			continue
		}
		if !fenced && !strings.HasPrefix(raw, "    ") {
			pending = ""
			continue
		}
		line := strings.TrimSpace(raw)
		if i := strings.Index(line, " #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		line = strings.TrimSuffix(line, "&")
		if strings.HasSuffix(line, `\`) {
			pending += strings.TrimSuffix(line, `\`) + " "
			continue
		}
		if line = strings.TrimSpace(pending + line); line != "" {
			out = append(out, line)
		}
		pending = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func checkKscale(args []string) error {
	root := newRootCommand()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd == root {
		return fmt.Errorf("no kscale command in %q", args)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	return cmd.ValidateArgs(cmd.Flags().Args())
}

func checkKubemark(args []string) error {
	bin, err := binaries.Path(context.Background(), "kubemark")
	if err != nil {
		return err
	}
	out, err := exec.Command(bin, append(args, "--help")...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubemark %s --help: %v: %s", strings.Join(args, " "), err, lastLine(out))
	}
	return nil
}

// checkSuite checks `go tool ginkgo [flags] ./suites/NAME -- FLAGS` and
// `go test ./suites/NAME -args FLAGS`.
func checkSuite(words []string) error {
	var pkg string
	var flags []string
	for i, w := range words {
		if strings.HasPrefix(w, "./suites/") {
			pkg = w
		}
		if w == "--" || w == "-args" {
			flags = words[i+1:]
			break
		}
	}
	if pkg == "" {
		return fmt.Errorf("no ./suites/ package")
	}
	if _, err := os.Stat(filepath.Join("../..", pkg)); err != nil {
		return err
	}
	return parseSuiteFlags(flags)
}

func parseSuiteFlags(flags []string) error {
	fs := suite.FlagSet()
	fs.SetOutput(new(strings.Builder))
	return fs.Parse(flags)
}

func checkMake(targets, args, env []string) error {
	for _, a := range append(args, env...) {
		name, value, isVar := strings.Cut(a, "=")
		switch {
		case isVar && name == "ARGS":
			words, err := shellWords(value)
			if err != nil {
				return err
			}
			if err := parseSuiteFlags(words); err != nil {
				return fmt.Errorf("ARGS: %w", err)
			}
		case !isVar && !slices.Contains(targets, a):
			return fmt.Errorf("no make target %q", a)
		}
	}
	return nil
}

// makeTargets are the Makefile's targets.
func makeTargets(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`).FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// shellWords splits a command line as a shell would, quotes and all, but
// for expansions, which it leaves as they are.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words, in = append(words, cur.String()), false
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c", quote)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
