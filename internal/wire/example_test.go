package wire_test

import (
	"fmt"
	"time"

	"github.com/netclock/netclock/internal/wire"
)

// A ping and its pong, as they travel in QUIC datagrams: the client's send
// time goes out, and comes back with the server's receive and send times.
func Example() {
	ping := wire.AppendPing(nil, wire.Ping{Seq: 7, ClientSend: 1500 * time.Millisecond})
	p, err := wire.ParsePing(ping)
	if err != nil {
		fmt.Println(err)
		return
	}
	pong := wire.AppendPong(nil, wire.Pong{Seq: p.Seq, ClientSend: p.ClientSend,
		ServerReceive: 9*time.Second + 20*time.Millisecond, ServerSend: 9*time.Second + 21*time.Millisecond})
	q, err := wire.ParsePong(pong)
	fmt.Printf("ping %d bytes, pong %d bytes\n", len(ping), len(pong))
	fmt.Printf("seq %d: T1 %v, T2 %v, T3 %v, %v\n", q.Seq, q.ClientSend, q.ServerReceive, q.ServerSend, err)
	_, err = wire.ParsePong(pong[:len(pong)-1])
	fmt.Println(err != nil)
	// Output:
	// ping 14 bytes, pong 30 bytes
	// seq 7: T1 1.5s, T2 9.02s, T3 9.021s, <nil>
	// true
}
