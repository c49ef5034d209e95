package transport

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// devCertValidity is how long a DevCertificate is valid.
const devCertValidity = 90 * 24 * time.Hour

// DevCert is a self-signed certificate for development and tests.
type DevCert struct {
	Certificate tls.Certificate // with its private key and Leaf
	ServerName  string          // the first host: the name ClientTLS verifies
	CertPEM     []byte          // for clients in other processes to pin
}

// DevCertificate makes a self-signed ECDSA certificate for hosts (DNS names
// or IPs; default localhost, 127.0.0.1 and ::1), valid for 90 days.
func DevCertificate(hosts ...string) (DevCert, error) {
	if len(hosts) == 0 {
		hosts = []string{"localhost", "127.0.0.1", "::1"}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return DevCert{}, fmt.Errorf("transport: dev certificate: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return DevCert{}, fmt.Errorf("transport: dev certificate: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: hosts[0], Organization: []string{"netclock development"}},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(devCertValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, // not a CA: it can vouch for nothing but itself
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return DevCert{}, fmt.Errorf("transport: dev certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return DevCert{}, fmt.Errorf("transport: dev certificate: %w", err)
	}
	return DevCert{
		Certificate: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		ServerName:  hosts[0],
		CertPEM:     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
	}, nil
}

// ServerTLS returns a ServerConfig.TLSConfig presenting the certificate.
func (d DevCert) ServerTLS() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{d.Certificate}, MinVersion: tls.VersionTLS13}
}

// ClientTLS returns a ClientConfig.TLSConfig trusting only this certificate.
func (d DevCert) ClientTLS() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(d.Certificate.Leaf)
	return &tls.Config{RootCAs: pool, ServerName: d.ServerName, MinVersion: tls.VersionTLS13}
}

// PinnedClientTLS returns a ClientConfig.TLSConfig trusting only certPEM's
// certificates (DevCert.CertPEM, or a private CA) for the host dialed;
// others fail with ErrCertificateMismatch, a bad certPEM with
// ErrInvalidConfig.
func PinnedClientTLS(certPEM []byte) (*tls.Config, error) {
	pool := x509.NewCertPool()
	n := 0
	for rest := certPEM; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			if len(bytes.TrimSpace(rest)) > 0 {
				return nil, fmt.Errorf("%w: pinned certificate: %d bytes that are not PEM", ErrInvalidConfig, len(rest))
			}
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("%w: pinned certificate: a PEM block of type %q, want CERTIFICATE",
				ErrInvalidConfig, block.Type)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: pinned certificate: %w", ErrInvalidConfig, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: pinned certificate: no PEM certificate", ErrInvalidConfig)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}, nil
}

// isUnknownAuthority reports whether err is a TLS handshake that failed
// because no trusted root vouches for the server's certificate.
func isUnknownAuthority(err error) bool {
	var ua x509.UnknownAuthorityError
	return errors.As(err, &ua)
}
