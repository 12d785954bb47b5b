package history

import (
	"fmt"
	"strings"

	"github.com/kscale/kscale/framework/report"
)

// Key is what makes two runs comparable: the same workload (config and
// the hash of it compiled with its overrides), on the same number of
// nodes of the same kind, against the same Kubernetes, from a machine of
// the same size.
type Key struct {
	Config     string `json:"config"`
	ConfigHash string `json:"configHash,omitempty"`
	Nodes      int    `json:"nodes"`
	Provider   string `json:"provider,omitempty"`
	Hollow     string `json:"hollow,omitempty"`
	Kubernetes string `json:"kubernetes,omitempty"`
	Cores      int    `json:"cores,omitempty"`
}

func keyOf(r *report.Run) Key {
	k := Key{Config: r.Config, Nodes: r.Cluster.Nodes, Provider: r.Cluster.Provider, Kubernetes: r.Cluster.Version}
	if r.Cluster.Hollow != nil {
		k.Hollow = r.Cluster.Hollow.Kind
	}
	if r.Metadata != nil {
		k.ConfigHash, k.Cores = r.Metadata.ConfigHash, r.Metadata.Machine.Cores
	}
	return k
}

// String names the kind of run in a line.
func (k Key) String() string {
	parts := []string{k.Config, fmt.Sprintf("%d nodes", k.Nodes)}
	if k.Provider != "" {
		p := k.Provider
		if k.Hollow != "" {
			p += "/" + k.Hollow
		}
		parts = append(parts, p)
	}
	if k.Kubernetes != "" {
		parts = append(parts, k.Kubernetes)
	}
	if k.Cores > 0 {
		parts = append(parts, fmt.Sprintf("%d cores", k.Cores))
	}
	if k.ConfigHash != "" {
		parts = append(parts, "config "+k.ConfigHash[:min(8, len(k.ConfigHash))])
	}
	return strings.Join(parts, " · ")
}
