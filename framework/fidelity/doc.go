// Package fidelity proves hollow nodes right against the real kubelet. The
// same workloads run on a group of fleet nodes (kubemark --morph=fleet) and
// on a group of kubelet morphs (kubemark --morph=kubelet, the real kubelet
// over a fake runtime) in one cluster, and what each group did is compared
// figure by figure: pod startup per transition, how the scheduler placed the
// pods, the API calls and events per pod, how fast a pod status someone else
// changed is written back, and the pod status objects field by field.
//
// The workloads: a burst of pods arriving at one node at once; the status of
// some of those pods patched by someone else; that node failing, marked
// NotReady by the node lifecycle controller, and recovering; a steady stream
// of pods placed by the scheduler over the group; and the deletion of every
// pod.
//
// The package uses client-go only. The cluster must log the nodes' requests
// with AuditPolicy, so the calls of each group can be counted on the
// apiserver's side.
package fidelity
