package transport

import (
	"fmt"
	"net/http"
	"time"

	"github.com/netclock/netclock/internal/debugpage"
)

// DebugHandler returns the client's live view: Server.DebugHandler's page
// for this client alone, from its own estimate (19,200 bytes of history).
func (c *Client) DebugHandler() http.Handler { return debugpage.Handler(c.debugPage) }

// debugPage is the client's JSON document.
func (c *Client) debugPage() debugpage.Page {
	st := c.Stats()
	sess := c.Session()
	now := c.clock()
	c.mu.Lock()
	samples := c.history.AppendTo(make([]debugpage.Sample, 0, c.history.Len()))
	last, _ := c.history.Last()
	events := c.events.List()
	state := c.est.State()
	c.mu.Unlock()
	self := debugpage.Client{Remote: c.addr.String(), Mode: st.Mode.String(), Reporting: true,
		Connected: time.Since(c.started).Seconds(), Pings: st.PingsSent, Missed: st.Lost, Synchronized: st.Synchronized,
		Quality: st.Quality.String(), State: state.String(), Last: last.Point(),
		History: debugpage.SeriesOf(samples), Events: events}
	return debugpage.Page{Role: "client", Now: now.Seconds(), TickRate: sess.TickRate,
		Epoch: fmt.Sprintf("%016x", sess.Epoch), Clients: []debugpage.Client{self},
		Summary: []debugpage.Field{
			{Name: "connected", Value: fmt.Sprint(st.Connected)},
			{Name: "synchronized", Value: fmt.Sprint(st.Synchronized)},
			{Name: "pings/pongs", Value: fmt.Sprintf("%d/%d", st.PingsSent, st.PongsReceived)},
			{Name: "lost", Value: fmt.Sprint(st.Lost)},
			{Name: "QUIC RTT", Value: st.QUICSmoothedRTT.Round(10 * time.Microsecond).String()},
			{Name: "reconnects", Value: fmt.Sprint(st.Reconnects)},
		}}
}
