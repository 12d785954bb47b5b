package morph

import (
	"context"

	v1 "k8s.io/api/core/v1"
	probetest "k8s.io/kubernetes/pkg/kubelet/prober/testing"
)

// hollowProber stands in for the kubelet's probe manager. Probes cannot run
// against fake containers, so every container is treated as one without
// probes, which the real prober reports as started once running and ready
// once started. (Upstream kubemark's fake prober marks every container ready,
// running or not, and never started.)
type hollowProber struct{ probetest.FakeManager }

func (hollowProber) UpdatePodStatus(_ context.Context, _ *v1.Pod, status *v1.PodStatus) {
	for i := range status.ContainerStatuses {
		cs := &status.ContainerStatuses[i]
		running := cs.State.Running != nil
		cs.Started = &running
		cs.Ready = running
	}
}
