package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netclock/netclock/provider"
	"github.com/netclock/netclock/transport"
)

// clientSnapshot is what one scrape of a client reads.
type clientSnapshot struct {
	st  transport.ClientStats
	est provider.Estimate
}

// NewClientCollector returns a collector of a client's clock estimate and
// counts, read by calling stats and estimate (usually a transport.Client's
// Stats and Estimate methods) once per scrape.
//
// The estimate's series, but for netclock_client_synced, are absent until
// the client is synced (before, their values mean nothing), and the error
// bound's also while it is unknown:
//
//	netclock_client_synced                              gauge    1 once the clock estimate is valid, else 0
//	netclock_client_offset_seconds                      gauge    server clock minus client clock
//	netclock_client_error_bound_seconds                 gauge    bound on the offset's error, path asymmetry excluded
//	netclock_client_drift_ratio                         gauge    server clock rate / client clock rate − 1 (1e-6 is 1 ppm)
//	netclock_client_rtt_seconds                         gauge    estimated round trip, the sum of the one-way delays
//	netclock_client_one_way_delay_seconds{direction}    gauge    estimated delay "up" (client→server) and "down"
//	netclock_client_jitter_seconds                      gauge    typical variation of the round trip
//
// The connection and its counts, present unless noted:
//
//	netclock_client_connected                           gauge    1 while the client has a connection
//	netclock_client_info{mode}                          gauge    1, with how pings travel: "datagram" or "stream" (once connected)
//	netclock_client_time_scale_ratio{timeline}          gauge    rate of the "predicted" and "server" timelines against real time in the last frame (1 is nominal)
//	netclock_client_resets_total                        counter  the System's reset events (hard resets, stalls, reinitializations)
//	netclock_client_estimator_events_total{event}       counter  steps the estimator detected: "clock_jump", "path_change"
//	netclock_client_pings_sent_total                    counter  pings sent
//	netclock_client_pongs_received_total                counter  pongs matched to a ping
//	netclock_client_lost_pings                          gauge    pings without a pong (yet); goes down when a late pong arrives
//	netclock_client_ignored_pongs_total{reason}         counter  pongs ignored: "duplicate", "stale", "malformed"
//	netclock_client_rejected_samples_total              counter  samples the estimator rejected as impossible
//	netclock_client_quic_min_rtt_seconds                gauge    quic-go's minimum RTT on the current connection (while connected)
//	netclock_client_quic_smoothed_rtt_seconds           gauge    quic-go's smoothed RTT on the current connection (while connected)
//	netclock_client_sent_bytes_total                    counter  QUIC bytes sent, all connections
//	netclock_client_received_bytes_total                counter  QUIC bytes received, all connections
//	netclock_client_reconnects_total                    counter  connections re-established after a loss
//	netclock_client_reconnect_failures_total            counter  redial attempts that failed
//	netclock_client_epoch_changes_total                 counter  reconnects that found a restarted server
//	netclock_client_reinitializations_total             counter  System reinitializations after those
//	netclock_client_drift_alarm                         gauge    1 while |drift| is above the configured alarm
//	netclock_client_drift_alarms_total                  counter  times |drift| crossed above the alarm
//	netclock_client_messages_sent_total                 counter  user messages sent, both kinds
//	netclock_client_messages_received_total             counter  user messages received, both kinds
//	netclock_client_messages_dropped_total              counter  received unreliable messages dropped
//	netclock_client_malformed_messages_total            counter  received message datagrams and frames that were malformed
func NewClientCollector(stats func() transport.ClientStats, estimate func() provider.Estimate) prometheus.Collector {
	c := &collector[clientSnapshot]{snapshot: func() clientSnapshot {
		return clientSnapshot{st: stats(), est: estimate()}
	}}
	type sn = clientSnapshot
	gauge, counter := prometheus.GaugeValue, prometheus.CounterValue
	const sub = "client"
	count := func(v func(s sn) int64) func(sn) (float64, bool) {
		return always(func(s sn) float64 { return float64(v(s)) })
	}
	synced := func(v func(e provider.Estimate) time.Duration) func(sn) (float64, bool) {
		return func(s sn) (float64, bool) { return v(s.est).Seconds(), s.est.Valid }
	}

	c.family(sub, "synced", "1 once the client's clock estimate is valid, else 0.", gauge).
		add(always(func(s sn) float64 { return boolValue(s.est.Valid) }))
	c.family(sub, "offset_seconds", "Server clock minus client clock, estimated.", gauge).
		add(synced(func(e provider.Estimate) time.Duration { return e.Offset }))
	c.family(sub, "error_bound_seconds", "Bound on the offset's error, excluding any fixed path asymmetry; absent while unknown.", gauge).
		add(func(s sn) (float64, bool) {
			return s.est.ErrorBound.Seconds(), s.est.Valid && s.est.ErrorBound > 0
		})
	c.family(sub, "drift_ratio", "How much faster the server clock runs than the client clock: rate ratio minus 1 (1e-6 is 1 ppm).", gauge).
		add(func(s sn) (float64, bool) { return s.est.DriftPPM / 1e6, s.est.Valid })
	c.family(sub, "rtt_seconds", "Estimated round-trip time, the sum of the one-way delays.", gauge).
		add(synced(provider.Estimate.RTT))
	c.family(sub, "one_way_delay_seconds", "Estimated one-way delay: up is client to server, down is server to client. Only their sum is observable.", gauge, "direction").
		add(synced(func(e provider.Estimate) time.Duration { return e.Uplink }), "up").
		add(synced(func(e provider.Estimate) time.Duration { return e.Downlink }), "down")
	c.family(sub, "jitter_seconds", "Typical variation of the round-trip time.", gauge).
		add(synced(func(e provider.Estimate) time.Duration { return e.Jitter }))

	c.family(sub, "connected", "1 while the client has a connection, else 0.", gauge).
		add(always(func(s sn) float64 { return boolValue(s.st.Connected) }))
	info := c.family(sub, "info", "Always 1; the mode label says how pings travel.", gauge, "mode")
	for _, m := range []transport.Mode{transport.ModeDatagram, transport.ModeStream} {
		info.add(func(s sn) (float64, bool) { return 1, s.st.Mode == m }, m.String())
	}
	c.family(sub, "time_scale_ratio", "How fast the timeline advanced relative to real time in the last frame; 1 is nominal.", gauge, "timeline").
		add(always(func(s sn) float64 { return s.st.PredictedScale }), "predicted").
		add(always(func(s sn) float64 { return s.st.ServerScale }), "server")
	c.family(sub, "resets_total", "Reset events of the client's tick system: hard resets, stalls, reinitializations.", counter).
		add(count(func(s sn) int64 { return s.st.Resets }))
	c.family(sub, "estimator_events_total", "Steps the clock estimator detected, by event.", counter, "event").
		add(count(func(s sn) int64 { return s.st.ClockJumps }), "clock_jump").
		add(count(func(s sn) int64 { return s.st.PathChanges }), "path_change")
	c.family(sub, "pings_sent_total", "Pings sent.", counter).
		add(count(func(s sn) int64 { return s.st.PingsSent }))
	c.family(sub, "pongs_received_total", "Pongs matched to a ping, duplicates excluded.", counter).
		add(count(func(s sn) int64 { return s.st.PongsReceived }))
	c.family(sub, "lost_pings", "Pings older than the newest answered one with no pong yet; decreases when a late pong arrives.", gauge).
		add(count(func(s sn) int64 { return s.st.Lost }))
	c.family(sub, "ignored_pongs_total", "Pongs ignored, by reason: duplicate, stale (never sent or too old), malformed, stalled (its ping waited out a silence).", counter, "reason").
		add(count(func(s sn) int64 { return s.st.Duplicates }), "duplicate").
		add(count(func(s sn) int64 { return s.st.Stale }), "stale").
		add(count(func(s sn) int64 { return s.st.Malformed }), "malformed").
		add(count(func(s sn) int64 { return s.st.Stalled }), "stalled")
	c.family(sub, "rejected_samples_total", "Samples the clock estimator rejected as impossible.", counter).
		add(count(func(s sn) int64 { return s.st.Rejected }))
	c.family(sub, "quic_min_rtt_seconds", "quic-go's minimum RTT (from ACKs) on the current connection; absent while disconnected.", gauge).
		add(func(s sn) (float64, bool) { return s.st.QUICMinRTT.Seconds(), s.st.Connected })
	c.family(sub, "quic_smoothed_rtt_seconds", "quic-go's smoothed RTT (from ACKs) on the current connection; absent while disconnected.", gauge).
		add(func(s sn) (float64, bool) { return s.st.QUICSmoothedRTT.Seconds(), s.st.Connected })
	c.family(sub, "sent_bytes_total", "QUIC bytes sent (UDP payloads, retransmissions included) on all the client's connections.", counter).
		add(always(func(s sn) float64 { return float64(s.st.BytesSent) }))
	c.family(sub, "received_bytes_total", "QUIC bytes received (UDP payloads) on all the client's connections.", counter).
		add(always(func(s sn) float64 { return float64(s.st.BytesReceived) }))
	c.family(sub, "reconnects_total", "Connections re-established after a loss.", counter).
		add(count(func(s sn) int64 { return s.st.Reconnects }))
	c.family(sub, "reconnect_failures_total", "Redial attempts that failed.", counter).
		add(count(func(s sn) int64 { return s.st.ReconnectFailures }))
	c.family(sub, "epoch_changes_total", "Reconnects that found a restarted server (a new session epoch).", counter).
		add(count(func(s sn) int64 { return s.st.EpochChanges }))
	c.family(sub, "reinitializations_total", "Tick system reinitializations after a restarted server.", counter).
		add(count(func(s sn) int64 { return s.st.Reinitializations }))
	c.family(sub, "drift_alarm", "1 while the drift's magnitude is above the configured alarm, else 0.", gauge).
		add(always(func(s sn) float64 { return boolValue(s.st.DriftAlarm) }))
	c.family(sub, "drift_alarms_total", "Times the drift's magnitude crossed above the configured alarm.", counter).
		add(count(func(s sn) int64 { return s.st.DriftAlarms }))
	c.family(sub, "messages_sent_total", "User messages sent, reliable and unreliable.", counter).
		add(count(func(s sn) int64 { return s.st.MessagesSent }))
	c.family(sub, "messages_received_total", "User messages received, reliable and unreliable.", counter).
		add(count(func(s sn) int64 { return s.st.MessagesReceived }))
	c.family(sub, "messages_dropped_total", "Received unreliable messages dropped because the handler fell behind.", counter).
		add(count(func(s sn) int64 { return s.st.MessagesDropped }))
	c.family(sub, "malformed_messages_total", "Received message datagrams and stream frames that were malformed.", counter).
		add(count(func(s sn) int64 { return s.st.MalformedMessages }))
	return c
}
