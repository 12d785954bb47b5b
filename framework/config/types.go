package config

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is a compiled test config: templates rendered, modules expanded.
type Config struct {
	Name string `yaml:"name"`
	// AutomanagedNamespaces is clusterloader2's older spelling of
	// namespace.number; compiling moves it there.
	AutomanagedNamespaces int          `yaml:"automanagedNamespaces"`
	Namespace             Namespace    `yaml:"namespace"`
	TuningSets            []TuningSet  `yaml:"tuningSets"`
	ChaosMonkey           ChaosMonkey  `yaml:"chaosMonkey"`
	Dependencies          []Dependency `yaml:"dependencies"`
	Steps                 []Step       `yaml:"steps"`
}

// Namespace says how many test namespaces a run creates and how it treats
// namespaces of earlier runs.
type Namespace struct {
	Number                      int      `yaml:"number"`
	Prefix                      string   `yaml:"prefix"`
	DeleteStaleNamespaces       *bool    `yaml:"deleteStaleNamespaces"`
	DeleteAutomanagedNamespaces *bool    `yaml:"deleteAutomanagedNamespaces"`
	EnableExistingNamespaces    *bool    `yaml:"enableExistingNamespaces"`
	DeleteNamespaceTimeout      Duration `yaml:"deleteNamespaceTimeout"`
}

// TuningSet is a named pacing of actions; exactly one type is set.
type TuningSet struct {
	Name string `yaml:"name"`
	// InitialDelay is waited before a phase paced by the set starts its
	// first action.
	InitialDelay              Duration                   `yaml:"initialDelay"`
	QPSLoad                   *QPSLoad                   `yaml:"qpsLoad"`
	RandomizedLoad            *RandomizedLoad            `yaml:"randomizedLoad"`
	SteppedLoad               *SteppedLoad               `yaml:"steppedLoad"`
	TimeLimitedLoad           *TimeLimitedLoad           `yaml:"timeLimitedLoad"`
	RandomizedTimeLimitedLoad *RandomizedTimeLimitedLoad `yaml:"randomizedTimeLimitedLoad"`
	ParallelismLimitedLoad    *ParallelismLimitedLoad    `yaml:"parallelismLimitedLoad"`
	GlobalQPSLoad             *GlobalQPSLoad             `yaml:"globalQPSLoad"`
	PoissonLoad               *PoissonLoad               `yaml:"poissonLoad"`
}

// TuningSetTypes are the config keys of the eight tuning-set types, in the
// order of the format's documentation.
var TuningSetTypes = []string{
	"qpsLoad", "randomizedLoad", "steppedLoad", "timeLimitedLoad",
	"randomizedTimeLimitedLoad", "parallelismLimitedLoad", "globalQPSLoad", "poissonLoad",
}

// Types lists the types set on ts, by config key; a valid set has one.
func (ts *TuningSet) Types() []string {
	set := []bool{
		ts.QPSLoad != nil, ts.RandomizedLoad != nil, ts.SteppedLoad != nil, ts.TimeLimitedLoad != nil,
		ts.RandomizedTimeLimitedLoad != nil, ts.ParallelismLimitedLoad != nil, ts.GlobalQPSLoad != nil, ts.PoissonLoad != nil,
	}
	var types []string
	for i, ok := range set {
		if ok {
			types = append(types, TuningSetTypes[i])
		}
	}
	return types
}

// QPSLoad starts one action every 1/QPS seconds.
type QPSLoad struct {
	QPS float64 `yaml:"qps"`
}

// RandomizedLoad waits a uniform random gap in [0, 2/AverageQPS) between starts.
type RandomizedLoad struct {
	AverageQPS float64 `yaml:"averageQps"`
}

// SteppedLoad starts BurstSize actions, then sleeps StepDelay.
type SteppedLoad struct {
	BurstSize int      `yaml:"burstSize"`
	StepDelay Duration `yaml:"stepDelay"`
}

// TimeLimitedLoad spreads the starts evenly over TimeLimit.
type TimeLimitedLoad struct {
	TimeLimit Duration `yaml:"timeLimit"`
}

// RandomizedTimeLimitedLoad starts each action at an independent uniform
// random time in [0, TimeLimit).
type RandomizedTimeLimitedLoad struct {
	TimeLimit Duration `yaml:"timeLimit"`
}

