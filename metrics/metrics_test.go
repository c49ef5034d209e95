package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/transport"
)

var serverStats = transport.ServerStats{
	Clients: 3, StreamClients: 1, Accepted: 7, Refused: 2, Failed: 1, ALPNMismatches: 4,
	Pings: 1234, Malformed: 5, MessagesReceived: 100, MessagesSent: 200, MessagesDropped: 6,
	BytesSent: 1 << 40, BytesReceived: 12345,
}

const serverText = `
# HELP netclock_server_alpn_mismatches_total TLS handshakes failed because the client did not offer ALPN "netclock/1".
# TYPE netclock_server_alpn_mismatches_total counter
netclock_server_alpn_mismatches_total 4
# HELP netclock_server_clients Clients connected now (handshake done).
# TYPE netclock_server_clients gauge
netclock_server_clients 3
# HELP netclock_server_handshakes_total Handshakes by result: accepted; refused (version or tick rate mismatch, server full); failed (dropped before a valid hello).
# TYPE netclock_server_handshakes_total counter
netclock_server_handshakes_total{result="accepted"} 7
netclock_server_handshakes_total{result="failed"} 1
netclock_server_handshakes_total{result="refused"} 2
# HELP netclock_server_malformed_total Datagrams and frames dropped as malformed, messages included.
# TYPE netclock_server_malformed_total counter
netclock_server_malformed_total 5
# HELP netclock_server_messages_dropped_total Received user messages not delivered: no handler, or unreliable ones arriving faster than it returns.
# TYPE netclock_server_messages_dropped_total counter
netclock_server_messages_dropped_total 6
# HELP netclock_server_messages_received_total User messages received, reliable and unreliable.
# TYPE netclock_server_messages_received_total counter
netclock_server_messages_received_total 100
# HELP netclock_server_messages_sent_total User messages sent, reliable and unreliable.
# TYPE netclock_server_messages_sent_total counter
netclock_server_messages_sent_total 200
# HELP netclock_server_pings_total Pings answered.
# TYPE netclock_server_pings_total counter
netclock_server_pings_total 1234
# HELP netclock_server_received_bytes_total QUIC bytes received (UDP payloads) from every client served, connected or gone.
# TYPE netclock_server_received_bytes_total counter
netclock_server_received_bytes_total 12345
# HELP netclock_server_sent_bytes_total QUIC bytes sent (UDP payloads, retransmissions included) to every client served, connected or gone.
# TYPE netclock_server_sent_bytes_total counter
netclock_server_sent_bytes_total 1.099511627776e+12
# HELP netclock_server_stream_clients Connected clients that ping over the stream fallback because datagrams were not negotiated.
# TYPE netclock_server_stream_clients gauge
netclock_server_stream_clients 1
`

func TestServerCollector(t *testing.T) {
	calls := 0
	c := NewServerCollector(func() transport.ServerStats { calls++; return serverStats })
	if err := testutil.CollectAndCompare(c, strings.NewReader(serverText)); err != nil {
		t.Error(err)
	}
	if calls != 1 {
		t.Errorf("one scrape read the stats %d times, want once", calls)
	}
	lint(t, c)
}

var (
	clientStats = transport.ClientStats{
		Mode: transport.ModeDatagram,
		// The collector takes the estimate's values from the estimate:
		// these must not show.
		RTT: time.Hour, Offset: time.Hour, ErrorBound: time.Hour, Jitter: time.Hour, DriftPPM: 1e6,
		PredictedScale: 1.002, ServerScale: 0.999, Resets: 2,
		PingsSent: 500, PongsReceived: 480, Lost: 15, Duplicates: 3, Stale: 2, Malformed: 1, Stalled: 4,
		Rejected: 4, ClockJumps: 1, PathChanges: 2,
		QUICMinRTT: 20 * time.Millisecond, QUICSmoothedRTT: 25 * time.Millisecond,
		BytesSent: 65536, BytesReceived: 70000,
		Connected: true, Reconnects: 3, ReconnectFailures: 5, EpochChanges: 1, Reinitializations: 1,
		DriftAlarm: true, DriftAlarms: 2,
		MessagesSent: 10, MessagesReceived: 11, MessagesDropped: 12, MalformedMessages: 13,
	}
	clientEstimate = provider.Estimate{
		Valid: true, At: time.Minute, Offset: -1500 * time.Microsecond, DriftPPM: 12.5,
		Uplink: 30 * time.Millisecond, Downlink: 10 * time.Millisecond,
		Jitter: 2 * time.Millisecond, ErrorBound: 750 * time.Microsecond,
	}
)

