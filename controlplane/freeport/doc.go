// Package freeport picks TCP ports on 127.0.0.1 for the servers kscale
// starts: the control plane's components and the hollow nodes' kubelets.
//
// A port the kernel hands out for "127.0.0.1:0" comes from its ephemeral
// range, the range it also takes the source ports of outgoing connections
// from. A port picked, released and bound again a moment later by a child
// process may meanwhile have become the local end of one of the machine's
// many connections to the apiserver, and the child fails with "address
// already in use" (a hollow kubelet did so in make test). Ports below the
// ephemeral range are never given to outgoing connections, so only another
// listener can take one in that moment.
package freeport
