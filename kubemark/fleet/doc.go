// Package fleet runs thousands of hollow nodes in one process: kubemark's
// "fleet" morph.
//
// Each node behaves like a kubelet on the wire — its own identity
// (system:node:<name>) and connection, its own Node registration, Lease
// renewals every 10 s, node status reports, the six watches a v1.37 kubelet
// holds (its Node, its Pods, Services, RuntimeClasses, CSIDrivers,
// PodCertificateRequests), kubelet-style pod admission, pod status patches and
// events — while the code, timers and workers are shared, so a node costs
// kilobytes instead of a kubelet process's tens of megabytes.
//
// The "light" profile trades fidelity for cost: one shared credential, one
// shared pod watch and node watch for the whole fleet, no events.
//
// The package uses client-go and apimachinery only; it does not link
// k8s.io/kubernetes.
package fleet
