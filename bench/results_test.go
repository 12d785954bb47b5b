package bench

import "github.com/kscale/kscale/measurements/metrics"

// The results each benchmark of this package records, one type per
// results/bench/<name>.json (the "results" of its benchjson.Doc). The JSON
// names are those of the recorded files and of docs/benchmarks.md: renaming
// one breaks both.

// clusterUpResult is what BenchmarkClusterUp records in cluster-up.json.
type clusterUpResult struct {
	Runs int `json:"runs"`
	// FreshFolderSeconds are the start-ups on a new folder, in run order.
	FreshFolderSeconds []float64 `json:"freshFolderSeconds"`
	FreshFolderMedian  float64   `json:"freshFolderMedian"`
	// ExistingFolderSeconds are the start-ups on the folder of the first
	// fresh run, in run order.
	ExistingFolderSeconds []float64 `json:"existingFolderSeconds"`
	ExistingFolderMedian  float64   `json:"existingFolderMedian"`
}

// kubeletMorphIdleResult is what BenchmarkIdleKubeletMorph records in
// kubelet-morph-idle.json.
type kubeletMorphIdleResult struct {
	Nodes             int     `json:"nodes"`
	NodesReadySeconds float64 `json:"nodesReadySeconds"`
	SettleSeconds     float64 `json:"settleSeconds"`
	WindowSeconds     float64 `json:"windowSeconds"`
	// PerNodeRSSMiB and PerNodeMillicores are each node's, in no order.
	PerNodeRSSMiB        []float64 `json:"perNodeRSSMiB"`
	PerNodeMillicores    []float64 `json:"perNodeMillicores"`
	MedianNodeRSSMiB     float64   `json:"medianNodeRSSMiB"`
	MedianNodeMillicores float64   `json:"medianNodeMillicores"`
	// APIRequestsPerNodeSec are the requests of the flow schemas
	// system-node-high and system-nodes per node per second.
	APIRequestsPerNodeSec float64 `json:"apiRequestsPerNodeSec"`
	OpenWatchesPerNode    float64 `json:"openWatchesPerNode"`
	// ControlPlaneAt10Nodes is each control plane component's cost, by
	// component name.
	ControlPlaneAt10Nodes map[string]componentCost `json:"controlPlaneAt10Nodes"`
}

// componentCost is what one process cost over a window.
type componentCost struct {
	Millicores float64 `json:"millicores"`
	RSSMiB     float64 `json:"rssMiB"`
}

// executorCreatesResult is what BenchmarkExecutorCreates and
// BenchmarkExecutorCreatesNoFsync record in executor-creates.json and
// executor-creates-nofsync.json: the rate and the time of one run of the
// throughput config over 1 and over 4 client connections.
type executorCreatesResult struct {
	Objects                      int     `json:"objects"`
	CreatesPerSecond1Connections float64 `json:"createsPerSecond1Connections"`
	Seconds1Connections          float64 `json:"seconds1Connections"`
	CreatesPerSecond4Connections float64 `json:"createsPerSecond4Connections"`
	Seconds4Connections          float64 `json:"seconds4Connections"`
}

// processUsage is what one process cost over a window (see usageOver).
type processUsage struct {
	Cores      float64 `json:"cores"`
	RSSMiB     float64 `json:"rssMiB"`
	RSSAnonMiB float64 `json:"rssAnonMiB"`
	RSSFileMiB float64 `json:"rssFileMiB"`
	// HeapInUseMiB and HeapLiveMiB are a control plane component's Go heap
	// (see addHeapFigures); nil, and left out of the JSON, where not
	// measured.
	HeapInUseMiB *float64 `json:"heapInUseMiB,omitempty"`
	HeapLiveMiB  *float64 `json:"heapLiveMiB,omitempty"`
}

