package kubemark

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/kscale/kscale/framework/provider"
)

// Labels on everything the provider creates, and on its hollow Nodes.
const (
	// OwnerLabel carries the run name (--kubemark-name).
	OwnerLabel = "kscale.io/kubemark"
	// ManagedByLabel is app.kubernetes.io/managed-by=kscale.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "kscale"
	// HollowLabel marks hollow Nodes (the local provider's label too);
	// the kubemark provider's nodes have the value HollowValue.
	HollowLabel = "kscale.io/hollow-node"
	HollowValue = "kubemark"
)

// Names of the objects of the embedded templates.
const (
	DeploymentName = "hollow-node"
	SecretName     = "hollow-node-credentials"
	ConfigMapName  = "hollow-node-config"
	// MetricsPort serves a fleet's /metrics, /healthz and /status.
	MetricsPort = 10269
)

//go:embed templates/*.yaml
var embedded embed.FS

// TemplateFiles are the templates, in the order their objects are rendered.
var TemplateFiles = []string{"namespace.yaml", "secret.yaml", "configmap.yaml", "deployment.yaml"}

// TemplateData is what a template sees.
type TemplateData struct {
	// Name is the run name; Labels the ownership labels every object must
	// carry (OwnerLabel=Name, ManagedByLabel=kscale).
	Name   string
	Labels map[string]string
	// PodLabels are Labels plus app.kubernetes.io/name=hollow-node; the
	// Deployment selects its pods with Selector.
	PodLabels map[string]string
	Selector  map[string]string

	Namespace, DeploymentName, SecretName, ConfigMapName string

	// Hollow is fleet or kubelet.
	Hollow                          string
	Image, ImagePullPolicy, Command string
	// Replicas is the pod count when every node runs; each pod runs
	// NodesPerPod nodes; Nodes is their product.
	Replicas, NodesPerPod, Nodes int
	MaxPods                      int
	// NodeLabels is the --node-labels value of every hollow node: the
	// hollow label and the ownership label.
	NodeLabels string
	// HollowArgs are extra kubemark flags (--hollow-arg), after kscale's.
	HollowArgs []string
	// BootstrapKubeconfig is the test cluster's address and CA with the
	// run's bootstrap token: each hollow node requests its own client
	// certificate with it. ProxyKubeconfig (kubelet layout) carries the
	// proxy's ServiceAccount token. Both are made at provision time;
	// rendered alone, they hold a placeholder token.
	BootstrapKubeconfig, ProxyKubeconfig string
	// Config is the ConfigMap's data, read by the pods as environment.
	Config map[string]string
	// InputsHash changes when Config or Kubeconfig do, so that the pods
	// restart with new settings.
	InputsHash string

	Tolerations  []v1.Toleration
	NodeSelector map[string]string
	HostAliases  []v1.HostAlias

	// Resources are the requests of the fleet container (fleet) or of the
	// kubelet container (kubelet); ProxyResources of the proxy container.
	Resources, ProxyResources Resources
	MetricsPort               int
}

// Resources are a container's requests, as quantities.
type Resources struct{ CPU, Memory string }

// Manifests are the rendered objects of one run.
type Manifests struct {
	// YAML is the rendered stream, the templates' output in order.
	YAML []byte
	// Objects are the decoded objects in the order they are applied: the
	// Namespace first, the Deployment last.
	Objects []*unstructured.Unstructured
	// Data is what the templates saw.
	Data *TemplateData

	layout     layout
	namespace  *unstructured.Unstructured
	deployment *unstructured.Unstructured
	origin     map[*unstructured.Unstructured]string
}

// Deployment returns the hollow-node Deployment (a copy).
func (m *Manifests) Deployment() (*appsv1.Deployment, error) {
	var d appsv1.Deployment
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(m.deployment.Object, &d)
	return &d, err
}

// Credentials are the kubeconfigs the hollow-node pods get.
type Credentials struct {
	BootstrapKubeconfig, ProxyKubeconfig []byte
}

// placeholderToken stands for the bootstrap token in manifests rendered
// before a run makes one.
const placeholderToken = "created-at-provision.0000000000000000"

