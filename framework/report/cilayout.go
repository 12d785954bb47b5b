package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ExportCILayout copies a run's report files into root/<job>/<build>/artifacts/,
// the layout of a CI archive that perfdash reads in its local mode
// (--mode=local --logsPath=root) and `kscale history` reads as well. The
// build must be a number, as perfdash reads it; an existing build is left
// alone. The files are copied into a temporary folder and moved in place at
// once, so a failure leaves nothing half-written.
func ExportCILayout(dir, root, job string, build int) (string, error) {
	if job == "" || job == "." || job == ".." || strings.ContainsAny(job, `/\`) {
		return "", fmt.Errorf("job %q: want a name without slashes", job)
	}
	if build < 0 {
		return "", fmt.Errorf("build %d: want a build number, 0 or more", build)
	}
	if _, err := ReadRun(dir); err != nil {
		return "", fmt.Errorf("%s is not a report folder of a run: %w", dir, err)
	}
	jobDir := filepath.Join(root, job)
	final := filepath.Join(jobDir, strconv.Itoa(build))
	if _, err := os.Stat(final); err == nil {
		return "", fmt.Errorf("%s exists: build %d of %s is already archived", final, build, job)
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(jobDir, 0o755); err != nil {
		return "", err
	}
	// A dot-named folder: perfdash reads every other folder of a job as a
	// build number.
	tmp, err := os.MkdirTemp(jobDir, ".export-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	artifacts := filepath.Join(tmp, "artifacts")
	if err := os.Mkdir(artifacts, 0o755); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue // the local cluster's folder and other subfolders stay
		}
		if err := copyFile(filepath.Join(dir, e.Name()), filepath.Join(artifacts, e.Name())); err != nil {
			return "", err
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", err
	}
	return filepath.Join(final, "artifacts"), nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying %s: %w", from, err)
	}
	return out.Close()
}
