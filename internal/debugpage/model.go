// Package debugpage is the live view of netclock's transport: the page (an
// HTML file with its own canvas charts, no external assets), the JSON model
// it polls, and the bounded history a peer keeps for it. Package transport
// fills the model (Server.DebugHandler, Client.DebugHandler).
package debugpage

import (
	"math"
	"time"
)

// Page is the JSON document the page polls: a peer and its clients.
type Page struct {
	// Role is "server" or "client".
	Role string `json:"role"`
	// Now is the clock the samples' times refer to, in seconds: the
	// server clock (time since tick 0) on a server, the client clock on a
	// client.
	Now float64 `json:"now"`
	// TickRate is the session's tick rate, in ticks per second.
	TickRate uint32 `json:"tick_rate"`
	// Epoch is the server's session epoch, in hex.
	Epoch string `json:"epoch"`
	// Summary holds the peer's own counts, as name and value, in order.
	Summary []Field `json:"summary"`
	// Clients lists the connected clients by ID (the client itself, on
	// a client). Never null.
	Clients []Client `json:"clients"`
}

// Field is a named value of the summary.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Client is one client's row, charts and events.
type Client struct {
	// ID is the server's ClientID (0 on a client's own page).
	ID uint64 `json:"id"`
	// Remote is the client's address as the server sees it, or the
	// server's on a client.
	Remote string `json:"remote"`
	// Mode is how its pings travel: "datagram" or "stream".
	Mode string `json:"mode"`
	// Reporting: the client reports its sync quality in its pings; if
	// false, only what the server measures itself is known.
	Reporting bool `json:"reporting"`
	// Connected is how long it has been connected, in seconds.
	Connected float64 `json:"connected"`
	// Pings counts the pings answered (server) or sent (client).
	Pings int64 `json:"pings"`
	// Missed counts the pings the server never received (server), or
	// that got no pong (client).
	Missed int64 `json:"missed"`
	// Synchronized, Quality and State are the client's, as of its last
	// report.
	Synchronized bool   `json:"synchronized"`
	Quality      string `json:"quality"`
	State        string `json:"state"`
	// Last is the latest sample.
	Last Point `json:"last"`
	// History holds the samples of the last minutes, oldest first; it
	// is left out beyond the first MaxHistoryClients clients.
	History *Series `json:"history,omitempty"`
	// Events are the client's recent events, oldest first. Never null.
	Events []Event `json:"events"`
}

// Point is a sample as the page shows it: durations in milliseconds.
type Point struct {
	T              float64 `json:"t"` // seconds, on Page.Now's clock
	RTT            float64 `json:"rtt"`
	Uplink         float64 `json:"uplink"`
	Downlink       float64 `json:"downlink"`
	Jitter         float64 `json:"jitter"`
	Offset         float64 `json:"offset"`
	Bound          float64 `json:"bound"`
	Drift          float64 `json:"drift"` // ppm
	PredictedScale float64 `json:"predicted_scale"`
	ServerScale    float64 `json:"server_scale"`
	Lead           float64 `json:"lead"`
	Interp         float64 `json:"interp"`
	Loss           float64 `json:"loss"` // fraction of pings
	Resets         int64   `json:"resets"`
}

// Series is a client's history, one array per Point field.
type Series struct {
	T              []float64 `json:"t"`
	RTT            []float64 `json:"rtt"`
	Uplink         []float64 `json:"uplink"`
	Downlink       []float64 `json:"downlink"`
	Jitter         []float64 `json:"jitter"`
	Offset         []float64 `json:"offset"`
	Bound          []float64 `json:"bound"`
	Drift          []float64 `json:"drift"`
	PredictedScale []float64 `json:"predicted_scale"`
	ServerScale    []float64 `json:"server_scale"`
	Lead           []float64 `json:"lead"`
	Interp         []float64 `json:"interp"`
	Loss           []float64 `json:"loss"`
	Resets         []int64   `json:"resets"`
	// State is the estimator state of each sample (clocksync.State's
	// value; 0, init, has no estimate), or NoReport: the page draws no
	// point where there is no estimate, and only the RTT where there is
	// no report.
	State []int `json:"state"`
}

// NoReport is the State of a sample taken without a recent report from
// the client: only its RTT (quic-go's) is known.
const NoReport = 255

// Event is something that happened to a client.
type Event struct {
	T    float64 `json:"t"` // seconds, on Page.Now's clock
	What string  `json:"what"`
}

// MaxHistoryClients is how many clients' histories one JSON document
// carries: 300 samples of 14 series are about 30 KB of JSON a client, so
// a page with every client of a full server would be megabytes a second.
// The page shows the rest in its table.
const MaxHistoryClients = 32

// Sample is one point of a client's history, stored compactly (64 bytes):
// durations in microseconds, saturated to an int32 (±35 minutes).
type Sample struct {
	T                                  int64 // milliseconds
	Offset                             int64 // nanoseconds
	RTT, Uplink, Downlink, Jitter      int32
	Bound, Lead, Interp                int32
	Drift, PredictedScale, ServerScale float32
	Resets                             uint32
	Loss                               uint16 // thousandths
	State, Quality                     uint8
}

// Micros is d in microseconds, saturated to an int32.
func Micros(d time.Duration) int32 {
	us := d / time.Microsecond
	switch {
	case us > math.MaxInt32:
		return math.MaxInt32
	case us < math.MinInt32:
		return math.MinInt32
	}
	return int32(us)
}

// Point returns s as the page shows it.
func (s Sample) Point() Point {
	ms := func(us int32) float64 { return float64(us) / 1e3 }
	return Point{T: float64(s.T) / 1e3, RTT: ms(s.RTT), Uplink: ms(s.Uplink), Downlink: ms(s.Downlink),
		Jitter: ms(s.Jitter), Offset: float64(s.Offset) / 1e6, Bound: ms(s.Bound), Drift: float64(s.Drift),
		PredictedScale: float64(s.PredictedScale), ServerScale: float64(s.ServerScale), Lead: ms(s.Lead),
		Interp: ms(s.Interp), Loss: float64(s.Loss) / 1e3, Resets: int64(s.Resets)}
}

// Finite is x as a float32, with NaN and ±Inf (which JSON cannot carry)
// as 0.
func Finite(x float64) float32 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > math.MaxFloat32 {
		return 0
	}
	return float32(x)
}
