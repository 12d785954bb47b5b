package binaries

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeDeps runs `make test` with a PATH that holds only stand-ins: each
// Debian package's tool but one, no apt-get, and a `go` that records what it
// was asked. A missing tool must stop make before any build, naming the
// package and the command that installs it; with every tool there, make
// goes on to the build.
func TestMakeDeps(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	makePath, err := exec.LookPath("make")
	if err != nil {
		t.Fatalf("make is not in PATH: %v", err)
	}
	mkdirPath, err := exec.LookPath("mkdir")
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]string{ // tool -> its Debian package
		"chromium":   "chromium",
		"prometheus": "prometheus",
		"containerd": "containerd",
		"runc":       "runc",
	}
	const cniPackage = "containernetworking-plugins"
	cases := []struct {
		name, without, wantPackage string
	}{
		{name: "all there"},
		{name: "chromium", without: "chromium", wantPackage: "chromium"},
		{name: "prometheus", without: "prometheus", wantPackage: "prometheus"},
		{name: "containerd", without: "containerd", wantPackage: "containerd"},
		{name: "runc", without: "runc", wantPackage: "runc"},
		{name: "CNI plugins", without: "bridge", wantPackage: cniPackage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pathDir := filepath.Join(dir, "path")
			cniDir := filepath.Join(dir, "cni")
			record := filepath.Join(dir, "go-calls")
			for _, d := range []string{pathDir, cniDir} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for tool := range tools {
				if tool != tc.without {
					writeScript(t, filepath.Join(pathDir, tool), "exit 0")
				}
			}
			if tc.without != "bridge" {
				writeScript(t, filepath.Join(cniDir, "bridge"), "exit 0")
			}
			writeScript(t, filepath.Join(pathDir, "go"), `echo "$*" >> `+record)
			if err := os.Symlink(mkdirPath, filepath.Join(pathDir, "mkdir")); err != nil { // the build's recipe makes bin/
				t.Fatal(err)
			}
			cmd := exec.Command(makePath, "-C", root, "test", "BIN="+filepath.Join(dir, "bin"), "CNI_BIN_DIR="+cniDir)
			cmd.Env = append(filteredEnv("PATH"), "PATH="+pathDir)
			out, err := cmd.CombinedOutput()
			calls, _ := os.ReadFile(record)
			built := strings.Contains(string(calls), "build ")
			if tc.without == "" {
				if !built {
					t.Fatalf("with every tool there, make test never reached the build (err %v); go was asked:\n%s\nmake said:\n%s", err, calls, out)
				}
				if strings.Contains(string(out), "missing Debian packages") {
					t.Fatalf("with every tool there, make deps reported a package missing:\n%s", out)
				}
				return
			}
			if err == nil {
				t.Fatalf("make test exited 0 without %s:\n%s", tc.without, out)
			}
			if built {
				t.Fatalf("make test built before failing on the missing %s; go was asked:\n%s", tc.without, calls)
			}
			want := "sudo apt-get install -y " + tc.wantPackage
			if !strings.Contains(string(out), "missing Debian packages: "+tc.wantPackage) || !strings.Contains(string(out), want) {
				t.Fatalf("make test without %s: want the package %s and %q named, got:\n%s", tc.without, tc.wantPackage, want, out)
			}
			for tool, pkg := range tools {
				if tool != tc.without && strings.Contains(string(out), "packages: "+pkg+" ") {
					t.Errorf("named %s, which is there:\n%s", pkg, out)
				}
			}
		})
	}
}

func writeScript(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// filteredEnv is the environment without the named variables, and without
// make's own (a test run under make must not pass its flags on).
func filteredEnv(drop ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		keep := k != "MAKEFLAGS" && k != "MFLAGS" && k != "MAKELEVEL"
		for _, d := range drop {
			keep = keep && k != d
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}
