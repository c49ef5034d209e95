package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/netclock/netclock/transport"
)

// NewServerCollector returns a collector of a server's counts, read by
// calling stats (usually a transport.Server's Stats method) once per
// scrape. Its metrics:
//
//	netclock_server_clients                    gauge    clients connected now (handshake done)
//	netclock_server_stream_clients             gauge    of those, clients pinging over the stream fallback
//	netclock_server_handshakes_total{result}   counter  handshakes by result: accepted, refused, failed
//	netclock_server_alpn_mismatches_total      counter  TLS handshakes failed for want of ALPN "netclock/1"
//	netclock_server_pings_total                counter  pings answered
//	netclock_server_malformed_total            counter  datagrams and frames dropped as malformed
//	netclock_server_messages_received_total    counter  user messages received, both kinds
//	netclock_server_messages_sent_total        counter  user messages sent, both kinds
//	netclock_server_messages_dropped_total     counter  received user messages not delivered
//	netclock_server_sent_bytes_total           counter  QUIC bytes sent (UDP payloads) to every client served
//	netclock_server_received_bytes_total       counter  QUIC bytes received from every client served
func NewServerCollector(stats func() transport.ServerStats) prometheus.Collector {
	c := &collector[transport.ServerStats]{snapshot: stats}
	type st = transport.ServerStats
	gauge, counter := prometheus.GaugeValue, prometheus.CounterValue
	const sub = "server"

	c.family(sub, "clients", "Clients connected now (handshake done).", gauge).
		add(always(func(s st) float64 { return float64(s.Clients) }))
	c.family(sub, "stream_clients", "Connected clients that ping over the stream fallback because datagrams were not negotiated.", gauge).
		add(always(func(s st) float64 { return float64(s.StreamClients) }))
	c.family(sub, "handshakes_total", "Handshakes by result: accepted; refused (version or tick rate mismatch, server full); failed (dropped before a valid hello).", counter, "result").
		add(always(func(s st) float64 { return float64(s.Accepted) }), "accepted").
		add(always(func(s st) float64 { return float64(s.Refused) }), "refused").
		add(always(func(s st) float64 { return float64(s.Failed) }), "failed")
	c.family(sub, "alpn_mismatches_total", `TLS handshakes failed because the client did not offer ALPN "netclock/1".`, counter).
		add(always(func(s st) float64 { return float64(s.ALPNMismatches) }))
	c.family(sub, "pings_total", "Pings answered.", counter).
		add(always(func(s st) float64 { return float64(s.Pings) }))
	c.family(sub, "malformed_total", "Datagrams and frames dropped as malformed, messages included.", counter).
		add(always(func(s st) float64 { return float64(s.Malformed) }))
	c.family(sub, "messages_received_total", "User messages received, reliable and unreliable.", counter).
		add(always(func(s st) float64 { return float64(s.MessagesReceived) }))
	c.family(sub, "messages_sent_total", "User messages sent, reliable and unreliable.", counter).
		add(always(func(s st) float64 { return float64(s.MessagesSent) }))
	c.family(sub, "messages_dropped_total", "Received user messages not delivered: no handler, or unreliable ones arriving faster than it returns.", counter).
		add(always(func(s st) float64 { return float64(s.MessagesDropped) }))
	c.family(sub, "sent_bytes_total", "QUIC bytes sent (UDP payloads, retransmissions included) to every client served, connected or gone.", counter).
		add(always(func(s st) float64 { return float64(s.BytesSent) }))
	c.family(sub, "received_bytes_total", "QUIC bytes received (UDP payloads) from every client served, connected or gone.", counter).
		add(always(func(s st) float64 { return float64(s.BytesReceived) }))
	return c
}
