package morph

import (
	"fmt"
	"time"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	cadvisortest "k8s.io/kubernetes/pkg/kubelet/cadvisor/testing"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"k8s.io/kubernetes/pkg/kubelet/eviction"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	"k8s.io/utils/ptr"
)

// The machine a hollow kubelet reports is set by its flags (--cpu,
// --memory, --ephemeral-storage) rather than fixed by the fake cAdvisor, so
// that fleet nodes and kubelet morphs given the same flags report the same
// capacity and allocatable, and the scheduler treats them alike.

// fakeMachine is the fake cAdvisor with the configured cores and memory.
type fakeMachine struct {
	cadvisortest.Fake
	cores  int
	memory uint64
}

func (m *fakeMachine) MachineInfo(logger klog.Logger) (*cadvisorapi.MachineInfo, error) {
	info, err := m.Fake.MachineInfo(logger)
	if err != nil {
		return nil, err
	}
	info.NumCores = m.cores
	info.MemoryCapacity = m.memory
	return info, nil
}

// hollowContainerManager is the stub container manager with the two answers
// the kubelet's node status takes from a real one: the ephemeral-storage
// capacity of the root filesystem, and the reservation that allocatable
// leaves out — the hard eviction thresholds, as the real container manager
// reserves them (memory.available, nodefs.available).
type hollowContainerManager struct {
	cm.ContainerManager
	ephemeralStorage resource.Quantity
	reservation      v1.ResourceList
}

func (m *hollowContainerManager) GetCapacity(_ klog.Logger, localStorageCapacityIsolation bool) v1.ResourceList {
	if !localStorageCapacityIsolation {
		return v1.ResourceList{}
	}
	return v1.ResourceList{v1.ResourceEphemeralStorage: m.ephemeralStorage.DeepCopy()}
}

func (m *hollowContainerManager) GetNodeAllocatableReservation() v1.ResourceList {
	return m.reservation.DeepCopy()
}

func (m *hollowContainerManager) NewPodContainerManager() cm.PodContainerManager {
	return &hollowPodCgroups{PodContainerManager: m.ContainerManager.NewPodContainerManager()}
}

// hollowPodCgroups answers the kubelet's reads of a pod's cgroup with what
// the kubelet writes there on a real node: the pod's resources (CFS quota
// enforced, the default 100 ms period, no memory QoS). The stub holds
// nothing, and the kubelet then reports a pod's CPU request as unknown once
// the pod stops running — and writes one more status than a real node.
type hollowPodCgroups struct{ cm.PodContainerManager }

func (h *hollowPodCgroups) GetPodCgroupConfig(pod *v1.Pod, name v1.ResourceName) (*cm.ResourceConfig, error) {
	set := cm.ResourceConfigForPod(pod, true, cfsPeriod, false, kubeletconfig.NoneMemoryReservationPolicy)
	// A read back from the cgroup has every value of its controller; an
	// unset limit reads as none (-1), as "max" does.
	unlimited := func(v *int64) *int64 {
		if v == nil {
			return ptr.To[int64](-1)
		}
		return v
	}
	switch name {
	case v1.ResourceCPU:
		period := set.CPUPeriod
		if period == nil {
			period = ptr.To(cfsPeriod)
		}
		shares := set.CPUShares
		if shares == nil {
			shares = ptr.To[uint64](cm.MinShares)
		}
		return &cm.ResourceConfig{CPUShares: shares, CPUQuota: unlimited(set.CPUQuota), CPUPeriod: period}, nil
	case v1.ResourceMemory:
		return &cm.ResourceConfig{Memory: unlimited(set.Memory)}, nil
	}
	return nil, fmt.Errorf("no %s cgroup on a hollow node", name)
}

// cfsPeriod is the kubelet's default CFS quota period (100 ms), in µs.
const cfsPeriod = uint64(100 * time.Millisecond / time.Microsecond)

// evictionReservation is what the kubelet's hard eviction thresholds
// (--eviction-hard) keep out of allocatable for a node of this capacity.
func evictionReservation(evictionHard map[string]string, capacity v1.ResourceList) (v1.ResourceList, error) {
	thresholds, err := eviction.ParseThresholdConfig(nil, evictionHard, nil, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("parsing the eviction thresholds: %w", err)
	}
	reserved := v1.ResourceList{}
	for _, t := range thresholds {
		if t.Operator != evictionapi.OpLessThan {
			continue
		}
		var name v1.ResourceName
		switch t.Signal {
		case evictionapi.SignalMemoryAvailable:
			name = v1.ResourceMemory
		case evictionapi.SignalNodeFsAvailable:
			name = v1.ResourceEphemeralStorage
		default:
			continue
		}
		c := capacity[name]
		reserved[name] = *evictionapi.GetThresholdQuantity(t.Value, &c)
	}
	return reserved, nil
}