// ParallelismLimitedLoad runs actions as fast as possible, at most
// ParallelismLimit at once.
type ParallelismLimitedLoad struct {
	ParallelismLimit int `yaml:"parallelismLimit"`
}

// GlobalQPSLoad is one token bucket shared by every phase naming the set.
type GlobalQPSLoad struct {
	QPS   float64 `yaml:"qps"`
	Burst int     `yaml:"burst"`
}

// PoissonLoad waits exponentially distributed gaps between starts.
type PoissonLoad struct {
	ExpectedActionsPerSecond float64 `yaml:"expectedActionsPerSecond"`
}

// ChaosMonkey injects node failures during a run.
type ChaosMonkey struct {
	NodeFailure   *NodeFailure `yaml:"nodeFailure"`
	ExcludedNodes []string     `yaml:"excludedNodes"`
}

// NodeFailure makes a share of the nodes fail every interval for a while.
type NodeFailure struct {
	FailureRate       float64  `yaml:"failureRate"`
	Interval          Duration `yaml:"interval"`
	JitterFactor      float64  `yaml:"jitterFactor"`
	SimulatedDowntime Duration `yaml:"simulatedDowntime"`
}

// Dependency is set up before the steps and torn down after them, in
// reverse order.
type Dependency struct {
	Name    string         `yaml:"name"`
	Method  string         `yaml:"method"`
	Timeout Duration       `yaml:"timeout"`
	Params  map[string]any `yaml:"params"`
}

// Step has exactly one of Phases, Measurements or Module; after
// compilation Module is always expanded away.
type Step struct {
	Name         string        `yaml:"name"`
	Phases       []Phase       `yaml:"phases"`
	Measurements []Measurement `yaml:"measurements"`
	Module       *Module       `yaml:"module"`
}

// Module is another template file expanded in place of a step.
type Module struct {
	Path   string         `yaml:"path"`
	Params map[string]any `yaml:"params"`
}

// Phase brings the objects of its bundle to ReplicasPerNamespace in each of
// its namespaces, paced by the named tuning set.
type Phase struct {
	NamespaceRange       *NamespaceRange `yaml:"namespaceRange"`
	NamespaceList        []string        `yaml:"namespaceList"`
	ReplicasPerNamespace int             `yaml:"replicasPerNamespace"`
	TuningSet            string          `yaml:"tuningSet"`
	ObjectBundle         []Object        `yaml:"objectBundle"`
}

// NamespaceRange selects test namespaces Min..Max (inclusive).
type NamespaceRange struct {
	Min      int     `yaml:"min"`
	Max      int     `yaml:"max"`
	Basename *string `yaml:"basename"`
}

// Object is one kind of object of a bundle, named <Basename>-<index>.
type Object struct {
	Basename                 string                    `yaml:"basename"`
	ObjectTemplatePath       string                    `yaml:"objectTemplatePath"`
	TemplateFillMap          map[string]any            `yaml:"templateFillMap"`
	ListUnknownObjectOptions *ListUnknownObjectOptions `yaml:"listUnknownObjectOptions"`
}

// ListUnknownObjectOptions finds objects of earlier runs the executor does
// not know the replica count of.
type ListUnknownObjectOptions struct {
	LabelSelector map[string]any `yaml:"labelSelector"`
}

// Measurement is a measurement entry: one instance, or several sharing
// Params (an instance's own Params win).
type Measurement struct {
	Method     string                `yaml:"method"`
	Identifier string                `yaml:"identifier"`
	Params     map[string]any        `yaml:"params"`
	Instances  []MeasurementInstance `yaml:"instances"`
}

// MeasurementInstance is one instance of a wrapped measurement entry.
type MeasurementInstance struct {
	Identifier string         `yaml:"identifier"`
	Params     map[string]any `yaml:"params"`
}

// Duration is a time.Duration written as "10s", "5m" in configs.
type Duration time.Duration

// UnmarshalYAML accepts a Go duration string or a number of nanoseconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		var ns int64
		if n.Decode(&ns) != nil {
			return fmt.Errorf("%q is not a duration (like 30s or 5m)", s)
		}
		v = time.Duration(ns)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a Go duration string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// Std returns the duration as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }
