package fleet

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/version"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// Labels and values every hollow node carries.
const (
	// FleetLabel names the fleet a node belongs to; the light profile's
	// shared node watch selects on it.
	FleetLabel     = "kscale.io/fleet"
	runtimeVersion = "fake://0.1.0"
	leaseNamespace = "kube-node-lease"
	leasesPath     = "/apis/coordination.k8s.io/v1/namespaces/" + leaseNamespace + "/leases"
	kubeletPort    = 10250
)

// node is one hollow node: its identity, its registration, and the pods bound
// to it. Periodic work runs on the fleet's scheduler; only its watches have
// goroutines of their own.
type node struct {
	fleet *Fleet
	index int
	name  string
	zone  string
	ip    net.IP
	// client carries what a kubelet sends on its rate-limited KubeClient;
	// heartbeat and events are the node's other two clients (nodeClients).
	client, heartbeat, events *rest.RESTClient

	mu         sync.Mutex
	uid        types.UID
	registered bool
	// started: the node's status reports and watches run; heartbeating: its
	// lease renewals run (a renewal is due or running).
	started      bool
	heartbeating bool
	// deleted: its Node was deleted while the fleet ran. A v1.37 kubelet does
	// not register again until it restarts (kubernetes/kubernetes#71398).
	deleted bool
	// csiNodeReady: the node's CSINode is there. A kubelet posts Ready=False
	// until then; light nodes have none and are Ready from the start.
	csiNodeReady bool
	readySince   time.Time // when Ready last turned True; zero: the fleet's start
	podCIDR      *net.IPNet
	lease        *coordinationv1.Lease
	renewedAt    time.Time // last heartbeat: lease renewal, or the status that made the node Ready
	failed       bool      // fault injection: heartbeats stopped
	leaseFails   int       // consecutive failed renewals, for the retry backoff
	pods         map[types.UID]*pod
	// unsynced are pods whose latest status the API lacks; syncing: the
	// node's status sync runs; fullSync: its next pass is the periodic one,
	// which also writes back statuses others changed; periodicSyncQueued:
	// that pass is queued. See statussync.go.
	unsynced                              map[types.UID]*pod
	syncing, fullSync, periodicSyncQueued bool
	used                                  usage
	ipsInUse                              map[uint32]bool
	// admitting is when the kubelet is done admitting the pods it was sent.
	admitting time.Time
	// ConfigMaps and Secrets the node's pods reference, with the watch
	// the node holds on each.
	refs       map[objectRef]int
	refWatches map[objectRef]refWatch
	// images are the images of the containers the node started (images.go);
	// imagesSent is how many of them the API has; imagesReportQueued: a
	// report of new ones is scheduled.
	images             []string
	imagesSent         int
	imagesReportQueued bool
	// queuedEvents counts the node's events waiting to be sent.
	queuedEvents atomic.Int32
}

func (n *node) logger() klog.Logger { return klog.Background().WithValues("node", n.name) }

// register creates the Node (or adopts an existing one of the same name).
// A light node then creates its Lease at once; a kubelet-profile node goes on
// with the kubelet's start-up calls (startup.go).
func (n *node) register(ctx context.Context) {
	f := n.fleet
	if err := n.ensureClient(ctx); err != nil {
		n.logger().Error(err, "Creating the node's client")
		f.sched.After(f.backoff(0), priorityBackground, n.register)
		return
	}
	obj := n.nodeObject()
	created := &v1.Node{}
	err := n.client.Post().AbsPath("/api/v1/nodes").Body(obj).Do(ctx).Into(created)
	adopted := apierrors.IsAlreadyExists(err)
	if adopted {
		created, err = n.adopt(ctx)
	}
	if err != nil {
		f.metrics.apiError(err)
		if ctx.Err() == nil {
			n.logger().V(2).Info("Registration failed; retrying", "err", err)
			f.sched.After(f.backoff(1), priorityBackground, n.register)
		}
		return
	}
	n.mu.Lock()
	n.uid = created.UID
	n.setPodCIDR(created.Spec.PodCIDR)
	if !adopted {
		n.imagesSent = len(obj.Status.Images)
	}
	n.registered = true
	first := !n.started
	n.started = true
	n.mu.Unlock()
	f.metrics.registered.Inc()
	if f.cfg.Profile == ProfileLight {
		n.ensureLease(ctx)
	} else if !adopted {
		f.sched.Now(priorityBackground, n.firstStatusSync)
	}
	if !first {
		return
	}
	f.sched.After(jitter(f.cfg.StatusReportFrequency, 0.1), priorityBackground, n.reportStatus)
	// Queued behind the registrations still waiting: a big fleet gets all
	// its nodes Ready before the apiserver sets up six watches for each.
	f.sched.Now(priorityBackground, func(context.Context) { f.nodeRegistered(n) })
}

