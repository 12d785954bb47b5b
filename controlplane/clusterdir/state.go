package clusterdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Phase is where the cluster is in its life.
type Phase string

// The phases the supervisor moves through.
const (
	PhaseStarting Phase = "Starting"
	PhaseReady    Phase = "Ready"
	PhaseFailed   Phase = "Failed"
	PhaseStopping Phase = "Stopping"
	PhaseStopped  Phase = "Stopped"
)

// State is what the supervisor publishes in StateFile. It is rewritten
// atomically on every change, so readers never see a torn file.
type State struct {
	// SupervisorPID is the process that owns the components.
	SupervisorPID int   `json:"supervisorPID"`
	Phase         Phase `json:"phase"`
	// Error says why the cluster is Failed.
	Error        string      `json:"error,omitempty"`
	StartedAt    time.Time   `json:"startedAt"`
	ReadyAt      *time.Time  `json:"readyAt,omitempty"`
	APIServerURL string      `json:"apiServerURL"`
	Components   []Component `json:"components"`
}

// Component is one control-plane process.
type Component struct {
	Name string `json:"name"`
	PID  int    `json:"pid,omitempty"`
	// Ready is true once the component's health endpoint answered ok (and, for
	// the scheduler and controller-manager, once it holds its leader lease).
	Ready     bool       `json:"ready"`
	Restarts  int        `json:"restarts"`
	StartedAt *time.Time `json:"startedAt,omitempty"`
	// MetricsURL serves Prometheus metrics. etcd's is plain HTTP; the others
	// are HTTPS and need a client certificate (the admin one will do).
	MetricsURL string `json:"metricsURL"`
	HealthURL  string `json:"healthURL"`
	LogFile    string `json:"logFile"`
}

// Component returns the named component, or nil.
func (s *State) Component(name string) *Component {
	for i := range s.Components {
		if s.Components[i].Name == name {
			return &s.Components[i]
		}
	}
	return nil
}

// PrometheusURL is the URL of the cluster's Prometheus server, "" when it
// runs none.
func (s *State) PrometheusURL() string {
	if p := s.Component(Prometheus); p != nil {
		return strings.TrimSuffix(p.HealthURL, PrometheusReadyPath)
	}
	return ""
}

// ErrNoState means the folder has never held a started cluster.
var ErrNoState = errors.New("no cluster state")

// ReadState reads the state file.
func (d Dir) ReadState() (*State, error) {
	data, err := os.ReadFile(d.StateFile())
	if os.IsNotExist(err) {
		return nil, ErrNoState
	}
	if err != nil {
		return nil, fmt.Errorf("reading cluster state: %w", err)
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("cluster state %s is corrupt: %w", d.StateFile(), err)
	}
	return &s, nil
}

// WriteState replaces the state file atomically.
func (d Dir) WriteState(s *State) error {
	return WriteJSON(d.StateFile(), s, 0o644)
}

// WriteJSON writes v as indented JSON to path through a temporary file and a
// rename, so a reader sees either the old or the new content.
func WriteJSON(path string, v any, mode os.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(data, '\n'), mode)
}

// WriteFileAtomic writes data to path through a temporary file and a rename.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Chmod(tmp, mode); err != nil { // WriteFile keeps the mode of an existing file
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
