package netsim

import (
	"hash/fnv"
	"strconv"
	"testing"
	"time"
)

// profileFingerprint hashes every arrival time of both links, the clock
// readings and the frame durations of p over ten simulated minutes. It pins
// the named profiles' behaviour: a new feature of the format must not move
// a single nanosecond of an existing profile.
func profileFingerprint(t *testing.T, p Profile, seed uint64) uint64 {
	t.Helper()
	up, down, err := p.NewLinks(seed)
	if err != nil {
		t.Fatal(err)
	}
	cc, sc, err := p.NewClocks()
	if err != nil {
		t.Fatal(err)
	}
	fr, err := p.NewFrames(seed)
	if err != nil {
		t.Fatal(err)
	}
	h := fnv.New64a()
	var b []byte
	var buf []time.Duration
	for i := range 6000 {
		now := time.Duration(i) * 100 * ms
		for _, l := range []*Link{up, down} {
			buf = l.SendAppend(buf[:0], now)
			for _, a := range buf {
				b = strconv.AppendInt(b[:0], int64(a), 10)
				h.Write(append(b, ' '))
			}
			h.Write([]byte{'|'})
		}
		b = strconv.AppendInt(b[:0], int64(cc.Read(now)), 10)
		b = strconv.AppendInt(append(b, ','), int64(sc.Read(now)), 10)
		b = strconv.AppendInt(append(b, ','), int64(fr.Next()), 10)
		h.Write(append(b, ';'))
	}
	return h.Sum64()
}

// goldenFingerprints were recorded before the format was extended (ramps,
// periodic delays, bloat, flaps, suspend, wander, empirical jitter).
var goldenFingerprints = map[string]uint64{
	"lan":               0x33226f83085405c1,
	"fiber":             0x9ce5ef574c95946d,
	"cable":             0x2cce0ddb89d2363d,
	"dsl":               0x716f82224be70332,
	"broadband":         0xe12d814d312cbe54,
	"congested":         0xac7a57faeefe89e2,
	"wifi":              0x492221f27d7bb443,
	"mobile-5g":         0x2de62fc7b3362b97,
	"mobile-4g":         0x5e7545e7035120dc,
	"mobile-3g":         0xf8a82a7a94297b44,
	"mobile-2g":         0x311c4f97a5141c03,
	"leo-satellite":     0xa62b1674813c86af,
	"ue-average":        0x53c8a2d21b81f590,
	"ue-bad":            0x20720b41d7e4fb3c,
	"ue-bad-both":       0x7d96579d2efb0fe5,
	"asymmetric-jitter": 0x25f58d3da87b5969,
	"fixed-asymmetry":   0xc57a2b69b8dc4fd7,
	"latency-step":      0xe91e5f6d9d1cab26,
	"uplink-step":       0xbc6bb0fff1aa0db5,
	"outage-10s":        0x3e678589cde9864,
	"clock-jump":        0x4a380e6e229a2a4d,
	"clock-slew":        0x3333a771915856a5,
	"drift-500ppm":      0x3025cbb2b3d40848,
}

func TestNamedProfilesUnchanged(t *testing.T) {
	t.Parallel()
	for _, p := range Profiles() {
		got := profileFingerprint(t, p, 7)
		want, ok := goldenFingerprints[p.Name]
		if !ok {
			t.Errorf("%q: 0x%x,", p.Name, got)
			continue
		}
		if got != want {
			t.Errorf("profile %s: fingerprint 0x%x, want 0x%x: its links, clocks or frames changed", p.Name, got, want)
		}
	}
}