// ensureClient makes the node's API client on first use.
func (n *node) ensureClient(ctx context.Context) error {
	if n.client != nil {
		return nil
	}
	c, err := n.fleet.nodeClients(ctx, n.name)
	if err != nil {
		return err
	}
	n.useClients(c)
	return nil
}

// useClients sets the node's clients.
func (n *node) useClients(c nodeClients) {
	n.client, n.heartbeat, n.events = c.api, c.heartbeat, c.events
}

// adopt takes over a Node left by an earlier run of the fleet: it reports
// fresh status on it rather than failing.
func (n *node) adopt(ctx context.Context) (*v1.Node, error) {
	existing := &v1.Node{}
	if err := n.client.Get().AbsPath("/api/v1/nodes", n.name).Do(ctx).Into(existing); err != nil {
		return nil, err
	}
	n.fleet.metrics.adopted.Inc()
	n.mu.Lock()
	n.adoptImages(existing.Status.Images)
	n.mu.Unlock()
	// A Node left by an older fleet may declare other features; a restarted
	// kubelet's first status update corrects them, and so does this one.
	updateFeatures := !slices.Equal(existing.Status.DeclaredFeatures, n.fleet.cfg.DeclaredFeatures)
	if err := n.sendStatus(ctx, updateFeatures); err != nil {
		return nil, err
	}
	return existing, nil
}

// ensureLease reads the node's Lease and creates it when missing: a light
// node does so right after registering, as KWOK does.
func (n *node) ensureLease(ctx context.Context) {
	f := n.fleet
	lease, err := n.getOrCreateLease(ctx)
	if err != nil {
		f.metrics.apiError(err)
		if ctx.Err() == nil {
			f.sched.After(f.backoff(1), priorityBackground, n.ensureLease)
		}
		return
	}
	n.leaseAcquired(lease, false)
}

// leaseAcquired records the node's Lease as read or created and, the first
// time, starts its renewals: at once for a Lease that was already there (the
// kubelet updates one it did not create), after an interval for a new one.
func (n *node) leaseAcquired(lease *coordinationv1.Lease, renewNow bool) {
	f := n.fleet
	n.mu.Lock()
	n.lease = lease
	n.renewedAt = n.fleet.clock.Now()
	first := !n.heartbeating
	n.heartbeating = true
	n.mu.Unlock()
	if !first {
		return
	}
	next := f.renewInterval()
	if renewNow {
		next = 0
	}
	f.sched.After(next, priorityHeartbeat, n.renewLease)
}

// getOrCreateLease reads the node's Lease, creating it when it is missing.
func (n *node) getOrCreateLease(ctx context.Context) (*coordinationv1.Lease, error) {
	lease := &coordinationv1.Lease{}
	err := n.heartbeat.Get().AbsPath(leasesPath, n.name).Do(ctx).Into(lease)
	if apierrors.IsNotFound(err) {
		n.mu.Lock()
		uid := n.uid
		n.mu.Unlock()
		err = n.heartbeat.Post().AbsPath(leasesPath).Body(n.newLease(uid)).Do(ctx).Into(lease)
	}
	return lease, err
}