// Render renders the manifests of a run, with placeholder credentials. It
// checks the options first; the errors name the offending flag.
func Render(po provider.Options, o Options) (*Manifests, error) {
	return render(po, o, nil)
}

// render renders with creds, or placeholders when nil.
func render(po provider.Options, o Options, creds *Credentials) (*Manifests, error) {
	s, err := o.check()
	if err != nil {
		return nil, err
	}
	if err := po.CheckHollow("kubemark"); err != nil {
		return nil, err
	}
	if po.Kubeconfig == "" {
		return nil, errors.New("--kubeconfig: required: the test cluster the hollow nodes join")
	}
	if creds == nil {
		server, err := serverKubeconfig(po.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig=%s: %w", po.Kubeconfig, err)
		}
		creds = &Credentials{}
		if creds.BootstrapKubeconfig, err = tokenKubeconfig(server, "kubelet-bootstrap", placeholderToken); err != nil {
			return nil, err
		}
		if po.Hollow == provider.HollowKubelet {
			if creds.ProxyKubeconfig, err = tokenKubeconfig(server, proxyServiceAccount(o.Name), placeholderToken); err != nil {
				return nil, err
			}
		}
	}
	sources, err := loadTemplates(s.TemplatesDir)
	if err != nil {
		return nil, err
	}
	l := newLayout(po.Hollow, po.Nodes, po.NodesPerFleet)
	data := templateData(s, po, l, creds)
	m := &Manifests{Data: data, layout: l, origin: map[*unstructured.Unstructured]string{}}
	var out bytes.Buffer
	for _, name := range TemplateFiles {
		src := sources[name]
		text, err := execute(src, data)
		if err != nil {
			return nil, err
		}
		if out.Len() > 0 {
			out.WriteString("---\n")
		}
		out.Write(text)
		if len(text) > 0 && text[len(text)-1] != '\n' {
			out.WriteByte('\n')
		}
		objs, err := decode(src.origin, text)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			m.origin[obj] = src.origin
		}
		m.Objects = append(m.Objects, objs...)
	}
	m.YAML = out.Bytes()
	if err := m.check(); err != nil {
		return nil, err
	}
	return m, nil
}

func templateData(s *settings, po provider.Options, l layout, creds *Credentials) *TemplateData {
	labels := map[string]string{OwnerLabel: s.Name, ManagedByLabel: ManagedBy}
	podLabels := map[string]string{"app.kubernetes.io/name": DeploymentName}
	selector := map[string]string{"app.kubernetes.io/name": DeploymentName, OwnerLabel: s.Name}
	for k, v := range labels {
		podLabels[k] = v
	}
	d := &TemplateData{
		Name: s.Name, Labels: labels, PodLabels: podLabels, Selector: selector,
		Namespace: s.Namespace, DeploymentName: DeploymentName, SecretName: SecretName, ConfigMapName: ConfigMapName,
		Hollow: po.Hollow, Image: s.Image, ImagePullPolicy: s.ImagePullPolicy, Command: s.Command,
		Replicas: l.Pods, NodesPerPod: l.NodesPerPod, Nodes: l.Nodes(), MaxPods: po.MaxPods,
		NodeLabels:          HollowLabel + "=" + HollowValue + "," + OwnerLabel + "=" + s.Name,
		HollowArgs:          append([]string(nil), po.HollowArgs...),
		BootstrapKubeconfig: string(creds.BootstrapKubeconfig), ProxyKubeconfig: string(creds.ProxyKubeconfig),
		Tolerations: s.tolerations, NodeSelector: s.nodeSelector, HostAliases: s.hostAliases,
		MetricsPort: MetricsPort,
	}
	d.Config = map[string]string{
		"content-type": "application/vnd.kubernetes.protobuf",
		"max-pods":     strconv.Itoa(po.MaxPods),
		"node-labels":  d.NodeLabels,
	}
	d.InputsHash = inputsHash(d.Config, d.BootstrapKubeconfig+d.ProxyKubeconfig)
	if po.Hollow == provider.HollowFleet {
		d.Resources = fleetRequests(l.NodesPerPod)
	} else {
		r := kubeletRequests()
		d.Resources, d.ProxyResources = r[0], r[1]
	}
	return d
}

