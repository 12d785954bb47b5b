package fleet

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509/pkix"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
)

// bootstrapper gets each node its own client certificate as a kubelet's
// TLS bootstrap does: with the bootstrap token's credential it asks the CSR
// API for a kubernetes.io/kube-apiserver-client-kubelet certificate of
// system:node:<name> in system:nodes, which the controller-manager approves
// and signs, and waits for it.
type bootstrapper struct {
	client kubernetes.Interface
	// timeout bounds the wait for one certificate.
	timeout time.Duration
}

func newBootstrapper(cfg *rest.Config) (*bootstrapper, error) {
	c := rest.CopyConfig(cfg)
	// The token's requests are few (one CSR and one watch per node) and
	// come all at once at start: the fleet's workers bound them.
	c.QPS = -1
	c.ContentType, c.AcceptContentTypes = "", ""
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("bootstrap client: %w", err)
	}
	return &bootstrapper{client: client, timeout: 5 * time.Minute}, nil
}

// certificate requests and returns the node's client certificate.
func (b *bootstrapper) certificate(ctx context.Context, node string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	subject := &pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}
	csrPEM, err := certutil.MakeCSR(key, subject, nil, nil)
	if err != nil {
		return tls.Certificate{}, err
	}
	usages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	name, uid, err := csr.RequestCertificateWithContext(ctx, b.client, csrPEM, "", certificatesv1.KubeAPIServerClientKubeletSignerName, nil, usages, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("requesting the client certificate of %s: %w", node, err)
	}
	wctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	certPEM, err := csr.WaitForCertificate(wctx, b.client, name, uid)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("waiting for CSR %s of %s to be approved and signed: %w", name, node, err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}