// fleetKubelet1000Result is what BenchmarkFleetKubelet1000 records in
// fleet-kubelet-1000.json. The API call figures are by node kind
// ("kubelet-morph", "fleet"), then by call ("VERB resource[/sub]").
type fleetKubelet1000Result struct {
	Nodes             int     `json:"nodes"`
	ReadySeconds      float64 `json:"readySeconds"`
	IdleWindowSeconds float64 `json:"idleWindowSeconds"`
	// Processes are the control plane components, "fleet" and "morph-<i>"
	// over the idle window, by name.
	Processes                 map[string]processUsage `json:"processes"`
	FleetRSSMiB               float64                 `json:"fleetRSSMiB"`
	FleetIdleCores            float64                 `json:"fleetIdleCores"`
	FleetRSSPerNodeKiB        float64                 `json:"fleetRSSPerNodeKiB"`
	KubeletMorphRSSPerNodeMiB float64                 `json:"kubeletMorphRSSPerNodeMiB"`
	// MemoryPerNodeRatio is KubeletMorphRSSPerNodeMiB over
	// FleetRSSPerNodeKiB, both in KiB.
	MemoryPerNodeRatio       float64                       `json:"memoryPerNodeRatio"`
	FailedLeaseRenewals      float64                       `json:"failedLeaseRenewals"`
	APICallsPerNodePerMinute map[string]map[string]float64 `json:"apiCallsPerNodePerMinute"`
	APICallsPerNodeAtStart   map[string]map[string]float64 `json:"apiCallsPerNodeAtStart"`
	APICallsPerPod           map[string]map[string]float64 `json:"apiCallsPerPod"`
	// OpenWatchesPerNode is by node kind.
	OpenWatchesPerNode map[string]float64 `json:"openWatchesPerNode"`
	PodsPerNodeInChurn int                `json:"podsPerNodeInChurn"`
}

// fleetKubelet5000Result is what BenchmarkFleetKubelet5000 records in
// fleet-kubelet-5000.json.
type fleetKubelet5000Result struct {
	Nodes    int  `json:"nodes"`
	AllReady bool `json:"allReady"`
	// ReadyNodesAtReadySeconds are the Ready nodes when the wait for all
	// of them ended, at ReadySeconds.
	ReadyNodesAtReadySeconds int     `json:"readyNodesAtReadySeconds"`
	ReadySeconds             float64 `json:"readySeconds"`
	// ReadyAsSeenByTheBench is the Ready count over time (x: seconds since
	// the fleet started), thinned to a point per 5 s.
	ReadyAsSeenByTheBench []metrics.Point `json:"readyAsSeenByTheBench"`
	StartupTimeline       []startupSample `json:"startupTimeline"`
	ReadyNodesAtEnd       int             `json:"readyNodesAtEnd"`
	// Watches99PercentOpenAfter and StartupEventsSentAfter are seconds
	// since the fleet started; -1 when not reached.
	Watches99PercentOpenAfter float64 `json:"watches99PercentOpenAfter"`
	StartupEventsSentAfter    float64 `json:"startupEventsSentAfter"`
	SteadySeconds             float64 `json:"steadySeconds"`
	NotReadyTransitions       float64 `json:"notReadyTransitions"`
	FailedLeaseRenewals       float64 `json:"failedLeaseRenewals"`
	MaxLeaseAgeSeconds        float64 `json:"maxLeaseAgeSeconds"`
	FleetWatches              float64 `json:"fleetWatches"`
	CSINodes                  int     `json:"csiNodes"`
	// Processes are the control plane components and "fleet" over the
	// steady window, by name.
	Processes map[string]processUsage `json:"processes"`
	// CoresBusyOfTwo is the sum of the processes' cores.
	CoresBusyOfTwo float64 `json:"coresBusyOfTwo"`
	// ComponentRestarts are the supervisor's restarts by component.
	ComponentRestarts map[string]int `json:"componentRestarts"`
}

// startupSample is the state of a fleet's start-up at one moment: what the
// fleet itself counts, and how busy each process was since the sample before.
type startupSample struct {
	Seconds    float64 `json:"seconds"`
	Registered float64 `json:"registered"`
	Ready      float64 `json:"readyByFleet"`
	APIErrors  float64 `json:"apiErrors"`
	Watches    float64 `json:"watches"`
	// Cores are by process name.
	Cores map[string]float64 `json:"cores"`
}

// fleetPods1000x30Result is what BenchmarkFleetPods1000x30 records in
// fleet-kubelet-1000x30-pods.json.
type fleetPods1000x30Result struct {
	Nodes             int     `json:"nodes"`
	Pods              int     `json:"pods"`
	AllRunningSeconds float64 `json:"allRunningSeconds"`
	SettledSeconds    float64 `json:"settledSeconds"`
	EventsDropped     float64 `json:"eventsDropped"`
	FleetRSSBeforeMiB float64 `json:"fleetRSSBeforeMiB"`
	FleetRSSAfterMiB  float64 `json:"fleetRSSAfterMiB"`
	// FleetRSSPerPodKiB is the fleet's RSS growth over the pods.
	FleetRSSPerPodKiB    float64 `json:"fleetRSSPerPodKiB"`
	PodsRunningPerSecond float64 `json:"podsRunningPerSecond"`
}

