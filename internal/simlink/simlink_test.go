package simlink_test

import (
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go/testutils/simnet"

	"github.com/netclock/netclock/internal/simlink"
	"github.com/netclock/netclock/netsim"
)

// TestDelaysEachDirectionByItsLink: a datagram from the client arrives
// after the uplink's delay, one from the server after the downlink's, in
// virtual time.
func TestDelaysEachDirectionByItsLink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := &net.UDPAddr{IP: net.ParseIP("1.0.0.1"), Port: 9001}
		server := &net.UDPAddr{IP: net.ParseIP("1.0.0.2"), Port: 9002}
		up, err := netsim.NewLink(netsim.LinkSpec{Base: 10 * time.Millisecond}, netsim.DirUp, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		down, err := netsim.NewLink(netsim.LinkSpec{Base: 25 * time.Millisecond}, netsim.DirDown, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		sn := &simnet.Simnet{Router: simlink.New(client, up, down)}
		cconn := sn.NewEndpoint(client, simnet.NodeBiDiLinkSettings{})
		sconn := sn.NewEndpoint(server, simnet.NodeBiDiLinkSettings{})
		if err := sn.Start(); err != nil {
			t.Fatal(err)
		}
		defer sn.Close()
		for _, tc := range []struct {
			name     string
			from, to net.PacketConn
			toAddr   net.Addr
			want     time.Duration
		}{
			{"uplink", cconn, sconn, server, 10 * time.Millisecond},
			{"downlink", sconn, cconn, client, 25 * time.Millisecond},
		} {
			sent := time.Now()
			if _, err := tc.from.WriteTo([]byte(tc.name), tc.toAddr); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 64)
			n, _, err := tc.to.ReadFrom(buf)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(buf[:n]); got != tc.name {
				t.Errorf("%s: received %q", tc.name, got)
			}
			if got := time.Since(sent); got != tc.want {
				t.Errorf("%s: arrived after %v, want %v", tc.name, got, tc.want)
			}
		}
	})
}
