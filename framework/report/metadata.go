package report

// Metadata is what makes runs comparable beyond the cluster they ran on,
// and where each came from: `kscale history` keys its series on it.
type Metadata struct {
	// KscaleVersion is the kscale module's version ("(devel)" for a build
	// from a checkout); KscaleCommit the commit it was built from, with
	// "-dirty" when the tree had changes, empty when unknown.
	KscaleVersion string `json:"kscaleVersion,omitempty"`
	KscaleCommit  string `json:"kscaleCommit,omitempty"`
	// Overrides are the overrides files of the run, in order.
	Overrides []string `json:"overrides,omitempty"`
	// ConfigHash is the SHA-256 of the config as compiled for the run
	// (modules spliced in, overrides applied) and of the object templates
	// it names: two runs with the same hash ran the same workload.
	ConfigHash string  `json:"configHash,omitempty"`
	Machine    Machine `json:"machine"`
	// CI is the job and build that ran it; nil outside CI.
	CI *CI `json:"ci,omitempty"`
}

// Machine is where kscale ran.
type Machine struct {
	Cores       int    `json:"cores"`
	MemoryBytes uint64 `json:"memoryBytes,omitempty"`
	OS          string `json:"os"`
}

// CI names the CI job and build of a run.
type CI struct {
	// System is prow, github-actions, or flags (given on the command line).
	System string `json:"system"`
	Job    string `json:"job"`
	Build  string `json:"build"`
	// URL is the build's page, when the system says it.
	URL string `json:"url,omitempty"`
}
