package runner

import (
	"errors"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/framework/config"
	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/measurements"
)

// newRunReport tells the run as summary.json does, and judges it.
func newRunReport(o Options, c *config.Compiled, cfg *rest.Config, client kubernetes.Interface, started time.Time, res *Result) *report.Run {
	finished := time.Now()
	r := &report.Run{
		Version:    report.SummaryVersion,
		Config:     c.Config.Name,
		ConfigFile: o.TestConfig,
		Parameters: c.Mapping,
		Cluster: report.Cluster{Nodes: o.Nodes, Provider: o.Provider, Server: cfg.Host,
			Hollow: o.Hollow, NodesReady: o.NodesReady, ProvisionSeconds: o.ProvisionSeconds},
		Started:          started,
		Finished:         finished,
		DurationSeconds:  finished.Sub(started).Seconds(),
		AllowNotMeasured: o.AllowNotMeasured,
		Metadata:         metadata(o, c, os.Getenv),
	}
	if o.Hollow != nil && o.HollowRestarts != nil {
		h := *o.Hollow
		h.Restarts = o.HollowRestarts()
		r.Cluster.Hollow = &h
	}
	if v, err := client.Discovery().ServerVersion(); err == nil {
		r.Cluster.Version = v.GitVersion
	} else {
		klog.V(1).InfoS("Could not read the server version for the report", "err", err)
	}
	for _, s := range res.Steps {
		step := report.Step{Index: s.Index, Name: s.Name, Status: report.StepOK, DurationSeconds: s.Duration.Seconds()}
		for _, err := range s.Errors {
			step.Errors = append(step.Errors, err.Error())
		}
		switch {
		case s.Skipped:
			step.Status = report.StepSkipped
		case len(s.Errors) > 0:
			step.Status = report.StepFailed
		}
		r.Steps = append(r.Steps, step)
	}
	for _, s := range res.Summaries {
		file := ""
		if s.PerfData != nil || s.Output != nil {
			file = report.PerfDataFileName(&s, c.Config.Name, started)
		}
		r.Measurements = append(r.Measurements, report.FromSummary(s, file))
	}
	if res.CleanupError != nil {
		r.CleanupError = res.CleanupError.Error()
	}
	r.Judge()
	return r
}

// writeReports writes every report of the run into dir: the PerfData of
// each summary, summary.json, junit.xml and report.html.
func writeReports(dir string, r *report.Run, summaries []measurements.Summary, started time.Time) ([]string, error) {
	// One file that cannot be written leaves the others, summary.json
	// first, to be written: a run is never left without its verdict.
	files, err := report.WriteSummaries(dir, r.Config, started, summaries)
	errs := []error{err}
	for _, write := range []func(string, *report.Run) (string, error){report.WriteRun, report.WriteJUnit, report.WriteHTML} {
		path, err := write(dir, r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, path)
	}
	return files, errors.Join(errs...)
}
