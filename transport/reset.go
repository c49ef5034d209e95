package transport

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"

	"github.com/quic-go/quic-go"
)

// resetKeyLabel separates the stateless reset key derived from a TLS key
// from any other use of that key.
const resetKeyLabel = "netclock/1 QUIC stateless reset key"

// resetKey returns the server's stateless reset key: the configured one;
// else one derived from the first certificate's private key, so that a
// server restarted with the same certificate has the same key without
// storing anything; else a random one, which serves this process only.
// The second result says whether the key outlives the process.
func resetKey(configured *quic.StatelessResetKey, tlsConf *tls.Config) (*quic.StatelessResetKey, bool) {
	if configured != nil {
		return configured, true
	}
	if k, ok := deriveResetKey(tlsConf); ok {
		return k, true
	}
	var k quic.StatelessResetKey
	rand.Read(k[:]) // never fails
	return &k, false
}

// deriveResetKey derives a key from the first certificate's private key:
// HMAC-SHA256 keyed with its PKCS #8 encoding. Knowing the key reveals
// nothing of the TLS key.
func deriveResetKey(tlsConf *tls.Config) (*quic.StatelessResetKey, bool) {
	if tlsConf == nil || len(tlsConf.Certificates) == 0 || tlsConf.Certificates[0].PrivateKey == nil {
		return nil, false
	}
	der, err := x509.MarshalPKCS8PrivateKey(tlsConf.Certificates[0].PrivateKey)
	if err != nil {
		return nil, false
	}
	m := hmac.New(sha256.New, der)
	m.Write([]byte(resetKeyLabel))
	var k quic.StatelessResetKey
	copy(k[:], m.Sum(nil))
	return &k, true
}
