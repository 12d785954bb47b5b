package executor

import (
	"fmt"
	"net"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Clients returns the clients a run needs from one configuration: a typed
// client, n dynamic clients each on its own connection (one HTTP/2
// connection caps what a load generator can push), and a REST mapper that
// rediscovers when a kind is new (CRDs created by the run itself).
func Clients(cfg *rest.Config, n int) (kubernetes.Interface, []dynamic.Interface, *restmapper.DeferredDiscoveryRESTMapper, error) {
	if n < 1 {
		n = 1
	}
	// The typed client (measurements' watches of thousands of pods) speaks
	// protobuf, as the control plane's own clients do: a JSON watcher
	// would make the apiserver encode every pod event once more.
	typed := rest.CopyConfig(cfg)
	typed.ContentType = "application/vnd.kubernetes.protobuf"
	typed.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	client, err := kubernetes.NewForConfig(typed)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("creating the API client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("creating the discovery client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	dyns := make([]dynamic.Interface, n)
	for i := range dyns {
		c := rest.CopyConfig(cfg)
		// A dial function of its own keeps client-go from sharing one
		// cached transport (and connection) between the clients.
		dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		c.Dial = dialer.DialContext
		if dyns[i], err = dynamic.NewForConfig(c); err != nil {
			return nil, nil, nil, fmt.Errorf("creating dynamic client %d: %w", i, err)
		}
	}
	return client, dyns, mapper, nil
}