// kubeletRequests are the kubelet and the proxy container's requests. The
// kubelet morph is a real kubelet. kubemark's guidance is 100m and 220MB
// per pod for both containers; an idle hollow kubelet uses about half that
// (docs/benchmarks.md).
func kubeletRequests() []Resources {
	return []Resources{{CPU: "50m", Memory: "128Mi"}, {CPU: "10m", Memory: "32Mi"}}
}

// fleetRequests sizes a fleet pod's requests from its node count, at
// about the per-node cost of an idle fleet (docs/benchmarks.md) plus room
// for pod churn and the process itself:
//
//	cpu    = 100m + 0.4m  × nodes  (1000 nodes: 500m)
//	memory = 64Mi + 400Ki × nodes  (1000 nodes: 455Mi)
//
// No limits: a throttled or OOM-killed fleet fails all of its nodes at once,
// which measures the root cluster rather than the test cluster.
func fleetRequests(nodes int) Resources {
	milli := int64(math.Ceil(100 + 0.4*float64(nodes)))
	mem := int64(64<<20) + int64(nodes)*400<<10
	return Resources{
		CPU:    resource.NewMilliQuantity(milli, resource.DecimalSI).String(),
		Memory: resource.NewQuantity(mem, resource.BinarySI).String(),
	}
}

func inputsHash(config map[string]string, kubeconfig string) string {
	h := sha256.New()
	keys := make([]string, 0, len(config))
	for k := range config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%s\n", k, config[k])
	}
	h.Write([]byte(kubeconfig))
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// serverKubeconfig reads a kubeconfig and returns its current context's
// cluster alone, its CA embedded, with no credentials: what a pod elsewhere
// needs to reach the cluster, without the user's identity.
func serverKubeconfig(path string) (*clientcmdapi.Config, error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, err
	}
	if cfg.CurrentContext == "" && len(cfg.Contexts) == 1 {
		for name := range cfg.Contexts {
			cfg.CurrentContext = name
		}
	}
	if err := clientcmdapi.MinifyConfig(cfg); err != nil {
		return nil, err
	}
	for _, a := range cfg.AuthInfos {
		// Flattening reads files of the user too; they are dropped below.
		a.ClientCertificate, a.ClientKey, a.TokenFile = "", "", ""
	}
	if err := clientcmdapi.FlattenConfig(cfg); err != nil {
		return nil, err
	}
	cfg.AuthInfos = map[string]*clientcmdapi.AuthInfo{}
	return cfg, nil
}

type templateSource struct {
	origin, text string
}

// loadTemplates returns the embedded templates, each replaced by the file of
// the same name in dir. A .yaml file in dir that is not a template name is
// an error, not silently ignored.
func loadTemplates(dir string) (map[string]templateSource, error) {
	out := map[string]templateSource{}
	for _, name := range TemplateFiles {
		b, err := embedded.ReadFile("templates/" + name)
		if err != nil {
			return nil, err
		}
		out[name] = templateSource{origin: "templates/" + name + " (embedded)", text: string(b)}
	}
	if dir == "" {
		return out, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", FlagTemplates, dir, err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		if _, known := out[e.Name()]; !known {
			return nil, fmt.Errorf("%s=%s: %s is not a template name (allowed: %s)", FlagTemplates, dir, e.Name(), strings.Join(TemplateFiles, ", "))
		}
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", FlagTemplates, err)
		}
		out[e.Name()] = templateSource{origin: path, text: string(b)}
	}
	return out, nil
}

// EmbeddedTemplates is the folder of the default templates, to copy from
// when writing an override.
func EmbeddedTemplates() fs.FS {
	sub, _ := fs.Sub(embedded, "templates")
	return sub
}

