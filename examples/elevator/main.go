// Command elevator is the network-time RFC's elevator problem and seed
// 000's projectile over netclock, with a server and a client in separate
// processes, at 30 Hz.
//
// The server is the authority: it simulates an elevator moving between six
// floors, one step per tick, and each tick sends the clients the elevator
// after it (unreliable, stamped with the tick). A player rides the
// elevator on the client: the player lives in predicted time (the tick the
// server will apply the player's inputs in), so the elevator under it must
// be predicted there too, or the player stands a round trip off the
// platform. The client predicts it from the server's last state, stepped
// forward with the client's own calls of the elevator, which it sends
// stamped with the predicted tick and the server applies in that tick; when
// the server's state for a tick arrives, the client checks its prediction
// against it, to the millimeter. What other players see is shown
// interpolated at server time, behind. Every 1.5 s the server fires a
// projectile from the car and sends its launch, stamped; the client places
// it where it is now, launch position plus velocity × how long ago the
// stamp was (Client.Age), however long the message took.
//
// Usage:
//
//	go run ./examples/elevator                       # the demo: a server and a client process, until 5 projectiles
//	go run ./examples/elevator -server -addr :4433   # a server (it writes its certificate to -cert)
//	go run ./examples/elevator -client -addr host:4433 -cert elevator-cert.pem
//
// Flags:
//
//	-server, -client  run one side; neither runs the demo, which starts both
//	                  as processes of this program on a free port
//	-addr a           the server's address (default 127.0.0.1:4433; the demo's: a free port)
//	-cert f           the server's certificate, written by the server and
//	                  pinned by the client (default elevator-cert.pem; the
//	                  demo's: in a temporary directory)
//	-projectiles n    the client (and the demo) ends after n projectiles
//	                  (default 5; 0: never)
//	-duration d       the longest the demo (or a side) runs (default 1m)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

type options struct {
	server, client bool
	addr, cert     string
	projectiles    int
	duration       time.Duration
}

// errUsage marks flag errors; the flag package has already explained them.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "elevator:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("elevator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.BoolVar(&o.server, "server", false, "run the server")
	fs.BoolVar(&o.client, "client", false, "run a client")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:4433", "the server's address")
	fs.StringVar(&o.cert, "cert", "elevator-cert.pem", "the server's certificate (written by -server, pinned by -client)")
	fs.IntVar(&o.projectiles, "projectiles", 5, "end the client (and the demo) after this many projectiles; 0: never")
	fs.DurationVar(&o.duration, "duration", time.Minute, "the longest a run lasts")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, fmt.Errorf("%w: %w", errUsage, err)
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "unexpected arguments: %q\n", fs.Args())
		return o, errUsage
	case o.server && o.client:
		fmt.Fprintln(stderr, "-server and -client are two processes: pick one")
		return o, errUsage
	case o.duration <= 0 || o.projectiles < 0:
		fmt.Fprintln(stderr, "-duration must be positive, -projectiles not negative")
		return o, errUsage
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	switch {
	case o.server:
		return runServer(ctx, o, stdout)
	case o.client:
		return runClient(ctx, o, stdout)
	}
	return runDemo(ctx, o, stdout, stderr)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
