package kubemark

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kscale/kscale/framework/provider"
)

// How hollow nodes join the test cluster: as kubelets join a kubeadm
// cluster. The provider creates a bootstrap token (a Secret of type
// bootstrap.kubernetes.io/token in kube-system, with an expiry) whose extra
// group may create node CSRs and have them approved, as kubeadm binds
// system:bootstrappers:kubeadm:default-node-token. Every hollow node,
// fleet nodes included, requests its own system:node:<name> client
// certificate with it, so that the Node authorizer, NodeRestriction and
// API Priority and Fairness (flow schema system-nodes) treat it as a
// kubelet. The kubelet layout's proxy morph gets a ServiceAccount bound to
// system:node-proxier, as kube-proxy has in a kubeadm cluster. No
// credential of the user's leaves the user's machine; Teardown deletes the
// token, the bindings, the ServiceAccount and the CSRs the token made.
const (
	tokenNamespace = "kube-system"
	// TokenTTL is how long the bootstrap token is valid: a fleet pod that
	// restarts late in a long run must still be able to join.
	TokenTTL = 24 * time.Hour
	// ProxyTokenTTL is the lifetime of the proxy's ServiceAccount token.
	ProxyTokenTTL = 48 * time.Hour
)

// identity is the credentials of one run's hollow nodes.
type identity struct {
	tokenID, tokenSecret string
	expires              time.Time
	// group is the token's extra group, the subject of its bindings.
	group string
}

func newIdentity(run string, now time.Time) (*identity, error) {
	id, err := randomString(6)
	if err != nil {
		return nil, err
	}
	secret, err := randomString(16)
	if err != nil {
		return nil, err
	}
	return &identity{tokenID: id, tokenSecret: secret, expires: now.Add(TokenTTL), group: "system:bootstrappers:kscale:" + run}, nil
}

// token is the bootstrap token, <id>.<secret>.
func (id *identity) token() string { return id.tokenID + "." + id.tokenSecret }

// username is the user the apiserver sees for the token.
func (id *identity) username() string { return "system:bootstrap:" + id.tokenID }

const tokenChars = "0123456789abcdefghijklmnopqrstuvwxyz"

func randomString(n int) (string, error) {
	b := make([]byte, n)
	for i := range b {
		k, err := rand.Int(rand.Reader, big.NewInt(int64(len(tokenChars))))
		if err != nil {
			return "", err
		}
		b[i] = tokenChars[k.Int64()]
	}
	return string(b), nil
}

func (id *identity) secretName() string { return "bootstrap-token-" + id.tokenID }

// bindingNames are the ClusterRoleBindings of a run, by the ClusterRole
// each binds.
func bindingNames(run string) map[string]string {
	return map[string]string{
		"system:node-bootstrapper": "kscale:" + run + ":node-bootstrapper",
		"system:certificates.k8s.io:certificatesigningrequests:nodeclient": "kscale:" + run + ":node-autoapprove-bootstrap",
		"system:node-proxier": "kscale:" + run + ":node-proxier",
	}
}

func proxyServiceAccount(run string) string { return "kscale-" + run + "-hollow-proxy" }

// createIdentity creates the token, its bindings and, for the kubelet
// layout, the proxy's ServiceAccount in the test cluster, and returns the
// kubeconfigs the hollow-node pods get. An object of a binding's name that
// this run does not own is an error, never overwritten.
func (p *Provider) createIdentity(ctx context.Context, id *identity) (*Credentials, error) {
	labels := p.m.Data.Labels
	run := p.m.Data.Name
	secret := &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: id.secretName(), Namespace: tokenNamespace, Labels: labels},
		Type:       v1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			"description":                    "kscale kubemark provider, run " + run + ": hollow nodes join with it",
			"token-id":                       id.tokenID,
			"token-secret":                   id.tokenSecret,
			"expiration":                     id.expires.UTC().Format(time.RFC3339),
			"usage-bootstrap-authentication": "true",
			"auth-extra-groups":              id.group,
		},
	}
	if _, err := p.test.CoreV1().Secrets(tokenNamespace).Create(ctx, secret, metav1.CreateOptions{FieldManager: FieldManager}); err != nil {
		return nil, fmt.Errorf("test cluster: creating the bootstrap token secret %s/%s: %w", tokenNamespace, secret.Name, err)
	}
	kubelet := p.po.Hollow == provider.HollowKubelet
	for role, name := range bindingNames(run) {
		subject := rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: id.group}
		if role == "system:node-proxier" {
			if !kubelet {
				continue
			}
			subject = rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: proxyServiceAccount(run), Namespace: tokenNamespace}
		}
		crb := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{subject},
		}
		if err := p.createOrReplaceOwned(ctx, crb); err != nil {
			return nil, err
		}
	}
	server, err := serverKubeconfig(p.po.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig=%s: %w", p.po.Kubeconfig, err)
	}
	creds := &Credentials{}
	if creds.BootstrapKubeconfig, err = tokenKubeconfig(server, "kubelet-bootstrap", id.token()); err != nil {
		return nil, err
	}
	if !kubelet {
		return creds, nil
	}
	sa := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: proxyServiceAccount(run), Namespace: tokenNamespace, Labels: labels}}
	if _, err := p.test.CoreV1().ServiceAccounts(tokenNamespace).Create(ctx, sa, metav1.CreateOptions{FieldManager: FieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("test cluster: creating ServiceAccount %s/%s: %w", tokenNamespace, sa.Name, err)
	}
	seconds := int64(ProxyTokenTTL / time.Second)
	tr, err := p.test.CoreV1().ServiceAccounts(tokenNamespace).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("test cluster: a token for ServiceAccount %s/%s: %w", tokenNamespace, sa.Name, err)
	}
	if creds.ProxyKubeconfig, err = tokenKubeconfig(server, sa.Name, tr.Status.Token); err != nil {
		return nil, err
	}
	return creds, nil
}

