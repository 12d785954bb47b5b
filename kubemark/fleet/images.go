package fleet

import (
	"context"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
)

// A node lists in status.images the images of the containers it has started,
// as a kubelet lists what its runtime has pulled. Each image is listed under
// its one name and without a size, as hollow kubelets (the kubelet morph's
// fake image service) list theirs; without sizes the scheduler's
// ImageLocality score stays out of placement, as it does with them.
const (
	// maxNodeImages is the kubelet's --node-status-max-images default.
	maxNodeImages = 50
	// imageReportDelay is the least wait before a node reports a new
	// image. A kubelet refreshes its image list every 30 s and sends a
	// changed list with its next status sync (every 10 s), so a new image
	// shows in its Node 10–40 s after the pull; so it does here
	// (jitter(imageReportDelay, 3)).
	imageReportDelay = 10 * time.Second
)

// notePulled records the images of a pod's containers as present on the
// node, says which of them the node pulls for it (the kubelet pulls an image
// it lacks, and one whose pull policy is Always), and, when one is new to
// the node's list, arranges a status report with the longer list. Call
// with n.mu held.
func (n *node) notePulled(p *pod) (pulled map[string]bool) {
	added := false
	for _, cs := range [][]containerInfo{p.initContainers, p.containers} {
		for _, c := range cs {
			if c.pull == v1.PullAlways || (c.pull != v1.PullNever && !slices.Contains(n.images, c.image)) {
				if pulled == nil {
					pulled = map[string]bool{}
				}
				pulled[c.image] = true
			}
			added = n.addImage(c.image) || added
		}
	}
	if added && !n.imagesReportQueued {
		n.imagesReportQueued = true
		n.fleet.sched.After(jitter(imageReportDelay, 3), priorityBackground, n.reportImages)
	}
	return pulled
}

// recordPull records the kubelet's image events for a container: Pulling
// and Pulled when it pulls, else Pulled saying the image is there.
func (n *node) recordPull(ref *v1.ObjectReference, c containerInfo, pulls bool) {
	events := n.fleet.events
	if !pulls {
		events.record(n, ref, v1.EventTypeNormal, "Pulled", fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", c.image))
		return
	}
	events.record(n, ref, v1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", c.image))
	events.record(n, ref, v1.EventTypeNormal, "Pulled", fmt.Sprintf("Successfully pulled image %q in 0s (0s including waiting). Image size: 0 bytes.", c.image))
}

// addImage lists an image on the node unless it is listed already or the
// list is full, and says whether it did. Call with n.mu held.
func (n *node) addImage(name string) bool {
	if name == "" || len(n.images) >= maxNodeImages || slices.Contains(n.images, name) {
		return false
	}
	n.images = append(n.images, name)
	return true
}

// reportImages sends the node's status with its image list. A node whose
// heartbeats are stopped sends nothing; its status report on resuming
// carries the list.
func (n *node) reportImages(ctx context.Context) {
	n.mu.Lock()
	n.imagesReportQueued = false
	failed := n.failed
	n.mu.Unlock()
	if failed {
		return
	}
	if err := n.patchStatus(ctx); err != nil && ctx.Err() == nil {
		n.fleet.metrics.apiError(err)
		n.mu.Lock()
		if !n.imagesReportQueued {
			n.imagesReportQueued = true
			n.fleet.sched.After(n.fleet.backoff(1), priorityBackground, n.reportImages)
		}
		n.mu.Unlock()
	}
}

// containerImages is the node's image list as status.images has it. Call
// with n.mu held.
func (n *node) containerImages() []v1.ContainerImage {
	if len(n.images) == 0 {
		return nil
	}
	out := make([]v1.ContainerImage, len(n.images))
	for i, name := range n.images {
		out[i] = v1.ContainerImage{Names: []string{name}}
	}
	return out
}

// adoptImages takes the image list of a Node left by an earlier run: the
// runtime of a restarted kubelet still has the images it pulled. Call with
// n.mu held.
func (n *node) adoptImages(listed []v1.ContainerImage) {
	known := n.images
	n.images = nil
	for _, img := range listed {
		if len(img.Names) > 0 {
			n.addImage(img.Names[0])
		}
	}
	n.imagesSent = len(n.images)
	for _, name := range known {
		n.addImage(name)
	}
}
