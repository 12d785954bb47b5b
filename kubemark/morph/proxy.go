package morph

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	proxyapp "k8s.io/kubernetes/cmd/kube-proxy/app"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	kubeproxyconfig "k8s.io/kubernetes/pkg/proxy/apis/config"
	"k8s.io/utils/ptr"
)

// RunProxy runs the real kube-proxy server for one hollow node until ctx
// ends. Its informers watch Services and EndpointSlices exactly as kube-proxy
// does; the proxier only keeps count of what it was told, and exports the
// counts on /metrics when --metrics-bind-address is set.
func RunProxy(ctx context.Context, c *Config) error {
	clientConfig, err := c.restConfig()
	if err != nil {
		return err
	}
	clientConfig.UserAgent = "hollow-proxy"
	client, err := clientset.NewForConfig(clientConfig)
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	defer broadcaster.Shutdown()
	server := &proxyapp.ProxyServer{
		Config: &kubeproxyconfig.KubeProxyConfiguration{
			Mode:               kubeproxyconfig.ProxyMode("fake"),
			ConfigSyncPeriod:   metav1.Duration{Duration: 30 * time.Second},
			MetricsBindAddress: c.MetricsBindAddress,
			Linux:              kubeproxyconfig.KubeProxyLinuxConfiguration{OOMScoreAdj: ptr.To[int32](0)},
		},
		Client:      client,
		Broadcaster: broadcaster,
		Recorder:    broadcaster.NewRecorder(legacyscheme.Scheme, "kube-proxy"),
		NodeRef:     &v1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: c.NodeName},
		NodeName:    c.NodeName,
		Proxier:     newCountingProxier(ctx),
	}
	klog.InfoS("Hollow proxy starting", "node", c.NodeName)
	errCh := make(chan error, 1)
	go func() { errCh <- server.Run(ctx) }()
	select {
	case err := <-errCh:
		if err != nil {
			return fmt.Errorf("running kube-proxy: %w", err)
		}
		return nil
	case <-ctx.Done():
		klog.InfoS("Hollow proxy stopping", "node", c.NodeName)
		return nil
	}
}

var (
	proxyServices = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace:      "kscale",
		Subsystem:      "hollow_proxy",
		Name:           "services",
		Help:           "Services the hollow proxy has been told about by its informers.",
		StabilityLevel: metrics.ALPHA,
	})
	proxyEndpointSlices = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace:      "kscale",
		Subsystem:      "hollow_proxy",
		Name:           "endpoint_slices",
		Help:           "EndpointSlices the hollow proxy has been told about by its informers.",
		StabilityLevel: metrics.ALPHA,
	})
	proxyRegisterOnce sync.Once
)

// countingProxier implements kube-proxy's proxy.Provider without programming
// any rules. It tracks which Services and EndpointSlices it has seen, so that
// tests and users can tell the hollow proxy is in sync with the cluster.
type countingProxier struct {
	ctx       context.Context
	mu        sync.Mutex
	services  map[types.NamespacedName]struct{}
	endpoints map[types.NamespacedName]struct{}
}

func newCountingProxier(ctx context.Context) *countingProxier {
	proxyRegisterOnce.Do(func() { legacyregistry.MustRegister(proxyServices, proxyEndpointSlices) })
	return &countingProxier{
		ctx:       ctx,
		services:  map[types.NamespacedName]struct{}{},
		endpoints: map[types.NamespacedName]struct{}{},
	}
}

func key(m metav1.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}
}

func (p *countingProxier) setService(svc *v1.Service, present bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if present {
		p.services[key(svc)] = struct{}{}
	} else {
		delete(p.services, key(svc))
	}
	proxyServices.Set(float64(len(p.services)))
	klog.V(2).InfoS("Hollow proxy service", "service", key(svc), "present", present, "services", len(p.services))
}

func (p *countingProxier) setSlice(slice *discoveryv1.EndpointSlice, present bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if present {
		p.endpoints[key(slice)] = struct{}{}
	} else {
		delete(p.endpoints, key(slice))
	}
	proxyEndpointSlices.Set(float64(len(p.endpoints)))
}

func (p *countingProxier) OnServiceAdd(svc *v1.Service)                    { p.setService(svc, true) }
func (p *countingProxier) OnServiceUpdate(_, svc *v1.Service)              { p.setService(svc, true) }
func (p *countingProxier) OnServiceDelete(svc *v1.Service)                 { p.setService(svc, false) }
func (p *countingProxier) OnServiceSynced()                                {}
func (p *countingProxier) OnEndpointSliceAdd(s *discoveryv1.EndpointSlice) { p.setSlice(s, true) }
func (p *countingProxier) OnEndpointSliceUpdate(_, s *discoveryv1.EndpointSlice) {
	p.setSlice(s, true)
}
func (p *countingProxier) OnEndpointSliceDelete(s *discoveryv1.EndpointSlice) { p.setSlice(s, false) }
func (p *countingProxier) OnEndpointSlicesSynced()                            {}
func (p *countingProxier) OnServiceCIDRsChanged([]string)                     {}
func (p *countingProxier) OnTopologyChange(map[string]string)                 {}
func (p *countingProxier) Sync()                                              {}

// SyncLoop is kube-proxy's periodic resync; there are no rules to resync.
func (p *countingProxier) SyncLoop() { <-p.ctx.Done() }
