package existing

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kscale/kscale/framework/provider"
	"github.com/kscale/kscale/framework/runner"
)

func init() { provider.Register("existing", New) }

// Provider measures the cluster a kubeconfig points at.
type Provider struct{ o provider.Options }

// New checks the options: a kubeconfig is all the provider needs.
func New(o provider.Options) (provider.Provider, error) {
	if o.Kubeconfig == "" {
		return nil, errors.New("--provider=existing needs --kubeconfig (or KUBECONFIG)")
	}
	return &Provider{o: o}, nil
}

// Provision counts the schedulable nodes: --nodes=0 sizes the run for all
// of them; a larger --nodes than there are is an error, since the config
// would be sized for nodes the cluster lacks.
func (p *Provider) Provision(ctx context.Context) (*provider.Cluster, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", p.o.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", p.o.Kubeconfig, err)
	}
	n, err := runner.SchedulableNodes(ctx, cfg)
	if err != nil {
		return nil, err
	}
	want := p.o.Nodes
	if want == 0 {
		want = n
	}
	if want > n || want == 0 {
		return nil, fmt.Errorf("--nodes=%d: the cluster has %d schedulable nodes", p.o.Nodes, n)
	}
	return &provider.Cluster{Kubeconfig: p.o.Kubeconfig, Nodes: want}, nil
}

// Teardown has nothing to remove: the run deletes its own namespaces.
func (p *Provider) Teardown(context.Context) error { return nil }