func (n *node) newLease(nodeUID types.UID) *coordinationv1.Lease {
	now := metav1.NewMicroTime(n.fleet.clock.Now())
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:            n.name,
			Namespace:       leaseNamespace,
			OwnerReferences: ownerRefs(n.name, nodeUID),
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(n.name),
			LeaseDurationSeconds: ptr.To(int32(n.fleet.cfg.LeaseDuration / time.Second)),
			RenewTime:            &now,
		},
	}
}

// ownerRefs is the owner reference of what the kubelet makes for its node
// (Lease, CSINode): its Node, so the garbage collector removes them with it.
func ownerRefs(nodeName string, nodeUID types.UID) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: nodeName, UID: nodeUID}}
}

// renewLease updates the Lease's renewTime — one PUT, as the kubelet does
// with the lease it last wrote — and schedules the next renewal.
func (n *node) renewLease(ctx context.Context) {
	f := n.fleet
	n.mu.Lock()
	if n.failed || n.lease == nil || (n.deleted && f.cfg.Profile == ProfileLight) {
		// Stopped: resuming the node's heartbeats, or a Lease made again,
		// starts them again; a light node whose Node is gone stops for good,
		// as KWOK's do.
		n.heartbeating = false
		n.mu.Unlock()
		return
	}
	lease := n.lease.DeepCopy()
	n.mu.Unlock()
	lease.Spec.RenewTime = ptr.To(metav1.NewMicroTime(n.fleet.clock.Now()))

	start := n.fleet.clock.Now()
	updated := &coordinationv1.Lease{}
	err := n.heartbeat.Put().AbsPath(leasesPath, n.name).Body(lease).Do(ctx).Into(updated)
	if apierrors.IsNotFound(err) && f.cfg.Profile == ProfileKubelet {
		// Gone, with its Node or by itself: the kubelet's lease controller
		// starts over, reading its Lease and, for the owner, its Node.
		f.metrics.leaseRenewals.WithLabelValues("conflict").Inc()
		n.mu.Lock()
		n.lease = nil
		n.heartbeating = false
		n.mu.Unlock()
		f.sched.Now(priorityStartup, n.startLease)
		return
	}
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		// Someone else wrote it (or deleted it): read it back, as the kubelet does.
		f.metrics.leaseRenewals.WithLabelValues("conflict").Inc()
		n.ensureLeaseAfterConflict(ctx)
		return
	}
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		f.metrics.apiError(err)
		f.metrics.leaseRenewals.WithLabelValues("error").Inc()
		n.mu.Lock()
		n.leaseFails++
		fails := n.leaseFails
		n.mu.Unlock()
		// The kubelet retries a failed renewal after 200 ms, doubling to 7 s.
		f.sched.After(min(200*time.Millisecond<<min(fails-1, 6), 7*time.Second), priorityHeartbeat, n.renewLease)
		return
	}
	f.metrics.leaseRenewals.WithLabelValues("ok").Inc()
	f.metrics.leaseLatency.Observe(n.fleet.clock.Since(start).Seconds())
	n.mu.Lock()
	n.lease = updated
	n.renewedAt = n.fleet.clock.Now()
	n.leaseFails = 0
	n.mu.Unlock()
	f.sched.After(f.renewInterval(), priorityHeartbeat, n.renewLease)
}

func (n *node) ensureLeaseAfterConflict(ctx context.Context) {
	f := n.fleet
	lease, err := n.getOrCreateLease(ctx)
	if err == nil {
		n.mu.Lock()
		n.lease = lease
		n.mu.Unlock()
		f.sched.Now(priorityHeartbeat, n.renewLease)
		return
	}
	if ctx.Err() == nil {
		f.metrics.apiError(err)
		f.sched.After(time.Second, priorityHeartbeat, n.renewLease)
	}
}

