package config

import (
	"path/filepath"
	"reflect"
	"testing"
)

func TestParseEnvValue(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{"5", 5}, {"-12", -12}, {"007", 7},
		{"1.5", 1.5}, {"1e3", 1000.0},
		{"true", true}, {"False", false},
		{"1m", "1m"}, {"", ""}, {"a=b", "a=b"}, {"registry.example.com", "registry.example.com"},
	}
	for _, tc := range tests {
		if got := ParseEnvValue(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseEnvValue(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

func TestBuildMapping(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.yaml":        "X: 1\nY: from-a\nCL2_SAME: 5\nList: [1, 2]\n",
		"b.yaml":        "X: 2\n",
		"nodes.yaml":    "Nodes: 100\n",
		"nodes5.yaml":   "Nodes: 5.0\n",
		"registry.yaml": "ImageRegistry: my.registry\n",
		"conflict.yaml": "# layered\nCL2_MODE: fast\n",
		"empty.yaml":    "",
		"list.yaml":     "- a\n- b\n",
		"broken.yaml":   "a: [\n",
	})
	f := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name    string
		opts    Options
		want    map[string]any // keys that must have these values
		absent  []string
		wantErr []string
	}{
		{
			name: "later override file wins",
			opts: Options{Overrides: []string{f("a.yaml"), f("b.yaml")}},
			want: map[string]any{"X": 2, "Y": "from-a", "List": []any{1, 2}, "ImageRegistry": DefaultImageRegistry},
		},
		{
			name:   "environment typed, other variables ignored",
			opts:   Options{Environ: []string{"CL2_I=5", "CL2_F=1.5", "CL2_B=true", "CL2_S=1m", "CL2_E=", "HOME=/root", "XCL2_N=1"}},
			want:   map[string]any{"CL2_I": 5, "CL2_F": 1.5, "CL2_B": true, "CL2_S": "1m", "CL2_E": ""},
			absent: []string{"HOME", "XCL2_N", "I", "Nodes"},
		},
		{
			name: "Nodes built in",
			opts: Options{Nodes: 5000},
			want: map[string]any{"Nodes": 5000},
		},
		{
			name: "equal values from two sources are fine",
			opts: Options{Overrides: []string{f("a.yaml"), f("nodes5.yaml")}, Environ: []string{"CL2_SAME=5"}, Nodes: 5},
			want: map[string]any{"CL2_SAME": 5, "Nodes": 5},
		},
		{
			name: "override replaces the ImageRegistry default",
			opts: Options{Overrides: []string{f("registry.yaml")}},
			want: map[string]any{"ImageRegistry": "my.registry"},
		},
		{
			name: "Nodes from an override when the run does not know it",
			opts: Options{Overrides: []string{f("nodes.yaml")}},
			want: map[string]any{"Nodes": 100},
		},
		{
			name:    "environment conflicts with override",
			opts:    Options{Overrides: []string{f("conflict.yaml")}, Environ: []string{"CL2_MODE=slow"}},
			wantErr: []string{`conflict.yaml:2:1: CL2_MODE: set to "fast" here but to "slow" by environment variable CL2_MODE=slow`},
		},
		{
			name:    "Nodes conflicts with override",
			opts:    Options{Overrides: []string{f("nodes.yaml")}, Nodes: 5000},
			wantErr: []string{"nodes.yaml:1:1: Nodes: set to 100 here but the node count of the run is 5000"},
		},
		{
			name: "empty override file",
			opts: Options{Overrides: []string{f("empty.yaml")}},
			want: map[string]any{"ImageRegistry": DefaultImageRegistry},
		},
		{
			name:    "bad override files reported together",
			opts:    Options{Overrides: []string{f("list.yaml"), f("missing.yaml"), f("broken.yaml")}},
			wantErr: []string{"list.yaml:1:1: an overrides file must be a mapping", "missing.yaml: cannot read overrides file", "broken.yaml:1:4: invalid YAML: did not find expected node content"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opts.Environ == nil {
				tc.opts.Environ = []string{}
			}
			m, err := BuildMapping(tc.opts)
			if tc.wantErr != nil {
				wantErrors(t, err, tc.wantErr...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if !reflect.DeepEqual(m[k], v) {
					t.Errorf("%s = %#v, want %#v", k, m[k], v)
				}
			}
			for _, k := range tc.absent {
				if _, ok := m[k]; ok {
					t.Errorf("%s is set to %#v", k, m[k])
				}
			}
		})
	}
}

// A nil Environ reads the process environment.
func TestBuildMappingProcessEnvironment(t *testing.T) {
	t.Setenv("CL2_KSCALE_TEST", "42")
	m, err := BuildMapping(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m["CL2_KSCALE_TEST"] != 42 {
		t.Fatalf("CL2_KSCALE_TEST = %#v", m["CL2_KSCALE_TEST"])
	}
}
