package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func mustCA(t *testing.T) *CA {
	t.Helper()
	ca, err := NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func verify(t *testing.T, ca *CA, kp KeyPair, opts x509.VerifyOptions) (*x509.Certificate, error) {
	t.Helper()
	if _, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM); err != nil {
		t.Fatalf("certificate and key do not match: %v", err)
	}
	cert, err := ParseCertificate(kp.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	opts.Roots = x509.NewCertPool()
	opts.Roots.AddCert(ca.Cert)
	_, err = cert.Verify(opts)
	return cert, err
}

func TestClientCertCarriesIdentity(t *testing.T) {
	ca := mustCA(t)
	kp, err := ca.ClientCert("system:node:hollow-0", "system:nodes")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := verify(t, ca, kp, x509.VerifyOptions{KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		t.Fatalf("client certificate does not verify against its CA: %v", err)
	}
	if cert.Subject.CommonName != "system:node:hollow-0" {
		t.Errorf("CN = %q", cert.Subject.CommonName)
	}
	if !slices.Equal(cert.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("O = %v", cert.Subject.Organization)
	}
	if _, err := verify(t, ca, kp, x509.VerifyOptions{KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("a client certificate must not verify for serving")
	}
	if _, err := ca.ClientCert(""); err == nil {
		t.Error("client certificate without a user name was issued")
	}
}

func TestServingCertNamesAndForeignCA(t *testing.T) {
	ca := mustCA(t)
	kp, err := ca.ServingCert("kube-apiserver", []string{"localhost", "kubernetes.default"}, []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"localhost", "kubernetes.default", "127.0.0.1"} {
		if _, err := verify(t, ca, kp, x509.VerifyOptions{DNSName: name}); err != nil {
			t.Errorf("serving certificate not valid for %s: %v", name, err)
		}
	}
	if _, err := verify(t, ca, kp, x509.VerifyOptions{DNSName: "example.com"}); err == nil {
		t.Error("serving certificate valid for a name it was not issued for")
	}
	if _, err := verify(t, mustCA(t), kp, x509.VerifyOptions{DNSName: "localhost"}); err == nil {
		t.Error("certificate verified against a CA that did not sign it")
	}
}

func TestLoadCARoundTrip(t *testing.T) {
	dir := t.TempDir()
	ca := mustCA(t)
	kp, err := ca.KeyPair()
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	write := func(path string, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(certFile, kp.CertPEM)
	write(keyFile, kp.KeyPEM)
	loaded, err := LoadCA(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	// A certificate issued by the loaded CA verifies against the original.
	client, err := loaded.ClientCert("u")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify(t, ca, client, x509.VerifyOptions{KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("certificate of the reloaded CA does not verify: %v", err)
	}

	// A leaf certificate is not a CA; garbage is not a certificate.
	write(certFile, client.CertPEM)
	if _, err := LoadCA(certFile, keyFile); err == nil {
		t.Error("loaded a leaf certificate as CA")
	}
	write(certFile, []byte("garbage"))
	if _, err := LoadCA(certFile, keyFile); err == nil {
		t.Error("loaded garbage as CA")
	}
	if _, err := LoadCA(filepath.Join(dir, "missing.crt"), keyFile); err == nil {
		t.Error("loaded a missing CA")
	}
}

func TestParsePrivateKeyForms(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 1024)
	ecDER, _ := x509.MarshalECPrivateKey(ec)
	pkcs8DER, _ := x509.MarshalPKCS8PrivateKey(ec)
	tests := []struct {
		name    string
		pem     []byte
		wantErr bool
	}{
		{"pkcs8", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8DER}), false},
		{"ec", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), false},
		{"pkcs1", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}), false},
		{"not pem", []byte("garbage"), true},
		{"pem of nonsense", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1, 2, 3}}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePrivateKey(tt.pem)
			if (err != nil) != tt.wantErr {
				t.Errorf("err = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}

func TestSigningKeyPair(t *testing.T) {
	priv, pub, err := NewSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	key, err := ParsePrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(pub)
	if block == nil || block.Type != "PUBLIC KEY" {
		t.Fatalf("public key PEM: %q", pub)
	}
	parsed, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !key.Public().(*ecdsa.PublicKey).Equal(parsed) {
		t.Error("public key does not belong to the private key")
	}
}
