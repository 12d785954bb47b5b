package fleet

import (
	"context"
	"fmt"
	"k8s.io/utils/clock"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// Fleet is a set of hollow nodes sharing one process.
type Fleet struct {
	cfg    *Config
	name   string // value of FleetLabel on every node
	nodes  []*node
	byName map[string]*node

	sched   *scheduler
	clients *clientFactory
	shared  *rest.RESTClient // the light profile's one client
	watcher *watcher
	events  *eventRecorder // nil: no events
	metrics *metrics

	capacity, allocatable v1.ResourceList
	startedAt             time.Time
	// statusSyncPeriod is how often a node writes back pod statuses the API
	// holds differently (the kubelet's 10 s; tests shorten it).
	statusSyncPeriod  time.Duration
	bootID            string
	fallbackPodBase   net.IP
	fallbackPodRanges int

	watchCtx context.Context
	watches  sync.WaitGroup
	// clock is Config.Clock, or the real one.
	clock clock.WithTicker
}

// New prepares a fleet from a validated Config; Run starts it.
func New(cfg *Config) (*Fleet, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	clients, err := newClientFactory(cfg)
	if err != nil {
		return nil, err
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	f := &Fleet{
		cfg:       cfg,
		clock:     clk,
		name:      strings.TrimSuffix(cfg.NamePrefix, "-"),
		byName:    map[string]*node{},
		sched:     newScheduler(clk),
		clients:   clients,
		startedAt: clk.Now(),
		bootID:    string(uuid.NewUUID()),

		statusSyncPeriod: statusSyncPeriod,
	}
	if f.watcher, err = newWatcher(f, cfg.ContentType, clients.base.UserAgent); err != nil {
		return nil, err
	}
	if cfg.Events && cfg.Profile == ProfileKubelet {
		f.events = &eventRecorder{fleet: f}
	}
	f.capacity, f.allocatable = capacityFor(cfg)
	_, nodeNet, _ := net.ParseCIDR(cfg.NodeIPCIDR)
	_, podNet, _ := net.ParseCIDR(cfg.FallbackPodCIDR)
	f.fallbackPodBase = podNet.IP.To4()
	ones, _ := podNet.Mask.Size()
	f.fallbackPodRanges = 1 << (24 - ones)
	for i, name := range cfg.NodeNames() {
		n := &node{
			fleet:      f,
			index:      cfg.StartIndex + i,
			name:       name,
			ip:         nodeIP(nodeNet.IP, cfg.StartIndex+i+1),
			pods:       map[types.UID]*pod{},
			unsynced:   map[types.UID]*pod{},
			ipsInUse:   map[uint32]bool{},
			refs:       map[objectRef]int{},
			refWatches: map[objectRef]refWatch{},
			// Light nodes have no CSINode to wait for.
			csiNodeReady: cfg.Profile == ProfileLight,
		}
		if len(cfg.Zones) > 0 {
			n.zone = cfg.Zones[n.index%len(cfg.Zones)]
		}
		f.nodes = append(f.nodes, n)
		f.byName[name] = n
	}
	f.metrics = newMetrics(f)
	return f, nil
}

// Run registers every node and keeps the fleet alive until ctx ends; then it
// stops its watches and, with --delete-nodes-on-exit, deletes its Nodes.
func (f *Fleet) Run(ctx context.Context) error {
	tuneRuntime(len(f.nodes))
	watchCtx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	f.watchCtx = watchCtx
	if f.cfg.Profile == ProfileLight {
		shared, err := f.clients.shared()
		if err != nil {
			return err
		}
		f.shared = shared
		f.startSharedWatches()
	}
	failing := f.pickNodes(f.cfg.FailNodes)
	for _, n := range failing {
		n.failed = true
	}
	// Registrations are queued in order at background priority: heartbeats
	// of registered nodes always go first, then the steps that take a
	// registering kubelet-profile node to Ready.
	for _, n := range f.nodes {
		if f.cfg.Profile == ProfileLight {
			f.sched.Now(priorityBackground, n.register)
		} else {
			f.sched.Now(priorityBackground, n.startKubelet)
		}
	}
	klog.InfoS("Fleet starting", "nodes", len(f.nodes), "profile", f.cfg.Profile, "ownIdentity", f.clients.ownIdentity(), "failedFromStart", len(failing))
	go afterStartup(ctx, f.clock, startupCheckInterval, f.startupOver, releaseFreeHeap)
	f.sched.Run(ctx, f.cfg.Workers)

	stopWatches()
	f.watches.Wait()
	if f.cfg.DeleteNodesOnExit {
		return f.deleteNodes()
	}
	return nil
}

// nodeClients returns the API clients of a node.
func (f *Fleet) nodeClients(ctx context.Context, name string) (nodeClients, error) {
	if f.cfg.Profile == ProfileLight {
		return sameClient(f.shared), nil
	}
	return f.clients.forNode(ctx, name)
}

// nodeRegistered starts what a node does once registered: in the kubelet
// profile, its six watches.
func (f *Fleet) nodeRegistered(n *node) {
	if f.cfg.Profile != ProfileKubelet {
		return
	}
	byNode := func(field string) url.Values {
		return url.Values{"fieldSelector": {fields.OneTermEqualSelector(field, n.name).String()}}
	}
	specs := []watchSpec{
		{name: "nodes", path: "/api/v1/nodes", params: byNode("metadata.name"), handle: n.observeNode},
		{name: "pods", path: "/api/v1/pods", params: byNode("spec.nodeName"), handle: func(t watch.EventType, o runtime.Object) {
			if p, ok := o.(*v1.Pod); ok {
				n.observePod(t, p)
			}
		}},
		{name: "services", path: "/api/v1/services", params: url.Values{"fieldSelector": {fields.OneTermNotEqualSelector("spec.clusterIP", v1.ClusterIPNone).String()}}},
		{name: "runtimeclasses", path: "/apis/node.k8s.io/v1/runtimeclasses"},
		{name: "csidrivers", path: "/apis/storage.k8s.io/v1/csidrivers"},
		{name: "podcertificaterequests", path: "/apis/certificates.k8s.io/v1/podcertificaterequests", params: byNode("spec.nodeName")},
	}
	for _, spec := range specs {
		f.startWatch(n.client, spec)
	}
}

// startSharedWatches starts the light profile's two watches: the pods bound
// to any node, and the fleet's nodes; events go to the node they concern.
func (f *Fleet) startSharedWatches() {
	f.startWatch(f.shared, watchSpec{
		name: "pods", path: "/api/v1/pods",
		params: url.Values{"fieldSelector": {fields.OneTermNotEqualSelector("spec.nodeName", "").String()}},
		handle: func(t watch.EventType, o runtime.Object) {
			if p, ok := o.(*v1.Pod); ok {
				if n := f.byName[p.Spec.NodeName]; n != nil {
					n.observePod(t, p)
				}
			}
		},
	})
	f.startWatch(f.shared, watchSpec{
		name: "nodes", path: "/api/v1/nodes",
		params: url.Values{"labelSelector": {FleetLabel + "=" + f.name}},
		handle: func(t watch.EventType, o runtime.Object) {
			if nd, ok := o.(*v1.Node); ok {
				if n := f.byName[nd.Name]; n != nil {
					n.observeNode(t, nd)
				}
			}
		},
	})
}

func (f *Fleet) startWatch(client *rest.RESTClient, spec watchSpec) {
	f.startWatchCtx(f.watchCtx, client, spec)
}

// startWatchCtx runs a watch until ctx (derived from watchCtx) ends.
func (f *Fleet) startWatchCtx(ctx context.Context, client *rest.RESTClient, spec watchSpec) {
	f.watches.Add(1)
	f.watcher.start(ctx, client, spec, f.watches.Done)
}

// observeNode follows the node's own Node object: the podCIDR the
// controller-manager assigns, a deletion, and a Node of its name made again
// by someone else, which a kubelet takes as its own.
func (n *node) observeNode(t watch.EventType, o runtime.Object) {
	nd, ok := o.(*v1.Node)
	if !ok || nd.Name != n.name {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if t == watch.Deleted {
		if n.registered && n.fleet.watchCtx.Err() == nil {
			n.registered = false
			n.deleted = true
			if n.fleet.cfg.Profile == ProfileKubelet {
				n.fleet.sched.After(jitter(nodeStatusUpdateFrequency, 0.04), priorityBackground, n.readDeletedNode)
			}
		}
		return
	}
	if n.deleted {
		n.deleted = false
		n.registered = true
		n.imagesSent = 0
		n.fleet.sched.Now(priorityBackground, n.takeOverNode)
	}
	n.uid = nd.UID
	n.setPodCIDR(nd.Spec.PodCIDR)
}

// takeOverNode adopts a Node of the node's name that someone else made after
// the node's own was deleted. The kubelet's next status update finds it and
// patches in the whole status it lacks; a light node, whose heartbeats
// stopped with its Node, renews its Lease again, as KWOK heartbeats any Node
// it manages. A kubelet-profile node's lease start, retrying since its Lease
// went, finds the new Node by itself.
func (n *node) takeOverNode(ctx context.Context) {
	f := n.fleet
	if err := n.sendStatus(ctx, true); err != nil {
		if ctx.Err() == nil {
			f.metrics.apiError(err)
			f.sched.After(f.backoff(1), priorityBackground, n.takeOverNode)
		}
		return
	}
	if f.cfg.Profile == ProfileLight {
		n.ensureLease(ctx)
	}
}

// The kubelet's node status update: every nodeStatusUpdateFrequency, with
// nodeStatusUpdateRetry tries, the first from its informer's cache.
const (
	nodeStatusUpdateFrequency = 10 * time.Second
	nodeStatusUpdateRetry     = 5
)

// readDeletedNode is the kubelet's node status update while its Node is
// gone: the retries read the Node from the apiserver and get 404s, again
// every nodeStatusUpdateFrequency until a Node of its name is back.
func (n *node) readDeletedNode(ctx context.Context) {
	f := n.fleet
	n.mu.Lock()
	deleted, failed := n.deleted, n.failed
	n.mu.Unlock()
	if !deleted {
		return
	}
	for range nodeStatusUpdateRetry - 1 {
		if failed || ctx.Err() != nil {
			break
		}
		err := n.heartbeat.Get().AbsPath("/api/v1/nodes", n.name).Do(ctx).Error()
		if err == nil {
			break // made again: the node's watch takes it over
		}
		if !apierrors.IsNotFound(err) && ctx.Err() == nil {
			f.metrics.apiError(err)
		}
	}
	if ctx.Err() == nil {
		f.sched.After(jitter(nodeStatusUpdateFrequency, 0.04), priorityBackground, n.readDeletedNode)
	}
}

// pickNodes returns about fraction of the nodes, evenly spread over the fleet.
func (f *Fleet) pickNodes(fraction float64) []*node {
	k := int(fraction*float64(len(f.nodes)) + 0.5)
	picked := make([]*node, 0, k)
	for i := range k {
		picked = append(picked, f.nodes[i*len(f.nodes)/k])
	}
	return picked
}

// setFailed stops (failed=true) or resumes the heartbeats of nodes. Resumed
// nodes renew their Lease and report status at once, as a kubelet does when
// it gets its connection back.
func (f *Fleet) setFailed(nodes []*node, failed bool) {
	for _, n := range nodes {
		n.mu.Lock()
		was := n.failed
		n.failed = failed
		n.mu.Unlock()
		if was && !failed {
			n.mu.Lock()
			restart := !n.heartbeating && n.lease != nil
			n.heartbeating = n.heartbeating || restart
			registered := n.registered
			// Statuses it could not write while stopped, and those
			// changed meanwhile, are written now, as a resumed kubelet's
			// status manager syncs at once.
			n.fullSync = true
			n.wakeSyncLocked()
			n.mu.Unlock()
			if restart {
				f.sched.Now(priorityHeartbeat, n.renewLease)
			}
			if registered {
				f.sched.Now(priorityBackground, func(ctx context.Context) {
					if err := n.patchStatus(ctx); err != nil {
						f.metrics.apiError(err)
					}
				})
			}
		}
	}
}

// deleteNodes removes the fleet's Nodes (their Leases go with them through
// garbage collection, their pods through the pod GC). A node may not delete
// its own Node object, so this uses the kubeconfig's credential.
func (f *Fleet) deleteNodes() error {
	if f.clients.bootstrap != nil {
		// A kubelet's identity may not delete Nodes, and a bootstrap token
		// neither: whoever made the token deletes them.
		klog.InfoS("Leaving the fleet's Nodes: nodes that joined with a bootstrap token cannot delete them", "nodes", len(f.nodes))
		return nil
	}
	client, err := f.clients.shared()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	work := make(chan *node)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for range min(f.cfg.Workers, len(f.nodes)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				err := client.Delete().AbsPath("/api/v1/nodes", n.name).Do(ctx).Error()
				if err != nil && !apierrors.IsNotFound(err) {
					mu.Lock()
					errs = append(errs, fmt.Errorf("%s: %w", n.name, err))
					mu.Unlock()
				}
			}
		}()
	}
	for _, n := range f.nodes {
		work <- n
	}
	close(work)
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("deleting nodes: %d of %d failed, first: %w", len(errs), len(f.nodes), errs[0])
	}
	klog.InfoS("Deleted the fleet's nodes", "nodes", len(f.nodes))
	return nil
}

