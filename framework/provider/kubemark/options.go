package kubemark

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The provider's own flags. Errors about an option name its flag.
const (
	FlagImage           = "--kubemark-image"
	FlagImagePullPolicy = "--kubemark-image-pull-policy"
	FlagCommand         = "--kubemark-command"
	FlagNamespace       = "--kubemark-namespace"
	FlagName            = "--kubemark-name"
	FlagTemplates       = "--kubemark-templates"
	FlagToleration      = "--kubemark-toleration"
	FlagNodeSelector    = "--kubemark-node-selector"
	FlagHostAlias       = "--apiserver-host-alias"
	FlagStepTimeout     = "--kubemark-step-timeout"
	FlagDeleteTimeout   = "--kubemark-delete-timeout"
)

// Defaults of the options.
const (
	DefaultNamespace = "kscale-kubemark"
	DefaultName      = "kscale"
	DefaultCommand   = "/kubemark"
)

// Options are the kubemark provider's own settings, beside the run's
// provider.Options (nodes, kubeconfigs, --hollow, --nodes-per-fleet,
// --max-pods, --hollow-arg).
type Options struct {
	// Image is the kubemark image the hollow-node pods run (required: no
	// default registry is ever pulled from).
	Image string
	// ImagePullPolicy is Always, IfNotPresent (default) or Never.
	ImagePullPolicy string
	// Command is the kubemark binary's path inside the image.
	Command string
	// Namespace is the root cluster's namespace for the objects; it must
	// not exist, or carry this run's ownership label.
	Namespace string
	// Name is the run name: the value of the kscale.io/kubemark label on
	// every object and on the hollow Nodes.
	Name string
	// TemplatesDir holds templates replacing the embedded ones of the same
	// file name (namespace.yaml, secret.yaml, configmap.yaml,
	// deployment.yaml); empty for the embedded ones.
	TemplatesDir string
	// Tolerations of the hollow-node pods: key=value:Effect, key:Effect
	// (operator Exists), key=value or key (any effect).
	Tolerations []string
	// NodeSelector of the hollow-node pods: key=value.
	NodeSelector []string
	// HostAliases are IP=NAME entries for the pods' /etc/hosts, for a test
	// cluster whose apiserver name the root cluster's DNS does not know.
	HostAliases []string
	// StepTimeout bounds the wait for the nodes of one scale step.
	StepTimeout time.Duration
	// DeleteTimeout bounds Teardown's wait for the namespace to go.
	DeleteTimeout time.Duration
}

// DefaultOptions are the options without flags.
func DefaultOptions() Options {
	return Options{
		ImagePullPolicy: string(v1.PullIfNotPresent),
		Command:         DefaultCommand,
		Namespace:       DefaultNamespace,
		Name:            DefaultName,
		StepTimeout:     15 * time.Minute,
		DeleteTimeout:   5 * time.Minute,
	}
}

// CommandLine are the options the registered "kubemark" provider uses. A
// suite binds them to its flags with CommandLine.AddFlags(flag.CommandLine)
// before flag parsing.
var CommandLine = DefaultOptions()

// AddFlags binds the options to flags of fs (a pflag set takes them with
// AddGoFlagSet).
func (o *Options) AddFlags(fs *flag.FlagSet) {
	name := func(f string) string { return strings.TrimPrefix(f, "--") }
	fs.StringVar(&o.Image, name(FlagImage), o.Image, "kubemark provider: image of the hollow-node pods (required), e.g. registry.example.com/kubemark:v1.37.2")
	fs.StringVar(&o.ImagePullPolicy, name(FlagImagePullPolicy), o.ImagePullPolicy, "kubemark provider: image pull policy: Always, IfNotPresent, Never")
	fs.StringVar(&o.Command, name(FlagCommand), o.Command, "kubemark provider: path of the kubemark binary inside the image")
	fs.StringVar(&o.Namespace, name(FlagNamespace), o.Namespace, "kubemark provider: namespace of the hollow-node pods in the root cluster")
	fs.StringVar(&o.Name, name(FlagName), o.Name, "kubemark provider: run name, the value of the kscale.io/kubemark label on what the provider creates")
	fs.StringVar(&o.TemplatesDir, name(FlagTemplates), o.TemplatesDir, "kubemark provider: folder of templates replacing the embedded ones of the same name (namespace.yaml, secret.yaml, configmap.yaml, deployment.yaml)")
	fs.Var((*listValue)(&o.Tolerations), name(FlagToleration), "kubemark provider: toleration of the hollow-node pods, key=value:Effect, key:Effect, key=value or key (repeatable, or a comma list)")
	fs.Var((*listValue)(&o.NodeSelector), name(FlagNodeSelector), "kubemark provider: node selector of the hollow-node pods, key=value (repeatable, or a comma list)")
	fs.Var((*listValue)(&o.HostAliases), name(FlagHostAlias), "kubemark provider: /etc/hosts entry of the hollow-node pods for the test cluster's apiserver, IP=NAME (repeatable)")
	fs.DurationVar(&o.StepTimeout, name(FlagStepTimeout), o.StepTimeout, "kubemark provider: longest wait for the nodes of one scale step to be Ready")
	fs.DurationVar(&o.DeleteTimeout, name(FlagDeleteTimeout), o.DeleteTimeout, "kubemark provider: longest wait at teardown for the namespace to be deleted")
}

// listValue is a repeatable flag whose values may also be comma lists.
type listValue []string

func (l *listValue) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

func (l *listValue) Set(v string) error {
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			*l = append(*l, item)
		}
	}
	return nil
}