var funcs = template.FuncMap{
	// quote writes a string as a YAML (JSON) double-quoted scalar.
	"quote": func(v any) (string, error) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(fmt.Sprint(v)); err != nil {
			return "", err
		}
		return strings.TrimSuffix(b.String(), "\n"), nil
	},
	"b64": func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	// toYAML writes a value as block YAML, every line indented by n spaces.
	"toYAML": func(n int, v any) (string, error) {
		b, err := yaml.Marshal(v)
		if err != nil {
			return "", err
		}
		pad := strings.Repeat(" ", n)
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		for i := range lines {
			lines[i] = pad + lines[i]
		}
		return strings.Join(lines, "\n"), nil
	},
}

func execute(src templateSource, data *TemplateData) ([]byte, error) {
	t, err := template.New(src.origin).Funcs(funcs).Option("missingkey=error").Parse(src.text)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

var separator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// decode splits a rendered file into objects; documents without content
// (comments only) are left out.
func decode(origin string, text []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for i, doc := range separator.Split(string(text), -1) {
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%s (document %d): %w", origin, i+1, err)
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || string(t) == "null" {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(j); err != nil {
			return nil, fmt.Errorf("%s (document %d): %w", origin, i+1, err)
		}
		if obj.GetName() == "" {
			return nil, fmt.Errorf("%s (document %d): %s has no metadata.name", origin, i+1, obj.GetKind())
		}
		out = append(out, obj)
	}
	return out, nil
}

// check holds the rendered objects to the rules Teardown relies on: each
// carries the ownership labels and lives in the namespace (or is cluster
// scoped); there is one Namespace, the run's, and one Deployment.
func (m *Manifests) check() error {
	d := m.Data
	var ordered, rest []*unstructured.Unstructured
	for _, obj := range m.Objects {
		where := fmt.Sprintf("%s: %s %s", m.origin[obj], obj.GetKind(), obj.GetName())
		labels := obj.GetLabels()
		for _, k := range []string{OwnerLabel, ManagedByLabel} {
			if v := d.Labels[k]; labels[k] != v {
				return fmt.Errorf("%s: lacks the ownership label %s=%s (every object the provider creates carries .Labels)", where, k, v)
			}
		}
		gvk := obj.GroupVersionKind()
		switch {
		case gvk.Group == "" && gvk.Kind == "Namespace":
			if m.namespace != nil {
				return fmt.Errorf("%s: a second Namespace; the provider creates one, %s", where, d.Namespace)
			}
			if obj.GetName() != d.Namespace {
				return fmt.Errorf("%s: the Namespace must be .Namespace (%s)", where, d.Namespace)
			}
			m.namespace = obj
			ordered = append(ordered, obj)
			continue
		case gvk.Group == "apps" && gvk.Kind == "Deployment":
			if m.deployment != nil {
				return fmt.Errorf("%s: a second Deployment; the provider scales one", where)
			}
			if gvk.Version != "v1" {
				return fmt.Errorf("%s: must be apps/v1", where)
			}
			var dep appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, &dep, true); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			for _, k := range []string{OwnerLabel, ManagedByLabel} {
				if v := d.Labels[k]; dep.Spec.Template.Labels[k] != v {
					return fmt.Errorf("%s: its pod template lacks the ownership label %s=%s", where, k, v)
				}
			}
			if dep.Spec.Selector == nil || len(dep.Spec.Selector.MatchLabels) == 0 {
				return fmt.Errorf("%s: needs spec.selector.matchLabels", where)
			}
			m.deployment = obj
		case gvk.Group == "" && (gvk.Kind == "Secret" || gvk.Kind == "ConfigMap"):
			if obj.GetNamespace() == "" {
				obj.SetNamespace(d.Namespace)
			}
		}
		if ns := obj.GetNamespace(); ns != "" && ns != d.Namespace {
			return fmt.Errorf("%s: namespace %s; objects go in .Namespace (%s)", where, ns, d.Namespace)
		}
		if obj != m.deployment {
			rest = append(rest, obj)
		}
	}
	if m.namespace == nil {
		return fmt.Errorf("the templates render no Namespace %s", d.Namespace)
	}
	if m.deployment == nil {
		return fmt.Errorf("the templates render no apps/v1 Deployment")
	}
	if m.deployment.GetNamespace() == "" {
		m.deployment.SetNamespace(d.Namespace)
	}
	m.Objects = append(append(ordered, rest...), m.deployment)
	return nil
}
