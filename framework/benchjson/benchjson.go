// Package benchjson writes benchmark results to results/bench/<name>.json
// under the module root, in one shape for every benchmark: a Doc holding its
// name, the date, the machine, and the results. Benchmarks measure; this
// records. Each benchmark declares the type of its results beside it, with
// the JSON names its file uses.
package benchjson

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kscale/kscale/framework/binaries"
)

// Doc is a results/bench/<name>.json file.
type Doc struct {
	// Benchmark is the file's name without .json.
	Benchmark string `json:"benchmark"`
	// Date is when the file was written, UTC, RFC 3339.
	Date    string  `json:"date"`
	Machine Machine `json:"machine"`
	// Commit is the module's commit the benchmark ran on ("+dirty" when
	// the tree had changes); CodeHash is CodeHash of the code the file
	// measures (Subjects), which tells a current file from a stale one.
	Commit   string `json:"commit,omitempty"`
	CodeHash string `json:"codeHash,omitempty"`
	// Results are the benchmark's figures, of the type the benchmark
	// declares. To read them typed, set Results to a pointer to that type
	// before unmarshalling.
	Results any `json:"results"`
}

// Machine is what a benchmark ran on.
type Machine struct {
	// CPUs is runtime.NumCPU().
	CPUs int `json:"cpus"`
	// Go is runtime.Version().
	Go string `json:"go"`
	// OS is GOOS/GOARCH.
	OS string `json:"os"`
}

// Write records results as results/bench/<name>.json and returns the path.
func Write(name string, results any) (string, error) {
	root, err := binaries.ModuleRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "results", "bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	hash, err := CodeHash(root, Subjects(name))
	if err != nil {
		return "", err
	}
	doc := Doc{
		Benchmark: name,
		Date:      time.Now().UTC().Format(time.RFC3339),
		Machine:   Machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH},
		Commit:    commit(root),
		CodeHash:  hash,
		Results:   results,
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding %s: %w", name, err)
	}
	path := filepath.Join(dir, name+".json")
	return path, os.WriteFile(path, append(data, '\n'), 0o644)
}

// commit is root's checked-out commit, "+dirty" when the tree has changes;
// empty outside a git checkout.
func commit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		c += "+dirty"
	}
	return c
}

// readStamp reads what a results file records of the code it measured.
func readStamp(path string) (Doc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Doc{}, err
	}
	var d Doc
	if err := json.Unmarshal(b, &d); err != nil {
		return Doc{}, fmt.Errorf("reading %s: %w", path, err)
	}
	return d, nil
}
