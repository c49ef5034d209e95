package transport

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"testing"
)

// TestPinnedClientTLS: a client pinning the server's certificate from its
// PEM alone connects; pinning another certificate fails the dial with
// ErrCertificateMismatch, crypto/x509's detail in the chain.
func TestPinnedClientTLS(t *testing.T) {
	srv := startServer(t, ServerConfig{})
	t.Run("right pin", func(t *testing.T) {
		conf, err := PinnedClientTLS(testCert(t).CertPEM)
		if err != nil {
			t.Fatal(err)
		}
		c, err := dialTest(t, srv, ClientConfig{TLSConfig: conf}) // verified for 127.0.0.1
		if err != nil {
			t.Fatalf("dial with the server's certificate pinned: %v", err)
		}
		c.Close()
	})
	t.Run("wrong pin", func(t *testing.T) {
		other, err := DevCertificate()
		if err != nil {
			t.Fatal(err)
		}
		conf, err := PinnedClientTLS(other.CertPEM)
		if err != nil {
			t.Fatal(err)
		}
		_, err = dialTest(t, srv, ClientConfig{TLSConfig: conf})
		if !errors.Is(err, ErrCertificateMismatch) {
			t.Fatalf("dial with another certificate pinned: %v, want ErrCertificateMismatch", err)
		}
		var ua x509.UnknownAuthorityError
		if !errors.As(err, &ua) {
			t.Errorf("error %v does not keep crypto/x509's UnknownAuthorityError", err)
		}
		if !permanent(err) {
			t.Errorf("a pin mismatch is retried by Reconnect: %v", err)
		}
	})
	t.Run("system roots", func(t *testing.T) {
		// No pin: the dev certificate is untrusted, but nothing was pinned
		// to mismatch.
		_, err := dialTest(t, srv, ClientConfig{TLSConfig: &testSystemRoots})
		if err == nil || errors.Is(err, ErrCertificateMismatch) {
			t.Fatalf("dial trusting the system roots: %v, want a TLS error other than ErrCertificateMismatch", err)
		}
	})
}

func TestPinnedClientTLSInput(t *testing.T) {
	pemA := testCert(t).CertPEM
	other, err := DevCertificate()
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := []byte("-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n")
	for _, tc := range []struct {
		name  string
		in    []byte
		valid bool
	}{
		{"one certificate", pemA, true},
		{"two certificates", append(bytes.Clone(pemA), other.CertPEM...), true},
		{"trailing newlines", append(bytes.Clone(pemA), "\n\n"...), true},
		{"empty", nil, false},
		{"not PEM", []byte("hello"), false},
		{"a key, not a certificate", keyPEM, false},
		{"a certificate and a key", append(bytes.Clone(pemA), keyPEM...), false},
		{"garbage after the certificate", append(bytes.Clone(pemA), "junk"...), false},
		{"a certificate block of garbage", []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf, err := PinnedClientTLS(tc.in)
			if tc.valid {
				if err != nil || conf == nil || conf.RootCAs == nil {
					t.Fatalf("PinnedClientTLS = %v, %v; want a config with roots", conf, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("PinnedClientTLS = %v, %v; want an error wrapping ErrInvalidConfig", conf, err)
			}
		})
	}
}

// testSystemRoots trusts the system roots (RootCAs nil), verifying
// 127.0.0.1.
var testSystemRoots = tls.Config{ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13}
