// Package morph runs one hollow node component in this process: the real
// kubelet (k8s.io/kubernetes) against a fake container runtime, fake cAdvisor
// and fake mounter, or the real kube-proxy with a proxier that programs
// nothing. These are kubemark's "kubelet" and "proxy" morphs.
//
// Differences from upstream kubemark, asked for by users who run many hollow
// nodes on one machine:
//
//   - the kubelet's root, state, log and socket folders live in one private
//     temporary folder per node (under $TMPDIR), removed when the node exits;
//   - the fake image service is the default (--use-host-image-service=false):
//     upstream dials the host's containerd and fails with ImageInspectError
//     where there is none;
//   - the kubelet server binds 127.0.0.1 unless told otherwise;
//   - the kubelet sends its events (Scheduled pods' Pulled, Created, Started)
//     as a real kubelet does, unless --events=false.
//
// This is one of the two packages allowed to import k8s.io/kubernetes.
package morph
