// Package kubemark is the kubemark provider: hollow nodes run as pods of a
// Deployment in a second, "root" cluster (--root-kubeconfig) and register
// into the test cluster (--kubeconfig). It automates what the seed runbook
// did by hand for 5000 nodes: a namespace, a Secret with the test cluster's
// address and a bootstrap token (each hollow node then gets its own
// system:node certificate, identity.go), a ConfigMap of node settings and a
// Deployment of hollow-node pods, scaled up in steps (1000, 3000, 5000, then
// every 5000 more nodes) while it waits for the nodes to be Ready on the
// test cluster. It checks the root's capacity before it creates anything,
// fails a step as soon as a pod cannot run (failfast.go), and follows the
// pods' restarts until teardown (restarts.go).
//
// The manifests are Go text/templates (templates/*.yaml, embedded); a folder
// of files with the same names (--kubemark-templates) replaces them one by
// one. Every object carries the ownership labels kscale.io/kubemark=<name>
// and app.kubernetes.io/managed-by=kscale; Provision refuses a namespace that
// lacks them, and Teardown deletes only what carries them.
//
// Two pod layouts (--hollow):
//
//	fleet    each pod is one `kubemark --morph=fleet --nodes=N` process, its
//	         nodes named <pod name>-0 ... <pod name>-(N-1)
//	kubelet  each pod is one node: the real kubelet morph and the proxy
//	         morph as two containers, the node named after the pod
//
// The provider registers as "kubemark"; its own flags (--kubemark-image, ...)
// live in CommandLine, which a suite or CLI binds with AddFlags.
package kubemark
