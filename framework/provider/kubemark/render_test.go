package kubemark

import (
	"encoding/base64"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kscale/kscale/framework/golden"
	"github.com/kscale/kscale/framework/provider"
)

func testOptions() (provider.Options, Options) {
	po := provider.Options{
		Nodes: 5000, Kubeconfig: filepath.Join("testdata", "kubeconfig"), Hollow: provider.HollowFleet,
		NodesPerFleet: 1000, MaxPods: 110, HollowArgs: []string{"--pod-start-delay=2s"},
	}
	o := DefaultOptions()
	o.Image = "registry.example.com/kscale/kubemark:v1.37.2"
	o.Name = "density-5000"
	o.Tolerations = []string{"role=real:NoSchedule", "dedicated:NoExecute"}
	o.NodeSelector = []string{"role=real"}
	o.HostAliases = []string{"192.168.101.54=apiserver.cluster.local", "192.168.101.54=apiserver"}
	return po, o
}

func TestRenderFleetGolden(t *testing.T) {
	po, o := testOptions()
	m, err := Render(po, o)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "fleet.golden.yaml", m.YAML)
	if m.Data.Replicas != 5 || m.Data.NodesPerPod != 1000 {
		t.Errorf("replicas %d × %d nodes, want 5 × 1000", m.Data.Replicas, m.Data.NodesPerPod)
	}
	var kinds []string
	for _, obj := range m.Objects {
		kinds = append(kinds, obj.GetKind())
		if obj.GetLabels()[OwnerLabel] != "density-5000" || obj.GetLabels()[ManagedByLabel] != "kscale" {
			t.Errorf("%s %s labels %v", obj.GetKind(), obj.GetName(), obj.GetLabels())
		}
	}
	if want := []string{"Namespace", "Secret", "ConfigMap", "Deployment"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("objects %v, want %v in this order", kinds, want)
	}
	d, err := m.Deployment()
	if err != nil {
		t.Fatal(err)
	}
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]
	if c.Args[1] != "--nodes=1000" || c.Args[2] != "--name-prefix=$(POD_NAME)-" || c.Args[len(c.Args)-1] != "--pod-start-delay=2s" {
		t.Errorf("fleet args %q", c.Args)
	}
	if got := c.Resources.Requests.Cpu().String(); got != "500m" {
		t.Errorf("cpu request of a 1000-node fleet %s, want 500m", got)
	}
	if got := c.Resources.Requests.Memory().Value(); got != 64<<20+1000*400<<10 {
		t.Errorf("memory request of a 1000-node fleet %d", got)
	}
	wantTol := []v1.Toleration{
		{Key: "role", Operator: v1.TolerationOpEqual, Value: "real", Effect: v1.TaintEffectNoSchedule},
		{Key: "dedicated", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
	}
	if !reflect.DeepEqual(spec.Tolerations, wantTol) {
		t.Errorf("tolerations %+v, want %+v", spec.Tolerations, wantTol)
	}
	if !reflect.DeepEqual(spec.NodeSelector, map[string]string{"role": "real"}) {
		t.Errorf("nodeSelector %v", spec.NodeSelector)
	}
	if want := []v1.HostAlias{{IP: "192.168.101.54", Hostnames: []string{"apiserver.cluster.local", "apiserver"}}}; !reflect.DeepEqual(spec.HostAliases, want) {
		t.Errorf("hostAliases %+v", spec.HostAliases)
	}
}

func TestRenderKubeletGolden(t *testing.T) {
	po, o := testOptions()
	po.Hollow, po.Nodes, po.HollowArgs = provider.HollowKubelet, 2500, nil
	o.Tolerations, o.NodeSelector, o.HostAliases = nil, nil, nil
	m, err := Render(po, o)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "kubelet.golden.yaml", m.YAML)
	d, err := m.Deployment()
	if err != nil {
		t.Fatal(err)
	}
	cs := d.Spec.Template.Spec.Containers
	if len(cs) != 2 || cs[0].Args[0] != "--morph=kubelet" || cs[0].Args[1] != "--name=$(POD_NAME)" || cs[1].Args[0] != "--morph=proxy" {
		t.Errorf("kubelet layout containers %+v", cs)
	}
	if *d.Spec.Replicas != 2500 {
		t.Errorf("replicas %d, want a pod per node", *d.Spec.Replicas)
	}
}

