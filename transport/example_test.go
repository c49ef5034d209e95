package transport_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log"
	"net"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/ticksys"
	"github.com/netclock/netclock/transport"
)

// A server and a client that agree on the tick, and a message from one to
// the other stamped with the tick it belongs to.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	cert, err := transport.DevCertificate("localhost") // development only; the client pins it
	if err != nil {
		log.Fatal(err)
	}
	srv, err := transport.Listen("127.0.0.1:0", transport.ServerConfig{TickRate: 60, TLSConfig: cert.ServerTLS()})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	go srv.Serve(ctx) // accepts clients and runs the server's tick loop
	srv.System().OnNetworkTick(func(ev ticksys.TickEvent) { /* the authoritative simulation */ })
	inputs := make(chan transport.Message, 16)
	srv.OnMessage(func(id transport.ClientID, m transport.Message) { inputs <- m })

	// In another process: transport.PinnedClientTLS(cert.CertPEM).
	c, err := transport.Dial(ctx, srv.Addr().String(), transport.ClientConfig{TLSConfig: cert.ClientTLS(), Reconnect: true})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	sys, err := c.WaitSynced(ctx) // the connect burst has been observed
	if err != nil {
		log.Fatal(err)
	}
	sys.OnNetworkTick(func(ev ticksys.TickEvent) { /* predict at ev.Predicted, interpolate at ev.Server */ })
	go c.Run(ctx) // or sys.Advance(frameTime) in the game loop
	fmt.Println("client ticks at", sys.TickRate(), "Hz")

	// Stamped with the client's predicted time: the tick the server should
	// apply it in.
	if err := c.Send(transport.Message{Payload: []byte("jump"), Reliable: true}); err != nil {
		log.Fatal(err)
	}
	m := <-inputs
	_, stamped := srv.Age(m.Stamp) // how long ago its tick was (negative: still to come)
	fmt.Printf("server got %q, stamped %v, on the %d Hz timeline\n", m.Payload, stamped, m.Stamp.TickRate())
	// Output:
	// client ticks at 60 Hz
	// server got "jump", stamped true, on the 60 Hz timeline
}

// A server that keeps its stateless reset key across restarts and limits
// who may connect, and a client that tells a refusal apart.
func ExampleServerConfig() {
	// In production the key is made once (32 bytes from crypto/rand,
	// stored like the TLS key) and loaded at every start, so a restarted
	// server's first packet ends its previous run's connections.
	var key quic.StatelessResetKey
	rand.Read(key[:])

	cert, err := transport.DevCertificate() // in production: tls.LoadX509KeyPair
	if err != nil {
		log.Fatal(err)
	}
	banned := map[string]bool{"127.0.0.1": true}
	srv, err := transport.Listen("127.0.0.1:0", transport.ServerConfig{
		TLSConfig:           cert.ServerTLS(),
		StatelessResetKey:   &key,
		MaxClients:          200, // the game's capacity
		MaxClientsPerSource: 64,  // a LAN party behind one address
		Admit: func(r transport.AdmissionRequest) error { // before the TLS handshake; must be fast
			if host, _, _ := net.SplitHostPort(r.Remote.String()); banned[host] {
				return errors.New("banned")
			}
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	go srv.Serve(context.Background())

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = transport.Dial(ctx, srv.Addr().String(), transport.ClientConfig{TLSConfig: cert.ClientTLS()})
	switch {
	case errors.Is(err, transport.ErrRefused): // admission: per-source limit, rate, capacity, Admit
		fmt.Println("refused before the handshake; try again later")
	case errors.Is(err, transport.ErrServerFull): // MaxClients connected
		fmt.Println("server full")
	case err != nil:
		fmt.Println(err)
	}
	// Output: refused before the handshake; try again later
}
