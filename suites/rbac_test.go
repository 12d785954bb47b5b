package suites_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// rbacDoc is the page whose ClusterRole a run on an existing cluster
// needs, and the heading it sits under.
const (
	rbacDoc     = "../docs/providers.md"
	rbacHeading = "### The RBAC a run needs"
)

// documentedClusterRole reads the ClusterRole of the docs: the first yaml
// block under rbacHeading.
func documentedClusterRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	b, err := os.ReadFile(rbacDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), rbacHeading+"\n")
	if !ok {
		t.Fatalf("%s has no %q", rbacDoc, rbacHeading)
	}
	_, block, ok := strings.Cut(section, "```yaml\n")
	if !ok {
		t.Fatalf("%s: no yaml block under %q", rbacDoc, rbacHeading)
	}
	block, _, _ = strings.Cut(block, "```")
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict([]byte(block), role); err != nil {
		t.Fatalf("%s: the ClusterRole: %v", rbacDoc, err)
	}
	if role.Kind != "ClusterRole" || role.Name == "" || len(role.Rules) == 0 {
		t.Fatalf("%s: want a named ClusterRole with rules, got %s %q with %d rules", rbacDoc, role.Kind, role.Name, len(role.Rules))
	}
	return role
}

// restrictedKubeconfig makes a ServiceAccount bound to the documented
// ClusterRole alone and writes a kubeconfig of its token.
func restrictedKubeconfig(ctx context.Context, t *testing.T, admin kubernetes.Interface, adminConfig *rest.Config) string {
	t.Helper()
	role := documentedClusterRole(t)
	const ns, sa = "kscale-rbac-test", "runner"
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hour := int64(3600)
	tok, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: adminConfig.Host, CertificateAuthorityData: adminConfig.CAData, CertificateAuthority: adminConfig.CAFile}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: sa}
	cfg.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "restricted.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	// The identity holds the role and no more: it cannot read RBAC.
	restricted, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.NewForConfig(restricted)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{}); err == nil {
		t.Fatalf("the restricted identity can list ClusterRoles: it is bound to more than %s", role.Name)
	}
	return path
}
