package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// Validity of every certificate a local cluster issues. Local clusters are
// short-lived; a year keeps a long-kept cluster folder usable without rotation.
const validity = 365 * 24 * time.Hour

// CA is a certificate authority that can sign serving and client certificates.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// KeyPair is a certificate with its private key, both PEM encoded.
type KeyPair struct {
	CertPEM []byte
	KeyPEM  []byte
}

// NewCA creates a self-signed certificate authority.
func NewCA(commonName string) (*CA, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("signing CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key}, nil
}

// LoadCA reads a CA from PEM files written by WriteFiles.
func LoadCA(certFile, keyFile string) (*CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("reading CA certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("reading CA key: %w", err)
	}
	cert, err := ParseCertificate(certPEM)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", certFile, err)
	}
	key, err := ParsePrivateKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", keyFile, err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("%s is not a CA certificate", certFile)
	}
	return &CA{Cert: cert, Key: key}, nil
}

// KeyPair returns the CA's own certificate and key in PEM.
func (ca *CA) KeyPair() (KeyPair, error) {
	keyPEM, err := encodeKey(ca.Key)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{CertPEM: encodeCert(ca.Cert.Raw), KeyPEM: keyPEM}, nil
}

// CertPEM returns the CA certificate in PEM, the content of a kubeconfig's
// certificate-authority-data and of the apiserver's --client-ca-file.
func (ca *CA) CertPEM() []byte { return encodeCert(ca.Cert.Raw) }

// ServingCert issues a TLS server certificate valid for the given DNS names and IPs.
func (ca *CA) ServingCert(commonName string, dnsNames []string, ips []net.IP) (KeyPair, error) {
	return ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		DNSNames:    dnsNames,
		IPAddresses: ips,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// ClientCert issues a client certificate. The Kubernetes x509 authenticator maps
// the common name to the user name and the organizations to the groups, so
// ClientCert("system:node:n1", "system:nodes") authenticates as that node.
func (ca *CA) ClientCert(user string, groups ...string) (KeyPair, error) {
	if user == "" {
		return KeyPair{}, errors.New("client certificate needs a user name")
	}
	return ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func (ca *CA) issue(tmpl *x509.Certificate) (KeyPair, error) {
	key, err := newKey()
	if err != nil {
		return KeyPair{}, err
	}
	serial, err := newSerial()
	if err != nil {
		return KeyPair{}, err
	}
	now := time.Now()
	tmpl.SerialNumber = serial
	tmpl.NotBefore = now.Add(-time.Hour) // tolerate small clock differences between processes
	tmpl.NotAfter = now.Add(validity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("signing certificate for %q: %w", tmpl.Subject.CommonName, err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{CertPEM: encodeCert(der), KeyPEM: keyPEM}, nil
}

// NewSigningKey returns a PEM private key and its PEM public key, used for
// service-account token signing (apiserver --service-account-signing-key-file,
// --service-account-key-file; controller-manager --service-account-private-key-file).
func NewSigningKey() (private, public []byte, err error) {
	key, err := newKey()
	if err != nil {
		return nil, nil, err
	}
	private, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, nil, err
	}
	return private, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// ParseCertificate decodes the first certificate of a PEM bundle.
func ParseCertificate(data []byte) (*x509.Certificate, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errors.New("no PEM certificate found")
		}
		if block.Type == "CERTIFICATE" {
			return x509.ParseCertificate(block.Bytes)
		}
	}
}

// ParsePrivateKey decodes a PEM private key in PKCS#8, EC or PKCS#1 form.
func ParsePrivateKey(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM private key found")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
		return nil, errors.New("private key cannot sign")
	}
	if k, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	return nil, fmt.Errorf("unsupported private key type %q", block.Type)
}

// ECDSA P-256: a key takes microseconds to generate where RSA-2048 takes
// ~100 ms, which matters when a fleet mints thousands of node identities.
func newKey() (*ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating key: %w", err)
	}
	return key, nil
}

func newSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generating serial number: %w", err)
	}
	return serial, nil
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func encodeKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