// createOrReplaceOwned creates a ClusterRoleBinding, or replaces one of the
// same name that this run owns (an earlier run of the same name that did
// not tear down).
func (p *Provider) createOrReplaceOwned(ctx context.Context, crb *rbacv1.ClusterRoleBinding) error {
	crbs := p.test.RbacV1().ClusterRoleBindings()
	_, err := crbs.Create(ctx, crb, metav1.CreateOptions{FieldManager: FieldManager})
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("test cluster: creating ClusterRoleBinding %s: %w", crb.Name, err)
		}
		return nil
	}
	old, err := crbs.Get(ctx, crb.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("test cluster: ClusterRoleBinding %s: %w", crb.Name, err)
	}
	if !p.owned(old.Labels) {
		return fmt.Errorf("test cluster: ClusterRoleBinding %s exists and kscale's run %q did not create it: kscale will not touch it; choose another %s", crb.Name, p.m.Data.Name, FlagName)
	}
	crb.ResourceVersion = old.ResourceVersion
	if _, err := crbs.Update(ctx, crb, metav1.UpdateOptions{FieldManager: FieldManager}); err != nil {
		return fmt.Errorf("test cluster: updating ClusterRoleBinding %s: %w", crb.Name, err)
	}
	return nil
}

// deleteIdentity deletes what createIdentity made, and the CSRs the token
// made; only objects carrying the run's ownership labels.
func (p *Provider) deleteIdentity(ctx context.Context) error {
	run := p.m.Data.Name
	var errs []error
	if id := p.identity; id != nil {
		secrets := p.test.CoreV1().Secrets(tokenNamespace)
		if s, err := secrets.Get(ctx, id.secretName(), metav1.GetOptions{}); err == nil && p.owned(s.Labels) {
			errs = append(errs, ignoreNotFound(secrets.Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})))
		} else if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
		csrs, err := p.test.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("test cluster: listing CSRs: %w", err))
		} else {
			n := 0
			for i := range csrs.Items {
				if c := &csrs.Items[i]; c.Spec.Username == id.username() {
					errs = append(errs, ignoreNotFound(p.test.CertificatesV1().CertificateSigningRequests().Delete(ctx, c.Name, metav1.DeleteOptions{})))
					n++
				}
			}
			if n > 0 {
				p.progressf("kubemark: deleted the bootstrap token and the %d CSRs it made", n)
			}
		}
	}
	for _, name := range bindingNames(run) {
		crb, err := p.test.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if p.owned(crb.Labels) {
			errs = append(errs, ignoreNotFound(p.test.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &crb.UID}})))
		}
	}
	sas := p.test.CoreV1().ServiceAccounts(tokenNamespace)
	if sa, err := sas.Get(ctx, proxyServiceAccount(run), metav1.GetOptions{}); err == nil && p.owned(sa.Labels) {
		errs = append(errs, ignoreNotFound(sas.Delete(ctx, sa.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &sa.UID}})))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("test cluster: deleting the hollow nodes' credentials: %w", err)
	}
	return nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// tokenKubeconfig is server (a kubeconfig of one cluster, no credentials)
// with a user that presents token.
func tokenKubeconfig(server *clientcmdapi.Config, user, token string) ([]byte, error) {
	cfg := server.DeepCopy()
	cfg.AuthInfos = map[string]*clientcmdapi.AuthInfo{user: {Token: token}}
	for _, c := range cfg.Contexts {
		c.AuthInfo = user
	}
	return clientcmd.Write(*cfg)
}