// The Secret holds the test cluster's address and CA with a token of the
// run's own, in both layouts: none of the user's credentials, whatever they
// are (a client key, a plugin), nor another context's.
func TestSecretHoldsNoUserCredential(t *testing.T) {
	for _, tc := range []struct {
		name, kubeconfig, hollow string
		keys                     []string
	}{
		{"fleet", "testdata/kubeconfig", provider.HollowFleet, []string{"bootstrap-kubeconfig"}},
		{"kubelet", "testdata/kubeconfig", provider.HollowKubelet, []string{"bootstrap-kubeconfig", "proxy-kubeconfig"}},
		{"plugin", "testdata/kubeconfig-exec", provider.HollowFleet, []string{"bootstrap-kubeconfig"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			po, o := testOptions()
			po.Kubeconfig, po.Hollow = tc.kubeconfig, tc.hollow
			m, err := Render(po, o)
			if err != nil {
				t.Fatal(err)
			}
			secret := m.Objects[1]
			data, _, _ := unstructured.NestedStringMap(secret.Object, "data")
			if len(data) != len(tc.keys) {
				t.Fatalf("secret keys %v, want %v", data, tc.keys)
			}
			key, _ := os.ReadFile("testdata/client.key")
			ca, _ := os.ReadFile("testdata/ca.crt")
			for _, k := range tc.keys {
				raw, err := base64.StdEncoding.DecodeString(data[k])
				if err != nil {
					t.Fatal(err)
				}
				cfg, err := clientcmd.Load(raw)
				if err != nil {
					t.Fatalf("%s: %v", k, err)
				}
				if len(cfg.Contexts) != 1 || len(cfg.Clusters) != 1 || len(cfg.AuthInfos) != 1 {
					t.Fatalf("%s: not one context, cluster and user: %+v", k, cfg)
				}
				for _, c := range cfg.Clusters {
					if tc.name != "plugin" && (string(c.CertificateAuthorityData) != string(ca) || c.CertificateAuthority != "") {
						t.Errorf("%s: cluster CA not embedded: %+v", k, c)
					}
				}
				for name, a := range cfg.AuthInfos {
					if a.Token != placeholderToken || a.ClientKeyData != nil || a.ClientCertificateData != nil || a.Exec != nil {
						t.Errorf("%s: user %s carries more than the run's token: %+v", k, name, a)
					}
				}
				for _, leak := range []string{string(key), "secret-of-another-cluster", "admin"} {
					if leak != "" && strings.Contains(string(raw), leak) {
						t.Errorf("%s holds %.20q of the user's kubeconfig", k, leak)
					}
				}
			}
		})
	}
}

