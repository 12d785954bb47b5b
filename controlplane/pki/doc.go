// Package pki generates the certificate authority, serving certificates and
// client certificates of a local kscale cluster.
//
// It is deliberately light (standard library and client-go only) so that the
// framework can mint credentials for hollow nodes — system:node:<name> in group
// system:nodes — without linking the control plane.
package pki