// snapshot summarises the nodes' state for metrics and the status endpoint.
type fleetSnapshot struct {
	// started: registered at least once; deleted: its Node deleted since;
	// awaitingLease: started, not deleted, no Lease yet.
	started, registered, deleted, leased, awaitingLease, ready, failed, pods int
	// maxLeaseAge is the oldest heartbeat of the nodes that have one and
	// whose heartbeats run.
	maxLeaseAge time.Duration
}

func (f *Fleet) snapshot() fleetSnapshot {
	var s fleetSnapshot
	now := f.clock.Now()
	for _, n := range f.nodes {
		n.mu.Lock()
		if n.started {
			s.started++
			if n.deleted {
				s.deleted++
			} else if n.lease == nil {
				s.awaitingLease++
			}
		}
		if n.registered {
			s.registered++
			if n.lease != nil {
				s.leased++
			}
			age := now.Sub(n.renewedAt)
			switch {
			case n.failed:
				s.failed++
			case !n.renewedAt.IsZero():
				s.maxLeaseAge = max(s.maxLeaseAge, age)
				if n.csiNodeReady && age < f.cfg.LeaseDuration {
					s.ready++
				}
			}
		}
		s.pods += len(n.pods)
		n.mu.Unlock()
	}
	return s
}

// startupOver reports whether the start-up burst is done: every node
// registered, with its Lease unless its Node was deleted since; no start-up
// step, registration, watch start or start-up event waiting; and no watch
// request waiting for its answer.
func (f *Fleet) startupOver() bool {
	pending := f.sched.Pending()
	if pending[priorityStartup] != 0 || pending[priorityBackground] != 0 || pending[priorityEvents] != 0 ||
		f.watcher.unanswered.Load() != 0 {
		return false
	}
	s := f.snapshot()
	return s.started == len(f.nodes) && s.awaitingLease == 0
}

// renewInterval is the kubelet's: a quarter of the lease duration, plus up
// to 4 % jitter.
func (f *Fleet) renewInterval() time.Duration { return jitter(f.cfg.LeaseDuration/4, 0.04) }

// backoff is the wait before retry number failures (0 or 1: the first):
// 1 s doubling to 30 s, jittered so that retries of many nodes spread out.
func (f *Fleet) backoff(failures int) time.Duration {
	d := time.Second << min(max(failures-1, 0), 5)
	return jitter(min(d, 30*time.Second), 0.5)
}

func (f *Fleet) draw(d Delay) time.Duration { return d.Draw() }

// fallbackIndex maps a node to one of the /24s of the fallback pod range.
func (f *Fleet) fallbackIndex(i int) int { return i % f.fallbackPodRanges }

// jitter returns d plus up to factor×d.
func jitter(d time.Duration, factor float64) time.Duration {
	return d + time.Duration(rand.Float64()*factor*float64(d))
}