func unstructuredString(obj map[string]any, path ...string) (string, bool, error) {
	cur := any(obj)
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[p]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

func TestTemplateOverrideFolder(t *testing.T) {
	po, o := testOptions()
	dir := t.TempDir()
	o.TemplatesDir = dir
	// Only configmap.yaml is replaced; the others stay embedded.
	override := `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{quote .ConfigMapName}}
  namespace: {{quote .Namespace}}
  labels:
{{toYAML 4 .Labels}}
data:
{{toYAML 2 .Config}}
  site: {{quote "lab-7"}}
`
	if err := os.WriteFile(filepath.Join(dir, "configmap.yaml"), []byte(override), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("not a template"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Render(po, o)
	if err != nil {
		t.Fatal(err)
	}
	cm := m.Objects[2]
	if site, _, _ := unstructuredString(cm.Object, "data", "site"); site != "lab-7" {
		t.Errorf("override not used: %v", cm.Object)
	}
	if max, _, _ := unstructuredString(cm.Object, "data", "max-pods"); max != "110" {
		t.Errorf("override lost the settings: %v", cm.Object)
	}
	embedded, err := Render(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Objects[3], embedded.Objects[3]) {
		t.Error("deployment.yaml was not left embedded")
	}

	t.Run("unknown file", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(dir, "deploymnet.yaml"), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(filepath.Join(dir, "deploymnet.yaml"))
		_, err := Render(po, o)
		wantErr(t, err, FlagTemplates, "deploymnet.yaml is not a template name")
	})
	t.Run("object without ownership labels", func(t *testing.T) {
		bare := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: {{.Namespace}}\n"
		if err := os.WriteFile(filepath.Join(dir, "configmap.yaml"), []byte(bare), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Render(po, o)
		wantErr(t, err, filepath.Join(dir, "configmap.yaml"), "lacks the ownership label kscale.io/kubemark=density-5000")
	})
	t.Run("object in another namespace", func(t *testing.T) {
		other := strings.Replace(override, "{{quote .Namespace}}", "kube-system", 1)
		if err := os.WriteFile(filepath.Join(dir, "configmap.yaml"), []byte(other), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Render(po, o)
		wantErr(t, err, "namespace kube-system; objects go in .Namespace")
	})
	t.Run("template error", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(dir, "configmap.yaml"), []byte("{{.NoSuchField}}"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Render(po, o)
		wantErr(t, err, "configmap.yaml", "NoSuchField")
	})
}

func TestEmbeddedTemplatesListed(t *testing.T) {
	for _, name := range TemplateFiles {
		if _, err := EmbeddedTemplates().Open(name); err != nil {
			t.Error(err)
		}
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one with %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q lacks %q", err, p)
		}
	}
}

func TestBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*provider.Options, *Options)
		parts []string
	}{
		{"missing image", func(_ *provider.Options, o *Options) { o.Image = "" }, []string{"--kubemark-image", "required"}},
		{"image with a space", func(_ *provider.Options, o *Options) { o.Image = "a b" }, []string{"--kubemark-image"}},
		{"bad toleration effect", func(_ *provider.Options, o *Options) { o.Tolerations = []string{"role=real:Sometimes"} }, []string{"--kubemark-toleration", "role=real:Sometimes", "NoSchedule, PreferNoSchedule, NoExecute"}},
		{"toleration without key", func(_ *provider.Options, o *Options) { o.Tolerations = []string{"=x:NoSchedule"} }, []string{"--kubemark-toleration", "no key"}},
		{"toleration bad key", func(_ *provider.Options, o *Options) { o.Tolerations = []string{"a b=c"} }, []string{"--kubemark-toleration", `key "a b"`}},
		{"node selector without =", func(_ *provider.Options, o *Options) { o.NodeSelector = []string{"role"} }, []string{"--kubemark-node-selector", "key=value"}},
		{"host alias bad IP", func(_ *provider.Options, o *Options) { o.HostAliases = []string{"300.1.1.1=api"} }, []string{"--apiserver-host-alias", "not an IP"}},
		{"host alias no name", func(_ *provider.Options, o *Options) { o.HostAliases = []string{"10.0.0.1"} }, []string{"--apiserver-host-alias", "IP=NAME"}},
		{"pull policy", func(_ *provider.Options, o *Options) { o.ImagePullPolicy = "Sometimes" }, []string{"--kubemark-image-pull-policy", "IfNotPresent"}},
		{"namespace", func(_ *provider.Options, o *Options) { o.Namespace = "Not_A_Name" }, []string{"--kubemark-namespace"}},
		{"run name", func(_ *provider.Options, o *Options) { o.Name = "has space" }, []string{"--kubemark-name"}},
		{"templates folder missing", func(_ *provider.Options, o *Options) { o.TemplatesDir = "testdata/none" }, []string{"--kubemark-templates"}},
		{"no nodes", func(po *provider.Options, _ *Options) { po.Nodes = 0 }, []string{"--nodes=0"}},
		{"bad hollow", func(po *provider.Options, _ *Options) { po.Hollow = "kwok" }, []string{"--hollow=kwok", "fleet, kubelet"}},
		{"nodes per fleet", func(po *provider.Options, _ *Options) { po.NodesPerFleet = -1 }, []string{"--nodes-per-fleet=-1"}},
		{"no kubeconfig", func(po *provider.Options, _ *Options) { po.Kubeconfig = "" }, []string{"--kubeconfig", "required"}},
		{"kubeconfig missing", func(po *provider.Options, _ *Options) { po.Kubeconfig = "testdata/none" }, []string{"--kubeconfig=testdata/none"}},
		{"step timeout", func(_ *provider.Options, o *Options) { o.StepTimeout = 0 }, []string{"--kubemark-step-timeout"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			po, o := testOptions()
			tc.edit(&po, &o)
			_, err := Render(po, o)
			wantErr(t, err, tc.parts...)
			po.RootKubeconfig = "testdata/kubeconfig"
			_, err = New(po, o)
			wantErr(t, err, tc.parts...)
		})
	}
	t.Run("no root kubeconfig", func(t *testing.T) {
		po, o := testOptions()
		_, err := New(po, o)
		wantErr(t, err, "--root-kubeconfig", "required")
	})
	t.Run("registered", func(t *testing.T) {
		po, _ := testOptions()
		po.RootKubeconfig = po.Kubeconfig
		saved := CommandLine
		defer func() { CommandLine = saved }()
		CommandLine = DefaultOptions()
		_, err := provider.New("kubemark", po)
		wantErr(t, err, "--kubemark-image")
		CommandLine.Image = "kubemark:test"
		if _, err := provider.New("kubemark", po); err != nil {
			t.Fatal(err)
		}
	})
}

func TestParseToleration(t *testing.T) {
	for in, want := range map[string]v1.Toleration{
		"role=real:NoSchedule": {Key: "role", Operator: v1.TolerationOpEqual, Value: "real", Effect: v1.TaintEffectNoSchedule},
		"dedicated:NoExecute":  {Key: "dedicated", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
		"role=real":            {Key: "role", Operator: v1.TolerationOpEqual, Value: "real"},
		"example.com/spot":     {Key: "example.com/spot", Operator: v1.TolerationOpExists},
		"k=:PreferNoSchedule":  {Key: "k", Operator: v1.TolerationOpEqual, Effect: v1.TaintEffectPreferNoSchedule},
	} {
		got, err := ParseToleration(in)
		if err != nil || got != want {
			t.Errorf("ParseToleration(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
}

func TestFlags(t *testing.T) {
	o := DefaultOptions()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	o.AddFlags(fs)
	err := fs.Parse([]string{
		"--kubemark-image=img:1", "--kubemark-toleration=a=b:NoSchedule,c:NoExecute", "--kubemark-toleration=d",
		"--kubemark-node-selector=role=real", "--apiserver-host-alias=10.0.0.1=api", "--kubemark-namespace=km",
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.Image != "img:1" || o.Namespace != "km" || !reflect.DeepEqual(o.Tolerations, []string{"a=b:NoSchedule", "c:NoExecute", "d"}) ||
		!reflect.DeepEqual(o.NodeSelector, []string{"role=real"}) || !reflect.DeepEqual(o.HostAliases, []string{"10.0.0.1=api"}) {
		t.Errorf("parsed %+v", o)
	}
}
