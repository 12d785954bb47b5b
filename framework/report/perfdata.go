package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kscale/kscale/measurements"
)

// TimeLayout is the timestamp in report file names, as clusterloader2
// writes it (RFC 3339 without characters that trouble file systems).
const TimeLayout = "2006-01-02T15-04-05Z"

// PerfDataFileName is the file clusterloader2 would write for a summary:
// <summary name>_<test name>_<time>.json.
func PerfDataFileName(s *measurements.Summary, testName string, at time.Time) string {
	return sanitize(s.FileName()) + "_" + sanitize(testName) + "_" + at.UTC().Format(TimeLayout) + ".json"
}

// WriteSummaries writes each summary's report file (its PerfData, or the
// shape clusterloader2 writes it in) and attached files into dir and
// returns the paths written. Summaries with neither (a "not measured" one)
// write no file; they reach the reports through summary.json. A file that
// cannot be written stops none of the others; the errors are joined.
func WriteSummaries(dir, testName string, at time.Time, summaries []measurements.Summary) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the report folder: %w", err)
	}
	var written []string
	var errs []error
	for i := range summaries {
		s := &summaries[i]
		body, ok, err := s.ReportFile()
		if err != nil {
			errs = append(errs, err)
		} else if ok {
			path := filepath.Join(dir, PerfDataFileName(s, testName, at))
			if err := os.WriteFile(path, body, 0o644); err != nil {
				errs = append(errs, fmt.Errorf("writing %s: %w", path, err))
			} else {
				written = append(written, path)
			}
		}
		for name, body := range s.Files {
			path := filepath.Join(dir, sanitize(name))
			if err := os.WriteFile(path, body, 0o644); err != nil {
				errs = append(errs, fmt.Errorf("writing %s: %w", path, err))
				continue
			}
			written = append(written, path)
		}
	}
	return written, errors.Join(errs...)
}

// sanitize keeps a name to one path element. Spaces stay, as
// clusterloader2 writes them: perfdash splits a file's name at '_', so
// GenericPrometheusQuery names its summaries "GenericPrometheusQuery
// <metricName>" with a space.
func sanitize(name string) string {
	return strings.NewReplacer("/", "_", "\\", "_").Replace(name)
}
