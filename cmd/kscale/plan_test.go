package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestPlan(t *testing.T) {
	config := "--testconfig=../../configs/density/config.yaml"
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"fits", []string{"plan", "--nodes=100", config}, 0, []string{"plan: density at 100 nodes, local provider", "estimated duration", "holds it"}},
		{"kubemark 5000", []string{"plan", "--nodes=5000", "--provider=kubemark", config},
			0, []string{"+150000 pods", "* root cluster, fleet layout: 5 pods of 1000 nodes", "kubelet layout: 5000 pods", "a deadline of 3h0m0s covers it"}},
		{"deadline too short", []string{"plan", "--nodes=5000", "--provider=kubemark", "--timeout=1h", config}, 2, []string{"run again with --timeout=3h0m0s"}},
		{"too big here", []string{"plan", "--nodes=5000", "--pods-per-node=10", config}, 2, []string{"refused", "--provider=kubemark"}},
		{"no nodes", []string{"plan", config}, 2, []string{"--nodes=0"}},
		{"bad provider", []string{"plan", "--nodes=10", "--provider=kind", config}, 2, []string{"--provider=kind"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRootCommand()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(io.Discard)
			root.SetArgs(tc.args)
			err := root.Execute()
			if code := exitCodeOf(err); code != tc.code {
				t.Fatalf("exit %d (%v), want %d:\n%s", code, err, tc.code, out.String())
			}
			text := out.String()
			if err != nil {
				text += err.Error()
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("lacks %q:\n%s", w, text)
				}
			}
		})
	}
}

func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	return exitCode(err)
}
