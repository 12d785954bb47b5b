package fleet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/transport"
	"k8s.io/component-base/version"

	"github.com/kscale/kscale/controlplane/pki"
	"github.com/kscale/kscale/kubemark/fleet/h2client"
)

// clientFactory makes the API clients of the fleet's nodes.
type clientFactory struct {
	base *rest.Config
	// ca mints each node's certificate; bootstrap requests it through the
	// CSR API instead. With neither, every node uses the kubeconfig's
	// credential.
	ca        *pki.CA
	bootstrap *bootstrapper
	roots     *x509.CertPool // the server's CA, parsed once for all nodes
	// eventQPS and eventBurst limit each node's event client.
	eventQPS   float32
	eventBurst int
}

func newClientFactory(c *Config) (*clientFactory, error) {
	var base *rest.Config
	var err error
	switch {
	case c.RESTConfig != nil:
		base = rest.CopyConfig(c.RESTConfig)
	case c.BootstrapKubeconfigPath != "":
		if base, err = clientcmd.BuildConfigFromFlags("", c.BootstrapKubeconfigPath); err != nil {
			return nil, fmt.Errorf("--bootstrap-kubeconfig=%q: %w", c.BootstrapKubeconfigPath, err)
		}
	default:
		if base, err = clientcmd.BuildConfigFromFlags("", c.KubeconfigPath); err != nil {
			return nil, fmt.Errorf("--kubeconfig=%q: %w", c.KubeconfigPath, err)
		}
	}
	base.ContentType = c.ContentType
	base.AcceptContentTypes = c.ContentType
	base.QPS = c.QPS
	base.Burst = c.Burst
	// The kubelet's own agent string, as the kubelet morph of this binary
	// sends it (the version the build stamps in), for the apiserver's
	// per-client metrics and audit.
	base.UserAgent = fmt.Sprintf("kubelet/%s (%s/%s) kubemark-fleet", version.Get().GitVersion, runtime.GOOS, runtime.GOARCH)
	base.APIPath = "/api"
	base.GroupVersion = &schema.GroupVersion{Version: "v1"}
	base.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	f := &clientFactory{base: base, eventQPS: c.EventQPS, eventBurst: c.EventBurst}
	switch {
	case c.CACertFile != "":
		if f.ca, err = pki.LoadCA(c.CACertFile, c.CAKeyFile); err != nil {
			return nil, fmt.Errorf("--ca-cert-file=%q --ca-key-file=%q: %w", c.CACertFile, c.CAKeyFile, err)
		}
	case c.BootstrapKubeconfigPath != "":
		if f.bootstrap, err = newBootstrapper(base); err != nil {
			return nil, err
		}
	default:
		return f, nil
	}
	if f.roots, err = serverRoots(base); err != nil {
		return nil, err
	}
	return f, nil
}

// serverRoots is the pool that verifies the apiserver: the kubeconfig's CA,
// or the system's when it names none.
func serverRoots(cfg *rest.Config) (*x509.CertPool, error) {
	data := cfg.TLSClientConfig.CAData
	if len(data) == 0 && cfg.TLSClientConfig.CAFile != "" {
		var err error
		if data, err = os.ReadFile(cfg.TLSClientConfig.CAFile); err != nil {
			return nil, fmt.Errorf("reading the kubeconfig's CA: %w", err)
		}
	}
	if len(data) == 0 {
		return x509.SystemCertPool()
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("the kubeconfig's CA holds no PEM certificate")
	}
	return pool, nil
}

// ownIdentity reports whether nodes authenticate as themselves.
func (f *clientFactory) ownIdentity() bool { return f.ca != nil || f.bootstrap != nil }

// nodeClients are one node's API clients. Like a kubelet's they share the
// node's one connection but not its client-side rate limits: the kubelet's
// KubeClient (--kube-api-qps/burst) carries registration, pod status, tokens
// and the CSINode; its HeartbeatClient, unthrottled, the Lease and the node
// status; its event client, its own eventRecordQPS/eventBurst.
type nodeClients struct {
	api, heartbeat, events *rest.RESTClient
}

// sameClient uses one client for every kind of call (the light profile's
// shared, unthrottled client).
func sameClient(c *rest.RESTClient) nodeClients { return nodeClients{c, c, c} }