// clientCounts is the exposition of clientStats' counts, whether synced or
// not.
const clientCounts = `
# HELP netclock_client_connected 1 while the client has a connection, else 0.
# TYPE netclock_client_connected gauge
netclock_client_connected 1
# HELP netclock_client_drift_alarm 1 while the drift's magnitude is above the configured alarm, else 0.
# TYPE netclock_client_drift_alarm gauge
netclock_client_drift_alarm 1
# HELP netclock_client_drift_alarms_total Times the drift's magnitude crossed above the configured alarm.
# TYPE netclock_client_drift_alarms_total counter
netclock_client_drift_alarms_total 2
# HELP netclock_client_epoch_changes_total Reconnects that found a restarted server (a new session epoch).
# TYPE netclock_client_epoch_changes_total counter
netclock_client_epoch_changes_total 1
# HELP netclock_client_estimator_events_total Steps the clock estimator detected, by event.
# TYPE netclock_client_estimator_events_total counter
netclock_client_estimator_events_total{event="clock_jump"} 1
netclock_client_estimator_events_total{event="path_change"} 2
# HELP netclock_client_ignored_pongs_total Pongs ignored, by reason: duplicate, stale (never sent or too old), malformed, stalled (its ping waited out a silence).
# TYPE netclock_client_ignored_pongs_total counter
netclock_client_ignored_pongs_total{reason="duplicate"} 3
netclock_client_ignored_pongs_total{reason="malformed"} 1
netclock_client_ignored_pongs_total{reason="stale"} 2
netclock_client_ignored_pongs_total{reason="stalled"} 4
# HELP netclock_client_info Always 1; the mode label says how pings travel.
# TYPE netclock_client_info gauge
netclock_client_info{mode="datagram"} 1
# HELP netclock_client_lost_pings Pings older than the newest answered one with no pong yet; decreases when a late pong arrives.
# TYPE netclock_client_lost_pings gauge
netclock_client_lost_pings 15
# HELP netclock_client_malformed_messages_total Received message datagrams and stream frames that were malformed.
# TYPE netclock_client_malformed_messages_total counter
netclock_client_malformed_messages_total 13
# HELP netclock_client_messages_dropped_total Received unreliable messages dropped because the handler fell behind.
# TYPE netclock_client_messages_dropped_total counter
netclock_client_messages_dropped_total 12
# HELP netclock_client_messages_received_total User messages received, reliable and unreliable.
# TYPE netclock_client_messages_received_total counter
netclock_client_messages_received_total 11
# HELP netclock_client_messages_sent_total User messages sent, reliable and unreliable.
# TYPE netclock_client_messages_sent_total counter
netclock_client_messages_sent_total 10
# HELP netclock_client_pings_sent_total Pings sent.
# TYPE netclock_client_pings_sent_total counter
netclock_client_pings_sent_total 500
# HELP netclock_client_pongs_received_total Pongs matched to a ping, duplicates excluded.
# TYPE netclock_client_pongs_received_total counter
netclock_client_pongs_received_total 480
# HELP netclock_client_quic_min_rtt_seconds quic-go's minimum RTT (from ACKs) on the current connection; absent while disconnected.
# TYPE netclock_client_quic_min_rtt_seconds gauge
netclock_client_quic_min_rtt_seconds 0.02
# HELP netclock_client_quic_smoothed_rtt_seconds quic-go's smoothed RTT (from ACKs) on the current connection; absent while disconnected.
# TYPE netclock_client_quic_smoothed_rtt_seconds gauge
netclock_client_quic_smoothed_rtt_seconds 0.025
# HELP netclock_client_received_bytes_total QUIC bytes received (UDP payloads) on all the client's connections.
# TYPE netclock_client_received_bytes_total counter
netclock_client_received_bytes_total 70000
# HELP netclock_client_reconnect_failures_total Redial attempts that failed.
# TYPE netclock_client_reconnect_failures_total counter
netclock_client_reconnect_failures_total 5
# HELP netclock_client_reconnects_total Connections re-established after a loss.
# TYPE netclock_client_reconnects_total counter
netclock_client_reconnects_total 3
# HELP netclock_client_reinitializations_total Tick system reinitializations after a restarted server.
# TYPE netclock_client_reinitializations_total counter
netclock_client_reinitializations_total 1
# HELP netclock_client_rejected_samples_total Samples the clock estimator rejected as impossible.
# TYPE netclock_client_rejected_samples_total counter
netclock_client_rejected_samples_total 4
# HELP netclock_client_resets_total Reset events of the client's tick system: hard resets, stalls, reinitializations.
# TYPE netclock_client_resets_total counter
netclock_client_resets_total 2
# HELP netclock_client_sent_bytes_total QUIC bytes sent (UDP payloads, retransmissions included) on all the client's connections.
# TYPE netclock_client_sent_bytes_total counter
netclock_client_sent_bytes_total 65536
# HELP netclock_client_time_scale_ratio How fast the timeline advanced relative to real time in the last frame; 1 is nominal.
# TYPE netclock_client_time_scale_ratio gauge
netclock_client_time_scale_ratio{timeline="predicted"} 1.002
netclock_client_time_scale_ratio{timeline="server"} 0.999
`