// reportStatus patches the node status with fresh heartbeat times; the
// kubelet does so at least every --node-status-report-frequency even when
// nothing changed.
func (n *node) reportStatus(ctx context.Context) {
	f := n.fleet
	n.mu.Lock()
	report := !n.failed && n.registered
	n.mu.Unlock()
	if report {
		if err := n.patchStatus(ctx); err != nil && ctx.Err() == nil {
			f.metrics.apiError(err)
			f.sched.After(f.backoff(1), priorityBackground, n.reportStatus)
			return
		}
	}
	f.sched.After(jitter(f.cfg.StatusReportFrequency, 0.1), priorityBackground, n.reportStatus)
}

// patchStatus sends the node's conditions, capacity and addresses with the
// current time as heartbeat.
func (n *node) patchStatus(ctx context.Context) error { return n.sendStatus(ctx, false) }

// sendStatus is patchStatus, with the declared features too when
// withFeatures (they never change while the fleet runs), and with the image
// list when it grew since the API last had it.
func (n *node) sendStatus(ctx context.Context, withFeatures bool) error {
	status := n.nodeStatus(n.fleet.clock.Now())
	n.mu.Lock()
	withImages := len(status.Images) != n.imagesSent
	n.mu.Unlock()
	fields := map[string]any{
		"conditions":  status.Conditions,
		"addresses":   status.Addresses,
		"capacity":    status.Capacity,
		"allocatable": status.Allocatable,
		"nodeInfo":    status.NodeInfo,
	}
	if withFeatures {
		fields["declaredFeatures"] = status.DeclaredFeatures
	}
	if withImages {
		fields["images"] = status.Images
	}
	patch, err := statusPatch(fields, "")
	if err != nil {
		return err
	}
	if err := n.heartbeat.Patch(types.StrategicMergePatchType).AbsPath("/api/v1/nodes", n.name, "status").Body(patch).Do(ctx).Error(); err != nil {
		return err
	}
	if withImages {
		n.mu.Lock()
		n.imagesSent = max(n.imagesSent, len(status.Images))
		n.mu.Unlock()
	}
	return nil
}

// setPodCIDR records the podCIDR the controller-manager assigned. Call with
// n.mu held.
func (n *node) setPodCIDR(cidr string) {
	if cidr == "" || (n.podCIDR != nil && n.podCIDR.String() == cidr) {
		return
	}
	_, ipNet, err := net.ParseCIDR(cidr)
	if err != nil || ipNet.IP.To4() == nil {
		return // IPv6 pod networks: keep the fallback range
	}
	n.podCIDR = ipNet
}

// nodeObject is the Node the kubelet registers: with its status, in one
// write, in both profiles. A Node created bare and given its status in a
// second write costs the apiserver one more Node version in its watch
// cache, and saves the controller-manager nothing, as its node lifecycle
// controller keeps each Node as its first health pass finds it.
func (n *node) nodeObject() *v1.Node {
	cfg := n.fleet.cfg
	labels := map[string]string{
		"kubernetes.io/hostname":  n.name,
		"kubernetes.io/os":        "linux",
		"kubernetes.io/arch":      "amd64",
		"beta.kubernetes.io/os":   "linux",
		"beta.kubernetes.io/arch": "amd64",
		FleetLabel:                n.fleet.name,
	}
	if n.zone != "" {
		labels["topology.kubernetes.io/zone"] = n.zone
	}
	for k, v := range cfg.NodeLabels {
		labels[k] = v
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   n.name,
			Labels: labels,
			// A kubelet sets only this one (--enable-controller-attach-detach
			// defaults to true); node.alpha.kubernetes.io/ttl is the TTL
			// controller's to write.
			Annotations: map[string]string{
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
			},
		},
		Spec: v1.NodeSpec{
			ProviderID: "kubemark://" + n.name,
			Taints:     cfg.RegisterWithTaints,
		},
		Status: n.nodeStatus(n.fleet.clock.Now()),
	}
}

