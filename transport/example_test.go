package transport_test

import (
	"context"
	"log"
	"time"

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
