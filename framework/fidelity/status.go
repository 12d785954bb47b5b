package fidelity

import (
	"encoding/json"
	"regexp"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Placeholders a normalized status shows where a value is there but differs
// by nature between two pods.
const (
	somePodIP       = "<pod IP>"
	someHostIP      = "<host IP>"
	someContainerID = "<container ID>"
)

// generatedSuffix matches the random suffix of a generated volume name
// (kube-api-access-x7k2p).
var generatedSuffix = regexp.MustCompile(`-[a-z0-9]{5}$`)

// normalize returns a pod status with what differs between any two pods
// taken out, so that statuses written by two kinds of node compare field by
// field: every time is zero, and IPs, container IDs and generated volume
// names are placeholders (present or not is kept).
//
// Two fields belong to the container runtime rather than to the kubelet,
// and the kubelet morph's fake runtime fills them as no real runtime does:
// the pod IP, one address for every pod, and a terminated container's
// reason, which containerd and CRI-O report as "Completed" for exit code 0
// and the fake runtime leaves empty. Both become placeholders too.
func normalize(s v1.PodStatus) v1.PodStatus {
	s = *s.DeepCopy()
	if s.StartTime != nil {
		s.StartTime = &metav1.Time{}
	}
	for i := range s.Conditions {
		s.Conditions[i].LastTransitionTime = metav1.Time{}
		s.Conditions[i].LastProbeTime = metav1.Time{}
	}
	if s.HostIP != "" {
		s.HostIP = someHostIP
	}
	for i := range s.HostIPs {
		s.HostIPs[i].IP = someHostIP
	}
	if s.PodIP != "" {
		s.PodIP = somePodIP
	}
	for i := range s.PodIPs {
		s.PodIPs[i].IP = somePodIP
	}
	for _, list := range [][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range list {
			normalizeContainer(&list[i])
		}
	}
	return s
}

func normalizeContainer(c *v1.ContainerStatus) {
	if c.ContainerID != "" {
		c.ContainerID = someContainerID
	}
	for _, st := range []*v1.ContainerState{&c.State, &c.LastTerminationState} {
		if st.Running != nil {
			st.Running.StartedAt = metav1.Time{}
		}
		if t := st.Terminated; t != nil {
			t.StartedAt, t.FinishedAt = metav1.Time{}, metav1.Time{}
			if t.ContainerID != "" {
				t.ContainerID = someContainerID
			}
			t.Reason = ""
		}
	}
	for i := range c.VolumeMounts {
		c.VolumeMounts[i].Name = generatedSuffix.ReplaceAllString(c.VolumeMounts[i].Name, "-*")
	}
}

// statusText is a normalized status as indented JSON, for equality and for
// showing a difference line by line.
func statusText(s v1.PodStatus) string {
	b, err := json.MarshalIndent(normalize(s), "", "  ")
	if err != nil {
		return "unencodable status: " + err.Error()
	}
	return string(b)
}
