package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/kscale/kscale/framework/report"
)

// Scenario is one entry of a clusterloader2 test suite file (--testsuite):
// a test config run with its own overrides.
type Scenario struct {
	// Identifier names the entry: its report folder and junit testsuite.
	Identifier string `json:"identifier"`
	// ConfigPath is the test config, relative to the working directory
	// as clusterloader2 reads it.
	ConfigPath string `json:"configPath"`
	// OverridePaths are the entry's override files; they replace
	// --testoverrides for this entry.
	OverridePaths []string `json:"overridePaths"`
}

// identifierPattern keeps an identifier usable as a folder name.
var identifierPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// LoadTestSuite reads a test suite file: a YAML list of scenarios, keys
// matched as clusterloader2's JSON decoding matches them (any case).
// Every entry is checked; an unknown key, a missing config path or two
// entries of one identifier is an InputError.
func LoadTestSuite(path string) ([]Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &InputError{fmt.Errorf("--testsuite: %w", err)}
	}
	var suite []Scenario
	if err := yaml.UnmarshalStrict(data, &suite); err != nil {
		return nil, &InputError{fmt.Errorf("--testsuite %s: %w", path, err)}
	}
	if len(suite) == 0 {
		return nil, &InputError{fmt.Errorf("--testsuite %s: no test scenario in it", path)}
	}
	var errs []error
	seen := map[string]bool{}
	for i, s := range suite {
		where := fmt.Sprintf("--testsuite %s: entry %d", path, i+1)
		switch {
		case !identifierPattern.MatchString(s.Identifier):
			errs = append(errs, fmt.Errorf("%s: identifier %q: want letters, digits, '.', '_' or '-' (it names the entry's report folder)", where, s.Identifier))
		case seen[s.Identifier]:
			errs = append(errs, fmt.Errorf("%s: identifier %q is used twice", where, s.Identifier))
		}
		seen[s.Identifier] = true
		if s.ConfigPath == "" {
			errs = append(errs, fmt.Errorf("%s: configPath is required", where))
		}
	}
	if len(errs) > 0 {
		return nil, &InputError{errors.Join(errs...)}
	}
	return suite, nil
}

// ScenarioOptions are the options of one entry's run: its config and
// overrides, and a report folder of its own under the suite's.
func ScenarioOptions(o Options, s Scenario) Options {
	o.TestConfig, o.Overrides = s.ConfigPath, s.OverridePaths
	if o.ReportDir != "" {
		o.ReportDir = filepath.Join(o.ReportDir, s.Identifier)
	}
	return o
}

// SuiteResult is what each entry of a test suite did, in order.
type SuiteResult struct {
	Scenarios []Scenario
	Results   []*Result
}

// ValidateSuite compiles every entry of the suite for o.Nodes nodes, so
// that a bad one stops the suite before anything runs.
func ValidateSuite(o Options, suite []Scenario, warn io.Writer) error {
	for _, s := range suite {
		c, err := Compile(ScenarioOptions(o, s))
		if err != nil {
			return &InputError{fmt.Errorf("test scenario %s: %w", s.Identifier, err)}
		}
		reportUnsupported(c, warn)
	}
	return nil
}

// RunSuite runs the entries of a test suite one after another, as
// clusterloader2 runs them: each in its own report folder under
// o.ReportDir, and one junit.xml there with a testsuite per entry. An entry
// that cannot start (bad input) stops the suite before the next.
func RunSuite(ctx context.Context, o Options, suite []Scenario, warn io.Writer) (*SuiteResult, error) {
	if o.Nodes == 0 && o.Kubeconfig != "" {
		// Counted once, as a single run counts them, so that every entry
		// is compiled for the cluster before the first runs.
		restCfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
		if err != nil {
			return nil, &InputError{fmt.Errorf("--kubeconfig %s: %w", o.Kubeconfig, err)}
		}
		if o.Nodes, err = SchedulableNodes(ctx, restCfg); err != nil {
			return nil, err
		}
	}
	if err := ValidateSuite(o, suite, warn); err != nil {
		return nil, err
	}
	res := &SuiteResult{}
	for _, s := range suite {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(warn, "test scenario %s: %s\n", s.Identifier, s.ConfigPath)
		r, err := Run(ctx, ScenarioOptions(o, s), warn)
		if err != nil {
			return res, fmt.Errorf("test scenario %s: %w", s.Identifier, err)
		}
		res.Scenarios = append(res.Scenarios, s)
		res.Results = append(res.Results, r)
	}
	if o.ReportDir != "" && len(res.Results) > 0 {
		names := make([]string, len(res.Scenarios))
		runs := make([]*report.Run, len(res.Results))
		for i := range res.Results {
			names[i], runs[i] = res.Scenarios[i].Identifier, res.Results[i].Report
		}
		if _, err := report.WriteJUnitSuites(o.ReportDir, names, runs); err != nil {
			return res, err
		}
	}
	return res, nil
}
