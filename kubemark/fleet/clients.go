package fleet

import (
	"fmt"
	"net"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kscale/kscale/controlplane/pki"
)

// clientFactory makes the API clients of the fleet's nodes.
type clientFactory struct {
	base *rest.Config
	ca   *pki.CA // nil: every node uses the kubeconfig's credential
}

func newClientFactory(c *Config) (*clientFactory, error) {
	base, err := clientcmd.BuildConfigFromFlags("", c.KubeconfigPath)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", c.KubeconfigPath, err)
	}
	base.ContentType = c.ContentType
	base.AcceptContentTypes = c.ContentType
	base.QPS = c.QPS
	base.Burst = c.Burst
	base.UserAgent = "kubelet/v1.37.2 (linux/amd64) kubemark-fleet"
	base.APIPath = "/api"
	base.GroupVersion = &schema.GroupVersion{Version: "v1"}
	base.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	f := &clientFactory{base: base}
	if c.CACertFile != "" {
		if f.ca, err = pki.LoadCA(c.CACertFile, c.CAKeyFile); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// ownIdentity reports whether nodes authenticate as themselves.
func (f *clientFactory) ownIdentity() bool { return f.ca != nil }

// forNode returns a client for one node: with its own identity
// (system:node:<name>) when the factory has a CA, and always with its own
// connection, as every kubelet has.
func (f *clientFactory) forNode(name string) (*rest.RESTClient, error) {
	cfg := rest.CopyConfig(f.base)
	if f.ca != nil {
		kp, err := f.ca.ClientCert("system:node:"+name, "system:nodes")
		if err != nil {
			return nil, err
		}
		cfg.TLSClientConfig.CertData, cfg.TLSClientConfig.KeyData = kp.CertPEM, kp.KeyPEM
		cfg.TLSClientConfig.CertFile, cfg.TLSClientConfig.KeyFile = "", ""
		cfg.BearerToken, cfg.BearerTokenFile, cfg.Username, cfg.Password = "", "", "", ""
		cfg.ExecProvider, cfg.AuthProvider = nil, nil
	}
	// A dialer of its own makes client-go build this node a transport (and
	// so a connection) of its own instead of sharing a cached one.
	cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return f.client(cfg)
}

// shared returns one client for many nodes (the light profile).
func (f *clientFactory) shared() (*rest.RESTClient, error) {
	return f.client(rest.CopyConfig(f.base))
}

func (f *clientFactory) client(cfg *rest.Config) (*rest.RESTClient, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return rest.RESTClientForConfigAndClient(cfg, httpClient)
}