// settings are the options checked and parsed.
type settings struct {
	Options
	tolerations  []v1.Toleration
	nodeSelector map[string]string
	hostAliases  []v1.HostAlias
}

// check validates the options; its errors name the flag and what it allows.
func (o Options) check() (*settings, error) {
	s := &settings{Options: o}
	if strings.TrimSpace(o.Image) == "" {
		return nil, fmt.Errorf("%s: required: the image of the hollow-node pods, with kubemark at %s (%s)", FlagImage, FlagCommand, o.Command)
	}
	if strings.ContainsAny(o.Image, " \t\n") {
		return nil, fmt.Errorf("%s=%q: an image reference has no spaces", FlagImage, o.Image)
	}
	switch v1.PullPolicy(o.ImagePullPolicy) {
	case v1.PullAlways, v1.PullIfNotPresent, v1.PullNever:
	default:
		return nil, fmt.Errorf("%s=%q: allowed values are Always, IfNotPresent, Never", FlagImagePullPolicy, o.ImagePullPolicy)
	}
	if strings.TrimSpace(o.Command) == "" {
		return nil, fmt.Errorf("%s: must name kubemark's path inside the image", FlagCommand)
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return nil, fmt.Errorf("%s=%q: not a namespace name: %s", FlagNamespace, o.Namespace, strings.Join(errs, "; "))
	}
	if o.Name == "" {
		return nil, fmt.Errorf("%s: must not be empty", FlagName)
	}
	if errs := validation.IsValidLabelValue(o.Name); len(errs) > 0 {
		return nil, fmt.Errorf("%s=%q: not a label value: %s", FlagName, o.Name, strings.Join(errs, "; "))
	}
	if o.TemplatesDir != "" {
		if fi, err := os.Stat(o.TemplatesDir); err != nil {
			return nil, fmt.Errorf("%s=%s: %w", FlagTemplates, o.TemplatesDir, err)
		} else if !fi.IsDir() {
			return nil, fmt.Errorf("%s=%s: not a folder", FlagTemplates, o.TemplatesDir)
		}
	}
	for _, t := range o.Tolerations {
		tol, err := ParseToleration(t)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %w", FlagToleration, t, err)
		}
		s.tolerations = append(s.tolerations, tol)
	}
	if len(o.NodeSelector) > 0 {
		s.nodeSelector = map[string]string{}
	}
	for _, kv := range o.NodeSelector {
		k, v, err := parseLabel(kv)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %w", FlagNodeSelector, kv, err)
		}
		s.nodeSelector[k] = v
	}
	for _, a := range o.HostAliases {
		ip, host, err := parseHostAlias(a)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %w", FlagHostAlias, a, err)
		}
		s.addHostAlias(ip, host)
	}
	if o.StepTimeout <= 0 {
		return nil, fmt.Errorf("%s=%s: must be above 0", FlagStepTimeout, o.StepTimeout)
	}
	if o.DeleteTimeout <= 0 {
		return nil, fmt.Errorf("%s=%s: must be above 0", FlagDeleteTimeout, o.DeleteTimeout)
	}
	return s, nil
}

func (s *settings) addHostAlias(ip, host string) {
	for i := range s.hostAliases {
		if s.hostAliases[i].IP == ip {
			s.hostAliases[i].Hostnames = append(s.hostAliases[i].Hostnames, host)
			return
		}
	}
	s.hostAliases = append(s.hostAliases, v1.HostAlias{IP: ip, Hostnames: []string{host}})
}

var effects = []v1.TaintEffect{v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute}

// ParseToleration reads key=value:Effect (operator Equal), key:Effect
// (operator Exists), key=value (Equal, any effect) or key (Exists, any
// effect) — the syntax of kubectl taint, read as the toleration of it.
func ParseToleration(s string) (v1.Toleration, error) {
	var t v1.Toleration
	rest, effect, hasEffect := strings.Cut(s, ":")
	if hasEffect {
		ok := false
		for _, e := range effects {
			ok = ok || effect == string(e)
		}
		if !ok {
			return t, fmt.Errorf("effect %q: allowed values are NoSchedule, PreferNoSchedule, NoExecute (syntax key=value:Effect)", effect)
		}
		t.Effect = v1.TaintEffect(effect)
	}
	key, value, hasValue := strings.Cut(rest, "=")
	if key == "" {
		return t, fmt.Errorf("no key (syntax key=value:Effect, key:Effect, key=value or key)")
	}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return t, fmt.Errorf("key %q: %s", key, strings.Join(errs, "; "))
	}
	t.Key = key
	if hasValue {
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return t, fmt.Errorf("value %q: %s", value, strings.Join(errs, "; "))
		}
		t.Operator, t.Value = v1.TolerationOpEqual, value
	} else {
		t.Operator = v1.TolerationOpExists
	}
	return t, nil
}

func parseLabel(s string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return "", "", fmt.Errorf("syntax is key=value")
	}
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		return "", "", fmt.Errorf("key %q: %s", k, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
		return "", "", fmt.Errorf("value %q: %s", v, strings.Join(errs, "; "))
	}
	return k, v, nil
}

func parseHostAlias(s string) (string, string, error) {
	ip, host, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf("syntax is IP=NAME, e.g. 192.168.101.54=apiserver.cluster.local")
	}
	if net.ParseIP(ip) == nil {
		return "", "", fmt.Errorf("%q is not an IP address (syntax IP=NAME)", ip)
	}
	if errs := validation.IsDNS1123Subdomain(host); len(errs) > 0 {
		return "", "", fmt.Errorf("host name %q: %s", host, strings.Join(errs, "; "))
	}
	return ip, host, nil
}
