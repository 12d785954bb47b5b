package main

import (
	"github.com/spf13/pflag"

	"github.com/kscale/kscale/kubemark/fleet"
)

// addFleetFlags registers the fleet morph's flags on c. Flags shared with
// the kubelet morph
// (--kubeconfig, --node-labels, --register-with-taints, --max-pods,
// --extended-resources, --cpu, --memory, --ephemeral-storage, --kube-api-*,
// --events) are registered by addFlags and copied over by shareFlags.
func addFleetFlags(fs *pflag.FlagSet, c *fleet.Config) {
	fs.IntVar(&c.Nodes, "nodes", c.Nodes, "fleet: number of hollow nodes in this process")
	fs.StringVar(&c.NamePrefix, "name-prefix", c.NamePrefix, "fleet: node names are this prefix plus an index")
	fs.IntVar(&c.StartIndex, "start-index", c.StartIndex, "fleet: index of the first node (for several fleets in one cluster)")
	fs.StringSliceVar(&c.Names, "node-names", c.Names, "fleet: explicit node names instead of --name-prefix and --nodes")
	fs.StringVar(&c.CACertFile, "ca-cert-file", c.CACertFile, "fleet: CA certificate to mint per-node client certificates with (needs --ca-key-file)")
	fs.StringVar(&c.CAKeyFile, "ca-key-file", c.CAKeyFile, "fleet: CA key to mint per-node client certificates with")
	fs.StringVar(&c.Profile, "profile", c.Profile, "fleet: API traffic profile: kubelet | light")
	fs.StringSliceVar(&c.Zones, "zones", c.Zones, "fleet: topology.kubernetes.io/zone values, spread over the nodes round robin")
	fs.StringVar(&c.NodeIPCIDR, "node-ip-cidr", c.NodeIPCIDR, "fleet: range of the nodes' unique InternalIPs")
	fs.StringVar(&c.FallbackPodCIDR, "fallback-pod-cidr", c.FallbackPodCIDR, "fleet: range cut into one /24 per node for pod IPs when a node has no podCIDR")
	fs.Var(&c.PodStartDelay, "pod-start-delay", "fleet: time from admission to Running: a duration, uniform:MIN-MAX, normal:MEAN,STDDEV or exp:MEAN (pod annotation kscale.io/start-delay overrides)")
	fs.DurationVar(&c.JobPodRunDuration, "job-pod-run-duration", c.JobPodRunDuration, "fleet: pods owned by a Job end Succeeded after running this long (0: they run until deleted; annotation kscale.io/run-duration overrides)")
	fs.DurationVar(&c.LeaseDuration, "node-lease-duration", c.LeaseDuration, "fleet: Lease duration; renewed every quarter of it, as the kubelet does")
	fs.DurationVar(&c.StatusReportFrequency, "node-status-report-frequency", c.StatusReportFrequency, "fleet: node status is patched at least this often")
	fs.IntVar(&c.Workers, "workers", c.Workers, "fleet: concurrent API calls of the whole fleet")
	fs.IntVar(&c.OpeningWatches, "max-opening-watches", c.OpeningWatches, "fleet: watch requests of the whole fleet waiting for the apiserver's answer at once")
	fs.Float64Var(&c.FailNodes, "fail-nodes", c.FailNodes, "fleet: fraction of nodes (0..1) whose heartbeats stop from the start")
	fs.StringVar(&c.MetricsBindAddress, "fleet-metrics-bind-address", c.MetricsBindAddress, "fleet: host:port for /metrics, /healthz and the fault endpoints; empty for none")
	fs.BoolVar(&c.DeleteNodesOnExit, "delete-nodes-on-exit", c.DeleteNodesOnExit, "fleet: delete the fleet's Nodes on SIGTERM")
}
