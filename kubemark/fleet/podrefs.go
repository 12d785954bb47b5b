package fleet

import (
	"context"
	"net/url"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
)

// objectRef is a ConfigMap or Secret a pod references.
type objectRef struct {
	resource  string // "configmaps" or "secrets"
	namespace string
	name      string
}

// tokenSource is a projected service-account token a pod mounts.
type tokenSource struct {
	audience   string
	expiration int64
}

// podVolume is a volume that reads ConfigMaps or Secrets.
type podVolume struct {
	name string
	refs []objectRef
}

// podReferences lists the ConfigMaps and Secrets a pod uses (volumes,
// projected sources, env and envFrom of every container), the volumes that
// read some of them, and its projected service-account tokens: what a
// kubelet fetches and watches for it.
func podReferences(p *v1.Pod) (refs []objectRef, volumes []podVolume, tokens []tokenSource) {
	seen := map[objectRef]bool{}
	add := func(resource, name string) *objectRef {
		if name == "" {
			return nil
		}
		r := objectRef{resource, p.Namespace, name}
		if !seen[r] {
			seen[r] = true
			refs = append(refs, r)
		}
		return &r
	}
	for _, vol := range p.Spec.Volumes {
		v := podVolume{name: vol.Name}
		read := func(r *objectRef) {
			if r != nil {
				v.refs = append(v.refs, *r)
			}
		}
		switch {
		case vol.ConfigMap != nil:
			read(add("configmaps", vol.ConfigMap.Name))
		case vol.Secret != nil:
			read(add("secrets", vol.Secret.SecretName))
		case vol.Projected != nil:
			for _, src := range vol.Projected.Sources {
				switch {
				case src.ConfigMap != nil:
					read(add("configmaps", src.ConfigMap.Name))
				case src.Secret != nil:
					read(add("secrets", src.Secret.Name))
				case src.ServiceAccountToken != nil:
					exp := int64(3600)
					if src.ServiceAccountToken.ExpirationSeconds != nil {
						exp = *src.ServiceAccountToken.ExpirationSeconds
					}
					tokens = append(tokens, tokenSource{src.ServiceAccountToken.Audience, exp})
				}
			}
		}
		if len(v.refs) > 0 {
			volumes = append(volumes, v)
		}
	}
	containers := append(append([]v1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...)
	for _, c := range containers {
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil {
				add("configmaps", e.ConfigMapRef.Name)
			}
			if e.SecretRef != nil {
				add("secrets", e.SecretRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if e.ValueFrom.ConfigMapKeyRef != nil {
				add("configmaps", e.ValueFrom.ConfigMapKeyRef.Name)
			}
			if e.ValueFrom.SecretKeyRef != nil {
				add("secrets", e.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	return refs, volumes, tokens
}

// holdRefs counts the pod's references and opens a watch on each object the
// node did not reference yet — the kubelet's watch-based ConfigMap and
// Secret managers keep one watch per referenced object while any pod on the
// node uses it. Each watch's synced channel closes once it has the object:
// a kubelet mounting a volume waits for that. Call with n.mu held.
func (n *node) holdRefs(refs []objectRef) {
	f := n.fleet
	if f.cfg.Profile != ProfileKubelet {
		return
	}
	for _, r := range refs {
		n.refs[r]++
		if n.refs[r] == 1 {
			ctx, cancel := context.WithCancel(f.watchCtx)
			done := make(chan struct{})
			n.refWatches[r] = refWatch{cancel: cancel, synced: done}
			var once sync.Once
			f.startWatchCtx(ctx, n.client, watchSpec{
				name:   r.resource,
				path:   "/api/v1/namespaces/" + r.namespace + "/" + r.resource,
				params: url.Values{"fieldSelector": {fields.OneTermEqualSelector("metadata.name", r.name).String()}},
				synced: func() { once.Do(func() { close(done) }) },
			})
		}
	}
}

// refWatch is the watch a node holds on a referenced object.
type refWatch struct {
	cancel context.CancelFunc
	synced chan struct{} // closed once the watch has the object
}

// releaseRefs undoes holdRefs, closing watches nobody needs any more. Call
// with n.mu held.
func (n *node) releaseRefs(refs []objectRef) {
	for _, r := range refs {
		if n.refs[r] == 0 {
			continue
		}
		n.refs[r]--
		if n.refs[r] == 0 {
			delete(n.refs, r)
			if w, ok := n.refWatches[r]; ok {
				w.cancel()
				delete(n.refWatches, r)
			}
		}
	}
}

// requestTokens asks for the pod's projected service-account tokens, bound to
// the pod, as the kubelet's token manager does before it mounts them.
func (n *node) requestTokens(ctx context.Context, p *pod) {
	if n.fleet.cfg.Profile != ProfileKubelet {
		return
	}
	for _, t := range p.tokens {
		req := &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{
				ExpirationSeconds: ptr.To(t.expiration),
				BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: p.name, UID: p.uid},
			},
		}
		if t.audience != "" {
			req.Spec.Audiences = []string{t.audience}
		}
		err := n.client.Post().AbsPath("/api/v1/namespaces", p.namespace, "serviceaccounts", p.serviceAccount, "token").Body(req).Do(ctx).Error()
		if err != nil && ctx.Err() == nil {
			n.fleet.metrics.apiError(err)
		}
	}
}

// getPod reads the pod before a status write, as the kubelet's status
// manager does to check it is still the same pod.
func (n *node) getPod(ctx context.Context, p *pod) error {
	if n.fleet.cfg.Profile != ProfileKubelet {
		return nil
	}
	return n.client.Get().AbsPath("/api/v1/namespaces", p.namespace, "pods", p.name).Do(ctx).Error()
}