// forNode returns the clients of one node: with its own identity
// (system:node:<name>) when the factory has a CA or a bootstrap token, and
// always with its own connection, as every kubelet has.
func (f *clientFactory) forNode(ctx context.Context, name string) (nodeClients, error) {
	var cert tls.Certificate
	switch {
	case f.ca != nil:
		kp, err := f.ca.ClientCert("system:node:"+name, "system:nodes")
		if err != nil {
			return nodeClients{}, err
		}
		if cert, err = tls.X509KeyPair(kp.CertPEM, kp.KeyPEM); err != nil {
			return nodeClients{}, err
		}
	case f.bootstrap != nil:
		var err error
		if cert, err = f.bootstrap.certificate(ctx, name); err != nil {
			return nodeClients{}, err
		}
	default:
		return f.ownConnection(rest.CopyConfig(f.base))
	}
	cert.Leaf = nil // parsed for nothing: the handshake sends the DER (4 KiB a node)
	// The node's TLS config is built here rather than by client-go, so that
	// thousands of them share one parsed CA pool and no per-node TLS cache
	// entries: a node's connection costs what a kubelet's costs, and no more.
	rt := newNodeTransport(&tls.Config{
		RootCAs:      f.roots,
		Certificates: []tls.Certificate{cert},
		ServerName:   f.base.TLSClientConfig.ServerName,
		MinVersion:   tls.VersionTLS12,
	})
	wrapped, err := transport.HTTPWrappersForConfig(&transport.Config{UserAgent: f.base.UserAgent}, rt)
	if err != nil {
		return nodeClients{}, err
	}
	cfg := rest.CopyConfig(f.base)
	cfg.TLSClientConfig = rest.TLSClientConfig{}
	cfg.BearerToken, cfg.BearerTokenFile, cfg.Username, cfg.Password = "", "", "", ""
	cfg.ExecProvider, cfg.AuthProvider = nil, nil
	return f.clientsOver(cfg, &http.Client{Transport: wrapped})
}

// clientsOver makes a node's three clients on one HTTP client.
func (f *clientFactory) clientsOver(cfg *rest.Config, hc *http.Client) (nodeClients, error) {
	var c nodeClients
	var err error
	if c.api, err = rest.RESTClientForConfigAndClient(cfg, hc); err != nil {
		return nodeClients{}, err
	}
	heartbeat := rest.CopyConfig(cfg)
	heartbeat.QPS = -1
	if c.heartbeat, err = rest.RESTClientForConfigAndClient(heartbeat, hc); err != nil {
		return nodeClients{}, err
	}
	events := rest.CopyConfig(cfg)
	events.QPS, events.Burst = f.eventQPS, f.eventBurst
	if c.events, err = rest.RESTClientForConfigAndClient(events, hc); err != nil {
		return nodeClients{}, err
	}
	return c, nil
}

// ownConnection returns a client with the kubeconfig's credential on a
// connection of its own. Over TLS it is the fleet's lean HTTP/2 transport;
// a plain-HTTP server gets client-go's transport with a dialer of its own,
// which makes client-go build it a connection of its own too.
func (f *clientFactory) ownConnection(cfg *rest.Config) (nodeClients, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Scheme != "https" {
		cfg.Dial = newDialer().DialContext
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return nodeClients{}, err
		}
		return f.clientsOver(cfg, hc)
	}
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nodeClients{}, err
	}
	if tlsConfig == nil {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	rt, err := rest.HTTPWrappersForConfig(cfg, newNodeTransport(tlsConfig))
	if err != nil {
		return nodeClients{}, err
	}
	return f.clientsOver(cfg, &http.Client{Transport: rt})
}

// newNodeTransport is one node's connection to the apiserver. Like every
// kubelet's client-go connection it pings after 30 s without a frame and
// gives up 15 s later; unlike Go's HTTP/2 client it parks no goroutine per
// open watch (see package h2client).
func newNodeTransport(tlsConfig *tls.Config) *h2client.Transport {
	return &h2client.Transport{
		TLSClientConfig: tlsConfig,
		DialContext:     newDialer().DialContext,
		ReadIdleTimeout: 30 * time.Second,
		PingTimeout:     15 * time.Second,
	}
}

func newDialer() *net.Dialer {
	return &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
}

// shared returns one client for many nodes (the light profile). It has no
// client-side rate limit: a per-client limit meant for one kubelet would
// starve thousands of nodes; the fleet's workers bound its concurrency.
func (f *clientFactory) shared() (*rest.RESTClient, error) {
	cfg := rest.CopyConfig(f.base)
	cfg.QPS = -1
	return f.client(cfg)
}

func (f *clientFactory) client(cfg *rest.Config) (*rest.RESTClient, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return rest.RESTClientForConfigAndClient(cfg, httpClient)
}
