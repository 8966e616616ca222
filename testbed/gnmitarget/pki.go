package gnmitarget

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI names the PEM files NewTestPKI wrote.
type PKI struct {
	CA         string // ca.pem: the CA certificate (trust anchor for both sides)
	ServerCert string // server.pem
	ServerKey  string // server-key.pem
	ClientCert string // client.pem: for mTLS, CN "fabctl"
	ClientKey  string // client-key.pem
}

// TLS is the target's TLS configuration from this PKI; mutual adds the
// client CA (mTLS).
func (p *PKI) TLS(mutual bool) TLS {
	t := TLS{CertFile: p.ServerCert, KeyFile: p.ServerKey}
	if mutual {
		t.ClientCAFile = p.CA
	}
	return t
}

// pkiValidity is short: these certificates are for tests and a local
// testbed, and a leaked key expires quickly.
const pkiValidity = 7 * 24 * time.Hour

// NewTestPKI writes a fresh ECDSA P-256 CA, a server certificate valid for
// hosts (IP addresses or DNS names; none means 127.0.0.1, ::1 and
// localhost) and a client certificate to dir (created 0700; keys 0600).
// Certificates are valid for 7 days. The standard library is enough here:
// no PKI library is needed for three certificates.
func NewTestPKI(dir string, hosts ...string) (*PKI, error) {
	if len(hosts) == 0 {
		hosts = []string{"127.0.0.1", "::1", "localhost"}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &PKI{
		CA:         filepath.Join(dir, "ca.pem"),
		ServerCert: filepath.Join(dir, "server.pem"),
		ServerKey:  filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"),
		ClientKey:  filepath.Join(dir, "client-key.pem"),
	}
	now := time.Now().Add(-time.Minute) // tolerate small clock skew
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "fabctl test CA"},
		NotBefore:             now,
		NotAfter:              now.Add(pkiValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	if err := writePEM(p.CA, "CERTIFICATE", caDER, 0o644); err != nil {
		return nil, err
	}
	leaf := func(cn string, usage x509.ExtKeyUsage, certFile, keyFile string, hosts []string) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: serial(),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    now,
			NotAfter:     now.Add(pkiValidity),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		}
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return err
		}
		if err := writePEM(certFile, "CERTIFICATE", der, 0o644); err != nil {
			return err
		}
		return writePEM(keyFile, "EC PRIVATE KEY", kder, 0o600)
	}
	if err := leaf(hosts[0], x509.ExtKeyUsageServerAuth, p.ServerCert, p.ServerKey, hosts); err != nil {
		return nil, fmt.Errorf("server certificate: %w", err)
	}
	if err := leaf("fabctl", x509.ExtKeyUsageClientAuth, p.ClientCert, p.ClientKey, nil); err != nil {
		return nil, fmt.Errorf("client certificate: %w", err)
	}
	return p, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	data := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	if err := os.WriteFile(path, data, mode); err != nil {
		return err
	}
	return os.Chmod(path, mode) // WriteFile keeps the mode of an existing file
}
