package metrics_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/netclock/netclock/metrics"
	"github.com/netclock/netclock/transport"
)

// A server and a client, each exported on a /metrics page that Prometheus
// scrapes.
func Example() {
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
	c, err := transport.Dial(ctx, srv.Addr().String(), transport.ClientConfig{TLSConfig: cert.ClientTLS()})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	<-c.Synced()

	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewServerCollector(srv.Stats))
	// A label tells this process's clients apart (one would do without).
	prometheus.WrapRegistererWith(prometheus.Labels{"player": "1"}, reg).
		MustRegister(metrics.NewClientCollector(c.Stats, c.Estimate))
	page := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer page.Close()

	resp, err := http.Get(page.URL)
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for line := range strings.Lines(string(body)) {
		switch name, value, _ := strings.Cut(strings.TrimSpace(line), " "); {
		case strings.HasPrefix(name, "netclock_server_clients"),
			strings.HasPrefix(name, "netclock_client_synced"),
			strings.HasPrefix(name, "netclock_client_info"):
			fmt.Println(name, value)
		case strings.HasPrefix(name, "netclock_client_offset_seconds"),
			strings.HasPrefix(name, "netclock_client_error_bound_seconds"):
			fmt.Println(name, "...") // varies from run to run
		}
	}
	// Output:
	// netclock_client_error_bound_seconds{player="1"} ...
	// netclock_client_info{mode="datagram",player="1"} 1
	// netclock_client_offset_seconds{player="1"} ...
	// netclock_client_synced{player="1"} 1
	// netclock_server_clients 1
}
