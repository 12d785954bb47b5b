package fleet

import (
	"errors"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// metrics of one fleet, on a registry of its own (tests run several fleets
// in one process).
type metrics struct {
	registry       *prometheus.Registry
	registered     prometheus.Counter
	adopted        prometheus.Counter
	adoptedPods    prometheus.Counter
	leaseRenewals  *prometheus.CounterVec
	leaseLatency   prometheus.Histogram
	podTransitions *prometheus.CounterVec
	apiErrors      *prometheus.CounterVec
	watches        *prometheus.GaugeVec
	watchEvents    *prometheus.CounterVec
	eventsDropped  prometheus.Counter
}

func newMetrics(f *Fleet) *metrics {
	const ns = "kscale_fleet"
	m := &metrics{
		registry: prometheus.NewRegistry(),
		registered: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Name: "node_registrations_total",
			Help: "Node registrations (created or adopted).",
		}),
		adopted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Name: "nodes_adopted_total",
			Help: "Nodes that already existed at registration and were taken over.",
		}),
		adoptedPods: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Name: "pods_adopted_total",
			Help: "Running pods of an earlier run of the fleet that were taken over as they were.",
		}),
		leaseRenewals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "lease_renewals_total",
			Help: "Lease renewals by result: ok, error, conflict.",
		}, []string{"result"}),
		leaseLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: ns, Name: "lease_renewal_duration_seconds",
			Help:    "Latency of successful lease renewals.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}),
		eventsDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Name: "events_dropped_total",
			Help: "Kubelet events not sent because the node already had 1000 waiting, as the kubelet drops them.",
		}),
		podTransitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "pod_transitions_total",
			Help: "Pods moved to Running, Succeeded or Failed (rejected), or Deleted.",
		}, []string{"to"}),
		apiErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "api_errors_total",
			Help: "Failed API calls by HTTP status code (0: no response).",
		}, []string{"code"}),
		watches: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: ns, Name: "watches",
			Help: "Watch streams open (the server accepted them), by resource.",
		}, []string{"resource"}),
		watchEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "watch_events_total",
			Help: "Watch events received (bookmarks excluded), by resource.",
		}, []string{"resource"}),
	}
	// The process's own cost: go_* (goroutines, heap, stacks) and process_*
	// (CPU seconds, resident memory).
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.registry.MustRegister(m.registered, m.adopted, m.adoptedPods, m.leaseRenewals, m.leaseLatency,
		m.podTransitions, m.apiErrors, m.watches, m.watchEvents, m.eventsDropped)
	m.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: "nodes", Help: "Nodes of this fleet."},
			func() float64 { return float64(len(f.nodes)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: "nodes_ready", Help: "Nodes registered, posting Ready, with a heartbeat (Lease renewal or status) within the lease duration and heartbeats not stopped."},
			func() float64 { return float64(f.snapshot().ready) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: "nodes_deleted", Help: "Nodes whose Node was deleted while the fleet ran: as v1.37 kubelets, they register again only when the fleet restarts."},
			func() float64 { return float64(f.snapshot().deleted) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: "nodes_failed", Help: "Nodes whose heartbeats are stopped by fault injection."},
			func() float64 { return float64(f.snapshot().failed) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: "lease_age_max_seconds", Help: "Oldest heartbeat (Lease renewal or status) among registered, healthy nodes."},
			func() float64 { return f.snapshot().maxLeaseAge.Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: "pods", Help: "Pods the fleet's nodes are tracking."},
			func() float64 { return float64(f.snapshot().pods) }),
	)
	for p, name := range []string{"heartbeat", "pod", "startup", "background", "events"} {
		m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: ns, Name: "queue_length", Help: "Due tasks waiting for a worker, by priority.",
			ConstLabels: prometheus.Labels{"priority": name},
		}, func() float64 { return float64(f.sched.Pending()[p]) }))
	}
	return m
}

// apiError counts a failed call by its HTTP status code.
func (m *metrics) apiError(err error) {
	code := 0
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code = int(status.Status().Code)
	}
	m.apiErrors.WithLabelValues(strconv.Itoa(code)).Inc()
}
