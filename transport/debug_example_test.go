package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/netclock/netclock/transport"
)

// The live view of a server with one client: mounted on an HTTP server,
// the page at /debug/netclock/ and its data at ?format=json.
func ExampleServer_DebugHandler() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cert, err := transport.DevCertificate("localhost")
	if err != nil {
		log.Fatal(err)
	}
	srv, err := transport.Listen("127.0.0.1:0", transport.ServerConfig{TickRate: 60, TLSConfig: cert.ServerTLS()})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	go srv.Serve(ctx)

	mux := http.NewServeMux()
	mux.Handle("/debug/netclock/", srv.DebugHandler())
	web := httptest.NewServer(mux) // in a game server: http.ListenAndServe("localhost:8080", mux)
	defer web.Close()

	c, err := transport.Dial(ctx, srv.Addr().String(), transport.ClientConfig{TLSConfig: cert.ClientTLS()})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.WaitSynced(ctx); err != nil {
		log.Fatal(err)
	}

	resp, err := http.Get(web.URL + "/debug/netclock/?format=json")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Role    string
		Clients []struct {
			ID        uint64
			Mode      string
			Reporting bool
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		log.Fatal(err)
	}
	cl := page.Clients[0]
	fmt.Printf("%s page: %d client, #%d by %s, reporting its sync: %v\n",
		page.Role, len(page.Clients), cl.ID, cl.Mode, cl.Reporting)
	// Output: server page: 1 client, #1 by datagram, reporting its sync: true
}