func (n *node) nodeStatus(now time.Time) v1.NodeStatus {
	f := n.fleet
	n.mu.Lock()
	images := n.containerImages()
	ready := n.readyCondition(now)
	n.mu.Unlock()
	t := metav1.NewTime(now)
	cond := func(typ v1.NodeConditionType, status v1.ConditionStatus, reason, msg string) v1.NodeCondition {
		return v1.NodeCondition{Type: typ, Status: status, Reason: reason, Message: msg, LastHeartbeatTime: t, LastTransitionTime: metav1.NewTime(f.startedAt)}
	}
	return v1.NodeStatus{
		Capacity:    f.capacity,
		Allocatable: f.allocatable,
		Conditions: []v1.NodeCondition{
			cond(v1.NodeMemoryPressure, v1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(v1.NodeDiskPressure, v1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(v1.NodePIDPressure, v1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			ready,
		},
		Addresses: []v1.NodeAddress{
			{Type: v1.NodeInternalIP, Address: n.ip.String()},
			{Type: v1.NodeHostName, Address: n.name},
		},
		DaemonEndpoints:  v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: kubeletPort}},
		DeclaredFeatures: f.cfg.DeclaredFeatures,
		Images:           images,
		NodeInfo: v1.NodeSystemInfo{
			MachineID:               fmt.Sprintf("%032x", n.index),
			SystemUUID:              fmt.Sprintf("%08x-0000-0000-0000-%012x", n.index, n.index),
			BootID:                  f.bootID,
			KernelVersion:           "6.1.0-kscale",
			OSImage:                 "kscale hollow node",
			ContainerRuntimeVersion: runtimeVersion,
			KubeletVersion:          version.Get().String(),
			OperatingSystem:         "linux",
			Architecture:            "amd64",
			RunningInUserNamespace:  ptr.To(false), // a kubelet sends it even when false
		},
	}
}

// readyCondition is the node's Ready condition at now. Call with n.mu held.
func (n *node) readyCondition(now time.Time) v1.NodeCondition {
	c := v1.NodeCondition{
		Type: v1.NodeReady, Status: v1.ConditionTrue,
		Reason: "KubeletReady", Message: "kubelet is posting ready status",
		LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(n.fleet.startedAt),
	}
	if !n.readySince.IsZero() {
		c.LastTransitionTime = metav1.NewTime(n.readySince)
	}
	if !n.csiNodeReady {
		c.Status, c.Reason, c.Message = v1.ConditionFalse, "KubeletNotReady", "CSINode is not yet initialized"
	}
	return c
}

// nodeIP returns the i-th address after the base of cidr.
func nodeIP(base net.IP, i int) net.IP {
	v := binary.BigEndian.Uint32(base.To4()) + uint32(i)
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, v)
	return ip
}

// capacityFor returns the capacity and allocatable of every node of the
// fleet. Allocatable is what the kubelet leaves after its default hard
// eviction thresholds (memory.available<100Mi, nodefs.available<10%).
func capacityFor(cfg *Config) (capacity, allocatable v1.ResourceList) {
	capacity = v1.ResourceList{
		v1.ResourceCPU:              cfg.CPU,
		v1.ResourceMemory:           cfg.Memory,
		v1.ResourceEphemeralStorage: cfg.EphemeralStorage,
		v1.ResourcePods:             *resource.NewQuantity(int64(cfg.MaxPods), resource.DecimalSI),
	}
	for name, q := range cfg.ExtendedResources {
		capacity[v1.ResourceName(name)] = resource.MustParse(q)
	}
	allocatable = capacity.DeepCopy()
	mem := cfg.Memory.DeepCopy()
	mem.Sub(resource.MustParse("100Mi"))
	if mem.Sign() > 0 {
		allocatable[v1.ResourceMemory] = mem
	}
	storage := resource.NewQuantity(cfg.EphemeralStorage.Value()/10*9, resource.BinarySI)
	allocatable[v1.ResourceEphemeralStorage] = *storage
	return capacity, allocatable
}
