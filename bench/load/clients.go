package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/transport"
)

// clientOpts configure a load generator.
type clientOpts struct {
	echo   bool
	n      int
	addr   string
	pinPEM []byte
	ping   time.Duration
	burst  int // netclock BurstPings (0: transport's default)
	// warmup is waited after the dial phase, then duration is measured,
	// then the clients stay connected for hold before closing.
	warmup, duration, hold time.Duration
	dialConcurrency        int
	dialAttempts           int
	dialTimeout            time.Duration
	backoff                time.Duration // first retry delay; doubles up to maxBackoff
	maxBackoff             time.Duration
	// dialed is called after the dial phase with the clients connected.
	dialed func(connected int)
}

// ClientReport is what the clients mode prints.
type ClientReport struct {
	Mode      string `json:"mode"`      // "netclock" or "echo"
	N         int    `json:"n"`         // clients started
	Connected int    `json:"connected"` // clients that connected
	// Synced counts netclock clients synced at the window's end.
	Synced int `json:"synced,omitempty"`
	// Dial phase: refusals (CONNECTION_REFUSED from quic-go's accept
	// queue, or netclock's server-full) and other failures, retried or
	// given up for good.
	RefusedRetried int            `json:"refused_retried"`
	RefusedForGood int            `json:"refused_for_good"`
	FailedRetried  int            `json:"failed_retried"`
	FailedForGood  int            `json:"failed_for_good"`
	DialAttempts   int            `json:"dial_attempts"`
	DialS          float64        `json:"dial_s"`
	DialErrors     map[string]int `json:"dial_errors,omitempty"`

	// WindowStarted is false if the run ended before the window; WindowS
	// is the window's length in seconds.
	WindowStarted bool    `json:"window_started"`
	WindowS       float64 `json:"window_s"`
	// In the window, summed over the clients:
	PingsSent     int64   `json:"pings_sent"`
	PongsReceived int64   `json:"pongs_received"`
	Lost          int64   `json:"lost"`
	PingRateHz    float64 `json:"ping_rate_per_client_hz"`
	// Disconnected counts clients whose connection ended by the window's
	// end.
	Disconnected int `json:"disconnected"`

	// RTT is the application-level round trip T4−T1 of every pong
	// received in the window; RTTSource says how it was measured.
	RTT       Dist   `json:"rtt"`
	RTTSource string `json:"rtt_source"`
	// For netclock, at the window's end, the median over clients of the
	// estimate's RTT (floor of (T4−T1)−(T3−T2): excludes the server's
	// T2..T3) and quic-go's RTT estimates from ClientStats.
	EstimateRTTUS     float64 `json:"estimate_rtt_median_us,omitempty"`
	QUICSmoothedRTTUS float64 `json:"quic_smoothed_rtt_median_us,omitempty"`
	QUICMinRTTUS      float64 `json:"quic_min_rtt_median_us,omitempty"`
	// ServerResidence: not measurable from the client (see notes).
	CPU CPUReport `json:"cpu"`
	// In the window: the clients' GC, and the whole machine's CPU.
	GC      GCReport   `json:"gc"`
	Machine MachineCPU `json:"machine_cpu"`
	// Notes say what the numbers do not.
	Notes []string `json:"notes,omitempty"`
}

// recorder collects the RTTs of the window.
type recorder struct {
	on     atomic.Bool
	h      *hist
	t1, t4 atomic.Int64 // clock-hook calls identified as T1 and T4
}

func newRecorder() *recorder { return &recorder{h: newHist()} }

func (r *recorder) sample(d time.Duration) {
	if r.on.Load() {
		r.h.record(d)
	}
}

// clockHook is a netclock client's clock (provider.SteeredConfig.Clock,
// from which transport reads T1 and T4). transport keeps each pong's
// timestamps to itself, so the hook recovers T4−T1 by identifying its
// caller: the read in Client.sendPing is T1, the one in
// Client.receiveLoop is T4, which is paired with the latest T1. On
// loopback at 10 Hz at most one ping is in flight, so the pairing is
// exact; a lost pong leaves its T1 to be replaced by the next one.
// Identifying the caller costs a runtime.Callers per read (measured by
// BenchmarkClockHook), which sits between T1 and the send.
type clockHook struct {
	rec    *recorder
	lastT1 atomic.Int64
}

type callerKind uint8

const (
	kindUnknown callerKind = iota
	kindSkip               // a frame of this package: look further up
	kindT1
	kindT4
	kindOther
)

var callerKinds sync.Map // uintptr → callerKind

const transportPkg = "github.com/netclock/netclock/transport."

