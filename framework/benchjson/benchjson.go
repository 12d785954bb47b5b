// Package benchjson writes benchmark results to results/bench/<name>.json
// under the module root, in one shape for every benchmark: its name, the
// date, the machine, and the results. Benchmarks measure; this records.
package benchjson

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/kscale/kscale/framework/binaries"
)

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
	doc := map[string]any{
		"benchmark": name,
		"date":      time.Now().UTC().Format(time.RFC3339),
		"machine":   map[string]any{"cpus": runtime.NumCPU(), "go": runtime.Version(), "os": runtime.GOOS + "/" + runtime.GOARCH},
		"results":   results,
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding %s: %w", name, err)
	}
	path := filepath.Join(dir, name+".json")
	return path, os.WriteFile(path, append(data, '\n'), 0o644)
}