const clientSynced = `
# HELP netclock_client_drift_ratio How much faster the server clock runs than the client clock: rate ratio minus 1 (1e-6 is 1 ppm).
# TYPE netclock_client_drift_ratio gauge
netclock_client_drift_ratio 1.25e-05
# HELP netclock_client_error_bound_seconds Bound on the offset's error, excluding any fixed path asymmetry; absent while unknown.
# TYPE netclock_client_error_bound_seconds gauge
netclock_client_error_bound_seconds 0.00075
# HELP netclock_client_jitter_seconds Typical variation of the round-trip time.
# TYPE netclock_client_jitter_seconds gauge
netclock_client_jitter_seconds 0.002
# HELP netclock_client_offset_seconds Server clock minus client clock, estimated.
# TYPE netclock_client_offset_seconds gauge
netclock_client_offset_seconds -0.0015
# HELP netclock_client_one_way_delay_seconds Estimated one-way delay: up is client to server, down is server to client. Only their sum is observable.
# TYPE netclock_client_one_way_delay_seconds gauge
netclock_client_one_way_delay_seconds{direction="down"} 0.01
netclock_client_one_way_delay_seconds{direction="up"} 0.03
# HELP netclock_client_rtt_seconds Estimated round-trip time, the sum of the one-way delays.
# TYPE netclock_client_rtt_seconds gauge
netclock_client_rtt_seconds 0.04
# HELP netclock_client_synced 1 once the client's clock estimate is valid, else 0.
# TYPE netclock_client_synced gauge
netclock_client_synced 1
`

const clientUnsynced = `
# HELP netclock_client_synced 1 once the client's clock estimate is valid, else 0.
# TYPE netclock_client_synced gauge
netclock_client_synced 0
`

func TestClientCollector(t *testing.T) {
	stats, est := 0, 0
	c := NewClientCollector(
		func() transport.ClientStats { stats++; return clientStats },
		func() provider.Estimate { est++; return clientEstimate })
	if err := testutil.CollectAndCompare(c, strings.NewReader(clientCounts+clientSynced)); err != nil {
		t.Error(err)
	}
	if stats != 1 || est != 1 {
		t.Errorf("one scrape read the stats %d times and the estimate %d times, want once each", stats, est)
	}
	lint(t, c)
}

