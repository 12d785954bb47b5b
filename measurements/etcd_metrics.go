package measurements

import (
	"context"
	"math"
	"sort"

	"github.com/kscale/kscale/measurements/metrics"
)

func init() {
	Register("EtcdMetrics", Informational, func(string) Measurement { return &etcdMetrics{} })
}

// etcdMetrics reports how etcd's disk kept up with the run: the latency of
// backend commits and WAL fsyncs between start and gather (the first thing
// to look at when mutating API calls get slow), peer round trips where
// etcd has peers, and the database size.
//
// Params: action start|gather. It reads etcd's own /metrics, which the run
// reaches on the local provider; elsewhere it is "not measured".
type etcdMetrics struct {
	delta metricsDelta
}

// etcdLatencies are the histograms reported, by their clusterloader2 name.
var etcdLatencies = map[string]string{
	"BackendCommitDuration": "etcd_disk_backend_commit_duration_seconds",
	"WalFsyncDuration":      "etcd_disk_wal_fsync_duration_seconds",
	"PeerRoundTripTime":     "etcd_network_peer_round_trip_time_seconds",
}

func (e *etcdMetrics) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather")
	if err != nil {
		return nil, err
	}
	if action == "start" {
		return nil, e.delta.begin(ctx, env, "etcd")
	}
	end, err := e.delta.end(ctx, env)
	if err != nil {
		return nil, err
	}
	sum := Summary{
		Name:     "EtcdMetrics",
		PerfData: &metrics.PerfData{Version: metrics.PerfDataVersion},
		Headline: map[string]float64{},
	}
	var file etcdMetricsFile
	names := make([]string, 0, len(etcdLatencies))
	for name := range etcdLatencies {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		hs, err := e.delta.histograms(end, etcdLatencies[name], nil, nil)
		if err != nil {
			return nil, err
		}
		h, ok := hs[metrics.MakeHistogramKey()]
		if !ok || h.Count == 0 {
			continue // no peers, or nothing committed: nothing to say
		}
		hf := []histogramFile{histogramFileOf(h, map[string]string{})}
		switch name {
		case "BackendCommitDuration":
			file.BackendCommitDuration = hf
		case "WalFsyncDuration":
			file.WalFsyncDuration = hf
		case "PeerRoundTripTime":
			file.PeerRoundTripTime = hf
		}
		item := latencyItem(h, map[string]string{"Metric": name})
		sum.PerfData.DataItems = append(sum.PerfData.DataItems, item)
		sum.Headline[name+" p99 ms"] = item.Data["Perc99"]
	}
	// Snapshot saves are rare in a run; clusterloader2's file has them.
	snaps, err := e.delta.histograms(end, "etcd_debugging_snap_save_total_duration_seconds", nil, nil)
	if err != nil {
		return nil, err
	}
	if h, ok := snaps[metrics.MakeHistogramKey()]; ok {
		file.SnapshotSaveTotalDuration = []histogramFile{histogramFileOf(h, map[string]string{})}
	}
	size := math.NaN()
	for _, name := range []string{"etcd_mvcc_db_total_size_in_bytes", "etcd_debugging_mvcc_db_total_size_in_bytes"} {
		if v, ok := gaugeValue(end, name); ok {
			before, _ := gaugeValue(e.delta.start, name)
			size = max(v, before)
			break
		}
	}
	if !math.IsNaN(size) {
		file.MaxDatabaseSize = size
		mb := size / (1 << 20)
		sum.PerfData.DataItems = append(sum.PerfData.DataItems, metrics.DataItem{
			Data: map[string]float64{"Max": mb}, Unit: "MiB", Labels: map[string]string{"Metric": "MaxDatabaseSize"},
		})
		sum.Headline["database size MiB"] = mb
	}
	if len(sum.PerfData.DataItems) == 0 {
		return nil, notMeasuredf("etcd exported none of %v", names)
	}
	sum.Output = file
	return []Summary{sum}, nil
}
