package benchjson

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// densityStack is the code whose work a density run's figures are: the
// control plane, the fleet, what creates the objects and paces them, the
// measurements, and the density config.
var densityStack = []string{"go.mod", "controlplane", "cmd/kubemark", "kubemark/fleet",
	"framework/config", "framework/executor", "framework/tuningset",
	"framework/provider/local", "measurements", "configs/density"}

// subjects are the folders and files of the module each results file
// measures: a file is current while they are as they were when it was
// written. Of go.mod, only the Kubernetes modules' lines count. A name
// missing here measures everything.
var subjects = map[string][]string{
	"cluster-up":                 {"go.mod", "controlplane"},
	"kubelet-morph-idle":         {"go.mod", "controlplane", "cmd/kubemark", "kubemark/morph"},
	"density-repeat":             densityStack,
	"density-":                   densityStack, // density-<nodes>
	"fleet-kubelet-1000":         {"go.mod", "controlplane", "cmd/kubemark", "kubemark/fleet"},
	"fleet-kubelet-1000x30-pods": {"go.mod", "controlplane", "cmd/kubemark", "kubemark/fleet"},
	"fleet-kubelet-5000":         {"go.mod", "controlplane", "cmd/kubemark", "kubemark/fleet"},
	"fleet-light-5000-vs-kwok":   {"go.mod", "controlplane", "cmd/kubemark", "kubemark/fleet"},
	"fidelity":                   {"go.mod", "cmd/kubemark", "kubemark/fleet", "kubemark/morph", "framework/fidelity"},
	"tuningset":                  {"framework/tuningset"},
	"executor-creates-stub":      {"framework/executor", "framework/config"},
	"executor-creates":           {"go.mod", "controlplane", "framework/executor", "framework/config"},
	"executor-creates-nofsync":   {"go.mod", "controlplane", "framework/executor", "framework/config"},
	"prometheus-crosscheck-100":  densityStack,
	"kubemark-root":              {"go.mod", "controlplane", "cmd/kubemark", "kubemark", "framework/provider/kubemark"},
	"cl2-testing-configs":        {"go.mod", "controlplane", "cmd/kubemark", "kubemark/fleet", "framework/config", "framework/executor", "framework/tuningset", "framework/provider/local", "measurements"},
	"nightly-series":             append(slices.Clone(densityStack), "framework/changepoint", "framework/abtest"),
}

// Subjects returns the paths (relative to the module root) whose code the
// results file name measures.
func Subjects(name string) []string {
	if s, ok := subjects[name]; ok {
		return s
	}
	for prefix, s := range subjects {
		if strings.HasSuffix(prefix, "-") && strings.HasPrefix(name, prefix) {
			return s
		}
	}
	return []string{"."}
}

// CodeHash is a digest of the files under paths (relative to root), tests
// and test data left out: what a results file records of the code it
// measured.
func CodeHash(root string, paths []string) (string, error) {
	var files []string
	for _, p := range paths {
		err := filepath.WalkDir(filepath.Join(root, p), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if path != filepath.Join(root, p) && (name == "testdata" || strings.HasPrefix(name, ".") || name == "results" || name == "bin") {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(name, "_test.go") || !d.Type().IsRegular() {
				return nil
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("hashing the code of %s: %w", p, err)
		}
	}
	slices.Sort(files)
	files = slices.Compact(files)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return "", err
		}
		if f == "go.mod" {
			b = kubernetesRequires(b)
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// File is a results file's state.
type File struct {
	Name string // without .json
	// Stale: the code it measures changed since it was written, or it
	// records no code hash.
	Stale bool
	// Commit is the commit it records, when it records one.
	Commit string
}

// Files reads results/bench/*.json under root and says which are stale.
func Files(root string) ([]File, error) {
	paths, err := filepath.Glob(filepath.Join(root, "results", "bench", "*.json"))
	if err != nil {
		return nil, err
	}
	var out []File
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		doc, err := readStamp(p)
		if err != nil {
			return nil, err
		}
		hash, err := CodeHash(root, Subjects(name))
		if err != nil {
			return nil, err
		}
		out = append(out, File{Name: name, Stale: doc.CodeHash == "" || doc.CodeHash != hash, Commit: doc.Commit})
	}
	return out, nil
}

// kubernetesRequires keeps go.mod's lines that name a k8s.io module: of
// go.mod, a results file measures the Kubernetes version, not the tools.
func kubernetesRequires(gomod []byte) []byte {
	var keep []string
	for _, line := range strings.Split(string(gomod), "\n") {
		if strings.Contains(line, "k8s.io/") {
			keep = append(keep, strings.TrimSpace(line))
		}
	}
	return []byte(strings.Join(keep, "\n"))
}