// TestClientCollectorAbsent: series whose value means nothing now are
// absent rather than 0.
func TestClientCollectorAbsent(t *testing.T) {
	unsynced := clientEstimate
	unsynced.Valid = false
	c := NewClientCollector(func() transport.ClientStats { return clientStats },
		func() provider.Estimate { return unsynced })
	if err := testutil.CollectAndCompare(c, strings.NewReader(clientCounts+clientUnsynced)); err != nil {
		t.Errorf("unsynced: %v", err)
	}

	unknownBound := clientEstimate
	unknownBound.ErrorBound = 0
	c = NewClientCollector(func() transport.ClientStats { return clientStats },
		func() provider.Estimate { return unknownBound })
	if n := testutil.CollectAndCount(c, "netclock_client_error_bound_seconds"); n != 0 {
		t.Errorf("unknown bound: %d error bound series, want none", n)
	}
	if n := testutil.CollectAndCount(c, "netclock_client_offset_seconds"); n != 1 {
		t.Errorf("unknown bound: %d offset series, want 1", n)
	}

	// Disconnected before the first handshake: no mode, no QUIC RTT.
	c = NewClientCollector(func() transport.ClientStats { return transport.ClientStats{} },
		func() provider.Estimate { return provider.Estimate{} })
	for _, name := range []string{"netclock_client_info", "netclock_client_quic_min_rtt_seconds",
		"netclock_client_quic_smoothed_rtt_seconds", "netclock_client_rtt_seconds"} {
		if n := testutil.CollectAndCount(c, name); n != 0 {
			t.Errorf("zero stats: %d series of %s, want none", n, name)
		}
	}
	if got := testutil.ToFloat64(collectorOf(c, "netclock_client_connected")); got != 0 {
		t.Errorf("zero stats: connected = %v, want 0", got)
	}

	stream := clientStats
	stream.Mode = transport.ModeStream
	c = NewClientCollector(func() transport.ClientStats { return stream },
		func() provider.Estimate { return clientEstimate })
	want := `
# HELP netclock_client_info Always 1; the mode label says how pings travel.
# TYPE netclock_client_info gauge
netclock_client_info{mode="stream"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "netclock_client_info"); err != nil {
		t.Errorf("stream mode: %v", err)
	}
}

// collectorOf narrows c to the one metric named name, for ToFloat64.
func collectorOf(c prometheus.Collector, name string) prometheus.Collector {
	return filtered{c, name}
}

type filtered struct {
	prometheus.Collector
	name string
}

func (f filtered) Collect(ch chan<- prometheus.Metric) {
	all := make(chan prometheus.Metric)
	go func() { f.Collector.Collect(all); close(all) }()
	for m := range all {
		if strings.Contains(m.Desc().String(), `fqName: "`+f.name+`"`) {
			ch <- m
		}
	}
}

// TestRegister: the collectors are checked collectors (Describe lists
// every family once), two of them register side by side under a
// distinguishing label, and without one the registry refuses the second.
func TestRegister(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	newClient := func() prometheus.Collector {
		return NewClientCollector(func() transport.ClientStats { return clientStats },
			func() provider.Estimate { return clientEstimate })
	}
	reg.MustRegister(NewServerCollector(func() transport.ServerStats { return serverStats }))
	for _, name := range []string{"alice", "bob"} {
		if err := prometheus.WrapRegistererWith(prometheus.Labels{"player": name}, reg).Register(newClient()); err != nil {
			t.Fatalf("registering %s: %v", name, err)
		}
	}
	var are prometheus.AlreadyRegisteredError
	if err := prometheus.WrapRegistererWith(prometheus.Labels{"player": "bob"}, reg).Register(newClient()); !errors.As(err, &are) {
		t.Errorf("registering bob twice: %v, want AlreadyRegisteredError", err)
	}

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err) // the pedantic registry checks Describe against Collect
	}
	var offsets []string
	for _, mf := range mfs {
		if mf.GetName() == "netclock_client_offset_seconds" {
			for _, m := range mf.GetMetric() {
				offsets = append(offsets, m.GetLabel()[0].GetValue())
			}
		}
	}
	if diff := cmp.Diff([]string{"alice", "bob"}, offsets); diff != "" {
		t.Errorf("players with an offset (-want +got):\n%s", diff)
	}
	server := testutil.CollectAndCount(NewServerCollector(func() transport.ServerStats { return serverStats }))
	client := testutil.CollectAndCount(newClient())
	if n, err := testutil.GatherAndCount(reg); err != nil || n != server+2*client {
		t.Errorf("gathered %d series, %v; want %d", n, err, server+2*client)
	}
	if server != 13 || client != 37 {
		t.Errorf("a server has %d series and a synced client %d, want 13 and 37", server, client)
	}
}

// lint fails on any metric the Prometheus linter objects to: names, units,
// _total suffixes, help text.
func lint(t *testing.T, c prometheus.Collector) {
	t.Helper()
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}