// selfPkg is this package's symbol prefix ("main." in the command; the
// import path in tests).
var selfPkg = func() string {
	name := runtime.FuncForPC(reflect.ValueOf(newRecorder).Pointer()).Name()
	return name[:strings.LastIndex(name, ".")+1]
}()

func classifyPC(pc uintptr) callerKind {
	if k, ok := callerKinds.Load(pc); ok {
		return k.(callerKind)
	}
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	k := kindSkip
	switch name := f.Function; {
	case strings.HasPrefix(name, transportPkg):
		switch {
		case strings.HasSuffix(name, ".sendPing"), strings.HasSuffix(name, ".sendLoop"):
			k = kindT1
		case strings.HasSuffix(name, ".receiveLoop"):
			k = kindT4
		default:
			k = kindOther
		}
	case strings.HasPrefix(name, selfPkg):
	default:
		k = kindOther
	}
	callerKinds.Store(pc, k)
	return k
}

func (k *clockHook) now() time.Duration {
	now := mono()
	var pcs [4]uintptr
	n := runtime.Callers(2, pcs[:])
	for _, pc := range pcs[:n] {
		switch classifyPC(pc) {
		case kindSkip:
			continue
		case kindT1:
			k.lastT1.Store(now)
			k.rec.t1.Add(1)
		case kindT4:
			k.rec.t4.Add(1)
			if t1 := k.lastT1.Swap(0); t1 != 0 {
				k.rec.sample(time.Duration(now - t1))
			}
		}
		break
	}
	return time.Duration(now)
}

// loadClient is a connected netclock or echo client.
type loadClient interface {
	counts() (sent, recv, lost int64)
	done() <-chan struct{}
	close()
}

type netclockClient struct{ *transport.Client }

func (c netclockClient) counts() (int64, int64, int64) {
	st := c.Stats()
	return st.PingsSent, st.PongsReceived, st.Lost
}
func (c netclockClient) done() <-chan struct{} { return c.Done() }
func (c netclockClient) close()                { c.Close() }

func (c *echoClient) counts() (int64, int64, int64) {
	s, r := c.sent.Load(), c.recv.Load()
	return s, r, 0
}

// isRefusal reports whether a dial failed because the server refused the
// connection: quic-go's CONNECTION_REFUSED or netclock's server-full.
func isRefusal(err error) bool {
	if errors.Is(err, transport.ErrServerFull) {
		return true
	}
	var te *quic.TransportError
	return errors.As(err, &te) && te.ErrorCode == quic.ConnectionRefused
}

