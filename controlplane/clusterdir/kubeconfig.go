package clusterdir

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kscale/kscale/controlplane/pki"
)

// KubeconfigBytes renders a self-contained kubeconfig (certificates inline) for
// one client of the cluster at server.
func KubeconfigBytes(server string, caPEM []byte, client pki.KeyPair, user string) ([]byte, error) {
	const name = "kscale"
	cfg := clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{
			name: {Server: server, CertificateAuthorityData: caPEM},
		},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{
			user: {ClientCertificateData: client.CertPEM, ClientKeyData: client.KeyPEM},
		},
		Contexts: map[string]*clientcmdapi.Context{
			name: {Cluster: name, AuthInfo: user},
		},
		CurrentContext: name,
	}
	data, err := clientcmd.Write(cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding kubeconfig for %s: %w", user, err)
	}
	return data, nil
}

// LoadCA reads the cluster's certificate authority.
func (d Dir) LoadCA() (*pki.CA, error) {
	return pki.LoadCA(d.CACert(), d.CAKey())
}

// MintKubeconfig issues a client certificate for user in groups, signed by the
// cluster CA, and writes a kubeconfig for it to path (mode 0600). The server
// address comes from the cluster's state file, so the cluster must have been
// started at least once.
func (d Dir) MintKubeconfig(path, user string, groups ...string) error {
	ca, err := d.LoadCA()
	if err != nil {
		return err
	}
	state, err := d.ReadState()
	if err != nil {
		return err
	}
	return MintKubeconfigWith(ca, state.APIServerURL, path, user, groups...)
}

// MintKubeconfigWith is MintKubeconfig with the CA and server already known,
// for callers that mint many identities in a row.
func MintKubeconfigWith(ca *pki.CA, server, path, user string, groups ...string) error {
	kp, err := ca.ClientCert(user, groups...)
	if err != nil {
		return err
	}
	data, err := KubeconfigBytes(server, ca.CertPEM(), kp, user)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, data, 0o600)
}

// RESTConfig loads the client configuration of a kubeconfig in this folder,
// e.g. RESTConfig("admin").
func (d Dir) RESTConfig(client string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", d.Kubeconfig(client))
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", d.Kubeconfig(client), err)
	}
	return cfg, nil
}
