package stamp

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestPlainBuild builds a binary that imports stamp with a plain `go build`,
// no linker flags, and holds what it reports to go.mod's Kubernetes version.
func TestPlainBuild(t *testing.T) {
	want, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", KubernetesModule).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", KubernetesModule, err)
	}
	bin := filepath.Join(t.TempDir(), "printversion")
	build := exec.Command("go", "build", "-o", bin, "./testdata/printversion")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(want))
	if got := strings.TrimSpace(string(out)); got != v+" "+v {
		t.Fatalf("a plain build reports %q (component-base, client-go), want %s for both", got, v)
	}
}

func TestApply(t *testing.T) {
	saved := []*string{&cbGitVersion, &cbGitMajor, &cbGitMinor, &cbBuildDate, &cgGitVersion, &cgGitMajor, &cgGitMinor, &cgBuildDate}
	values := make([]string, len(saved))
	for i, p := range saved {
		values[i] = *p
	}
	t.Cleanup(func() {
		for i, p := range saved {
			*p = values[i]
		}
	})
	info := &debug.BuildInfo{
		Deps:     []*debug.Module{{Path: "k8s.io/api", Version: "v0.37.2"}, {Path: KubernetesModule, Version: "v1.37.2"}},
		Settings: []debug.BuildSetting{{Key: "vcs.time", Value: "2026-12-01T00:00:00Z"}, {Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}},
	}
	cases := []struct {
		name, before, want, wantMajor, wantMinor string
	}{
		{"placeholder filled in", Placeholder, "v1.37.2", "1", "37"},
		{"linker stamp kept", "v1.99.0", "v1.99.0", "1", "99"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cbGitVersion, cbGitMajor, cbGitMinor = tc.before, "", ""
			if tc.before != Placeholder {
				cbGitMajor, cbGitMinor = "1", "99"
			}
			apply(info)
			if cbGitVersion != tc.want || cbGitMajor != tc.wantMajor || cbGitMinor != tc.wantMinor {
				t.Fatalf("got %s (%s.%s), want %s (%s.%s)", cbGitVersion, cbGitMajor, cbGitMinor, tc.want, tc.wantMajor, tc.wantMinor)
			}
		})
	}
	if got := Revision(info); got != "abc-dirty" {
		t.Errorf("Revision = %q, want abc-dirty", got)
	}
	// A binary of the staging modules alone: their v0 numbers are
	// Kubernetes' v1 ones.
	staging := &debug.BuildInfo{Deps: []*debug.Module{{Path: "k8s.io/component-base", Version: "v0.37.2"}}}
	if v, ok := KubernetesVersion(staging); !ok || v != "v1.37.2" {
		t.Errorf("KubernetesVersion of a staging-only binary = %q, %v; want v1.37.2", v, ok)
	}
	if v, ok := KubernetesVersion(&debug.BuildInfo{}); ok {
		t.Errorf("KubernetesVersion without Kubernetes modules = %q, want none", v)
	}
}
