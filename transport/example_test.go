package transport_test

import (
	"context"
	"crypto/tls"
	"errors"
	"log"
	"net"
	"os"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/nettime"
	"github.com/netclock/netclock/ticksys"
	"github.com/netclock/netclock/transport"
)

// A server and a client that agree on the tick. (Compiled, not run: it
// listens on a fixed port.)
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	cert, err := transport.DevCertificate("localhost") // development only; the client pins it
	if err != nil {
		log.Fatal(err)
	}
	srv, err := transport.Listen("127.0.0.1:4433", transport.ServerConfig{TickRate: 60, TLSConfig: cert.ServerTLS()})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	go srv.Serve(ctx) // accepts clients and runs the server's tick loop
	srv.System().OnNetworkTick(func(ev ticksys.TickEvent) { /* the authoritative simulation */ })
	srv.OnMessage(func(id transport.ClientID, m transport.Message) {
		lag, _ := srv.Age(m.Stamp) // how long ago the client stamped it
		_ = lag
	})

	c, err := transport.Dial(ctx, "127.0.0.1:4433", transport.ClientConfig{TLSConfig: cert.ClientTLS(), Reconnect: true})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	<-c.Synced() // the connect burst has been observed
	c.System().OnNetworkTick(func(ev ticksys.TickEvent) { /* predict at ev.Predicted, interpolate at ev.Server */ })
	go c.Run(ctx) // or call c.Advance(frameTime) from the game loop

	if err := c.SendUnreliable([]byte("jump")); err != nil { // stamped with the predicted time
		log.Print(err)
	}
	var stamp nettime.Time = c.System().ServerTime()
	lag, ok := c.Age(stamp) // how long ago a stamp was, in shared time
	log.Println(lag, ok)
}

// A server that keeps its stateless reset key across restarts and limits
// who may connect, and a client that tells a refusal apart. (Compiled, not
// run: it reads a key file and listens on a fixed port.)
func ExampleServerConfig() {
	// The key is made once (32 bytes from crypto/rand, written with mode
	// 0600 next to the TLS key) and loaded at every start, so a restarted
	// server's first packet ends its previous run's connections.
	b, err := os.ReadFile("/etc/mygame/netclock-reset.key")
	if err != nil || len(b) != 32 {
		log.Fatal("reset key: ", err)
	}
	var key quic.StatelessResetKey
	copy(key[:], b)

	cert, err := tls.LoadX509KeyPair("/etc/mygame/cert.pem", "/etc/mygame/key.pem")
	if err != nil {
		log.Fatal(err)
	}
	banned := map[string]bool{"192.0.2.7": true}
	srv, err := transport.Listen(":4433", transport.ServerConfig{
		TLSConfig:           &tls.Config{Certificates: []tls.Certificate{cert}},
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

	_, err = transport.Dial(context.Background(), "game.example:4433", transport.ClientConfig{})
	switch {
	case errors.Is(err, transport.ErrRefused): // admission: per-source limit, rate, capacity, Admit
		log.Print("refused before the handshake; try again later")
	case errors.Is(err, transport.ErrServerFull): // MaxClients connected
		log.Print("server full")
	}
}