// fleetLightVsKWOKResult is what BenchmarkFleetLight5000VsKWOK records in
// fleet-light-5000-vs-kwok.json: each simulator's runs under its name, and
// the fleet's figures against KWOK's with declaring Nodes.
type fleetLightVsKWOKResult struct {
	Nodes         int     `json:"nodes"`
	WindowSeconds float64 `json:"windowSeconds"`
	// Order is the simulators' names in the order they ran.
	Order         string             `json:"order"`
	FleetLight    simulatorRuns      `json:"fleet-light"`
	KWOKDeclaring simulatorRuns      `json:"kwok-declaring"`
	KWOKKwokctl   simulatorRuns      `json:"kwok-kwokctl"`
	Comparison    []figureComparison `json:"comparison"`
}

// simulatorRuns are one simulator's runs and their mean (see meanRun).
type simulatorRuns struct {
	Mean simulatorRun   `json:"mean"`
	Runs []simulatorRun `json:"runs"`
	// Version is KWOK's release; empty, and left out, for the fleet.
	Version string `json:"version,omitempty"`
}

// simulatorRun is what one simulator cost in one run.
type simulatorRun struct {
	ReadySeconds       float64 `json:"readySeconds"`
	WindowStartSeconds float64 `json:"windowStartSeconds"`
	// Processes are the control plane components and "simulator" over the
	// window, by name.
	Processes map[string]processUsage `json:"processes"`
	// APIServerCalls are the requests the apiserver completed per second in
	// the window, by "VERB resource[/sub]", rates under 0.5/s left out.
	APIServerCalls     map[string]float64 `json:"apiserverCallsPerSecond"`
	LeaseAgeMaxSeconds float64            `json:"leaseAgeMaxSeconds"`
	ComponentRestarts  map[string]int     `json:"componentRestarts"`
	// CPUMsPerLeaseUpdate is each control plane component's CPU time per
	// lease renewal served in the window; nil when the apiserver served
	// none. Lease renewals are nearly all the traffic once nodes are
	// registered, and a simulator that falls behind its 10 s schedule
	// sends fewer: its cores alone would flatter it.
	CPUMsPerLeaseUpdate map[string]float64 `json:"cpuMsPerLeaseUpdate"`
}

// figureComparison is one figure of the fleet against KWOK over their runs.
// Every figure is a cost: lower is better.
type figureComparison struct {
	// Figure is the figure's name (see simulatorRun.figures).
	Figure       string  `json:"figure"`
	Fleet        float64 `json:"fleetMean"`
	KWOK         float64 `json:"kwokMean"`
	DeltaPercent float64 `json:"deltaPercent"`
	// P is the Mann–Whitney p-value that the two sets of runs come from one
	// distribution: with four runs each, under 0.05 only when every run of
	// one is above every run of the other.
	P float64 `json:"p"`
	// Verdict is atOrBelow, notToldApart or aboveAndToldApart.
	Verdict string `json:"verdict"`
}

// prometheusCrossCheckResult is what BenchmarkPrometheusCrossCheck100
// records in prometheus-crosscheck-100.json.
type prometheusCrossCheckResult struct {
	Nodes int `json:"nodes"`
	Pods  int `json:"pods"`
	// MinCalls is the calls an API call item needs to be compared.
	MinCalls int `json:"minCalls"`
	// Items are the API call items Prometheus reported;
	// ItemsOnOneSideOnly those only one side had.
	Items              int `json:"items"`
	ItemsOnOneSideOnly int `json:"itemsOnOneSideOnly"`
	// Quantiles compare each quantile of the compared items, by name
	// ("p50", "p99", "worst-window p99").
	Quantiles map[string]*quantileAgreement `json:"quantiles"`
	// ScheduledPods is kscale's count of the measured pods scheduled;
	// PrometheusBindings the bindings' counter difference over the span;
	// GenericQueryBindings clusterloader2's increase() of it.
	ScheduledPods        float64 `json:"scheduledPods"`
	PrometheusBindings   float64 `json:"prometheusBindings"`
	GenericQueryBindings float64 `json:"genericQueryBindings"`
	// ThroughputMax and PrometheusThroughputMax are the largest scheduling
	// rates, in pods/s, of SchedulingThroughput and
	// SchedulingThroughputPrometheus.
	ThroughputMax           float64 `json:"throughputMax"`
	PrometheusThroughputMax float64 `json:"prometheusThroughputMax"`
}

// quantileAgreement is how one quantile of the API call items compared.
type quantileAgreement struct {
	Compared int `json:"compared"`
	Agree    int `json:"agree"`
	// MaxRelativeDiff is the largest |a-b|/max(a,b) among them.
	MaxRelativeDiff float64 `json:"maxRelativeDiff"`
}