// errKey shortens a dial error to a class for the report.
func errKey(err error) string {
	switch {
	case errors.Is(err, transport.ErrServerFull):
		return "server full"
	case isRefusal(err):
		return "CONNECTION_REFUSED"
	case errors.Is(err, context.DeadlineExceeded):
		return "dial timeout"
	}
	var it *quic.IdleTimeoutError
	var ht *quic.HandshakeTimeoutError
	switch {
	case errors.As(err, &it):
		return "idle timeout"
	case errors.As(err, &ht):
		return "handshake timeout"
	}
	s := err.Error()
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

func runClients(ctx context.Context, o clientOpts) (*ClientReport, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(o.pinPEM) {
		return nil, errors.New("no certificate in the pinned PEM")
	}
	tlsConf := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}
	raddr, err := net.ResolveUDPAddr("udp", o.addr)
	if err != nil {
		return nil, err
	}
	tlsConf.ServerName = raddr.IP.String()
	rec := newRecorder()
	rep := &ClientReport{Mode: "netclock", N: o.n, DialErrors: map[string]int{}}
	if o.echo {
		rep.Mode = "echo"
		rep.RTTSource = "echo payload: T4−T1 per echo, both stamped by the client around SendDatagram/ReceiveDatagram"
	} else {
		rep.RTTSource = "client clock hook: T4−T1 per pong, as transport stamps them (T1 in sendPing, T4 in receiveLoop)"
	}

	dialOne := func(ctx context.Context) (loadClient, error) {
		dctx, cancel := context.WithTimeout(ctx, o.dialTimeout)
		defer cancel()
		if o.echo {
			c, err := dialEcho(dctx, raddr, tlsConf, o.ping, rec)
			if err != nil {
				return nil, err
			}
			return c, nil
		}
		hook := &clockHook{rec: rec}
		c, err := transport.Dial(dctx, o.addr, transport.ClientConfig{
			TLSConfig: tlsConf, PingInterval: o.ping, BurstPings: o.burst,
			Provider: provider.SteeredConfig{Clock: hook.now},
		})
		if err != nil {
			return nil, err
		}
		return netclockClient{c}, nil
	}

	// The dial phase: a tight loop over the clients with limited
	// concurrency, each retrying with exponential backoff and jitter.
	clients := make([]loadClient, o.n)
	var mu sync.Mutex
	jobs := make(chan int)
	var wg sync.WaitGroup
	dialStart := time.Now()
	for range max(1, o.dialConcurrency) {
		wg.Go(func() {
			for i := range jobs {
				backoff := o.backoff
				for attempt := 1; ; attempt++ {
					c, err := dialOne(ctx)
					mu.Lock()
					rep.DialAttempts++
					if err == nil {
						clients[i] = c
						mu.Unlock()
						break
					}
					rep.DialErrors[errKey(err)]++
					refused := isRefusal(err)
					last := attempt >= o.dialAttempts || ctx.Err() != nil
					switch {
					case refused && last:
						rep.RefusedForGood++
					case refused:
						rep.RefusedRetried++
					case last:
						rep.FailedForGood++
					default:
						rep.FailedRetried++
					}
					mu.Unlock()
					if last {
						break
					}
					wait(ctx, backoff/2+rand.N(backoff/2+1))
					backoff = min(2*backoff, o.maxBackoff)
				}
			}
		})
	}
feed:
	for i := range o.n {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	rep.DialS = time.Since(dialStart).Seconds()
	live := slices.DeleteFunc(slices.Clone(clients), func(c loadClient) bool { return c == nil })
	rep.Connected = len(live)
	if o.n-rep.Connected > rep.RefusedForGood+rep.FailedForGood { // not dialed: interrupted
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d clients not dialed (interrupted)",
			o.n-rep.Connected-rep.RefusedForGood-rep.FailedForGood))
	}
	if len(rep.DialErrors) == 0 {
		rep.DialErrors = nil
	}
	if o.dialed != nil {
		o.dialed(rep.Connected)
	}
	defer closeAll(live)

	if !wait(ctx, o.warmup) {
		rep.Notes = append(rep.Notes, "ended before the measurement window")
		return rep, nil
	}

	// The window.
	sum := func() (s, r, l int64) {
		for _, c := range live {
			a, b, d := c.counts()
			s, r, l = s+a, r+b, l+d
		}
		return
	}
	s0, r0, l0 := sum()
	gc0 := gcMark()
	stat0, _ := readStat()
	cpu := markCPU()
	rec.on.Store(true)
	if o.duration > 0 {
		wait(ctx, o.duration)
	} else {
		<-ctx.Done()
	}
	rec.on.Store(false)
	var wall time.Duration
	rep.CPU, wall = cpu.since()
	rep.Machine = stat0.since()
	rep.GC = gcSince(gc0)
	s1, r1, l1 := sum()
	rep.WindowStarted = true
	rep.WindowS = wall.Seconds()
	rep.PingsSent, rep.PongsReceived, rep.Lost = s1-s0, r1-r0, l1-l0
	if len(live) > 0 && wall > 0 {
		rep.PingRateHz = float64(rep.PongsReceived) / wall.Seconds() / float64(len(live))
	}
	for _, c := range live {
		select {
		case <-c.done():
			rep.Disconnected++
		default:
		}
		// Counted at the window's end: a client syncs at most
		// SyncTimeout (1 s) after its first ping if any pong came,
		// however slow the machine, while its 200 ms burst can still be
		// under way when the window starts.
		if nc, ok := c.(netclockClient); ok {
			select {
			case <-nc.Synced():
				rep.Synced++
			default:
			}
		}
	}
	rep.RTT = rec.h.dist()
	if !o.echo {
		var est, srtt, mrtt []time.Duration
		for _, c := range live {
			st := c.(netclockClient).Stats()
			est = append(est, st.RTT)
			srtt = append(srtt, st.QUICSmoothedRTT)
			mrtt = append(mrtt, st.QUICMinRTT)
		}
		rep.EstimateRTTUS, rep.QUICSmoothedRTTUS, rep.QUICMinRTTUS = us(median(est)), us(median(srtt)), us(median(mrtt))
		if rep.RTT.Count == 0 && rep.PongsReceived > 0 {
			rep.RTTSource = fmt.Sprintf("unavailable: the clock hook identified %d T1 and %d T4 reads "+
				"(transport's internals changed?); use estimate_rtt_median_us or quic_*_rtt_median_us",
				rec.t1.Load(), rec.t4.Load())
		}
	}
	wait(ctx, o.hold)
	return rep, nil
}

func closeAll(cs []loadClient) {
	ch := make(chan loadClient)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for c := range ch {
				c.close()
			}
		})
	}
	for _, c := range cs {
		ch <- c
	}
	close(ch)
	wg.Wait()
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
