package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/netclock/netclock/transport"
)

// Pinning a server's development certificate from the PEM file it wrote
// (-pin): the client trusts exactly that certificate, for the name dialed.
func Example() {
	dev, err := transport.DevCertificate()
	if err != nil {
		fmt.Println(err)
		return
	}
	file := filepath.Join(os.TempDir(), fmt.Sprintf("netclock-example-%d.pem", os.Getpid()))
	defer os.Remove(file)
	if err := os.WriteFile(file, dev.CertPEM, 0o600); err != nil {
		fmt.Println(err)
		return
	}
	conf, err := clientTLS(file, "localhost")
	fmt.Println(conf.ServerName, conf.RootCAs != nil, err)
	_, err = clientTLS(file+".missing", "localhost")
	fmt.Println(err != nil)
	// Output:
	// localhost true <nil>
	// true
}
