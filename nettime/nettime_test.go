package nettime

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ---------------------------------------------------------------------------
// math/big reference. It shares no code with the implementation: every
// quantity is computed exactly from the definitions in the package doc.

var (
	bigOne    = big.NewInt(1)
	bigE9     = big.NewInt(int64(time.Second))
	bigMaxDur = big.NewInt(int64(MaxDuration))
	bigMinDur = big.NewInt(-int64(MaxDuration))
	bigMaxI64 = big.NewInt(math.MaxInt64)
	bigMinI64 = big.NewInt(math.MinInt64)
)

// floorDiv returns floor(a/b) for b > 0. QuoRem truncates toward zero, so an
// inexact negative quotient comes out one too high.
func floorDiv(a, b *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(a, b, new(big.Int))
	if r.Sign() < 0 {
		q.Sub(q, bigOne)
	}
	return q
}

// ceilDiv returns ceil(a/b) for b > 0, as -floor(-a/b).
func ceilDiv(a, b *big.Int) *big.Int {
	q := floorDiv(new(big.Int).Neg(a), b)
	return q.Neg(q)
}

func bigRate(rate uint32) *big.Int { return new(big.Int).SetUint64(uint64(rate)) }

// refTick is floor(d*rate/1e9).
func refTick(d *big.Int, rate uint32) *big.Int {
	return floorDiv(new(big.Int).Mul(d, bigRate(rate)), bigE9)
}

// refStart is ceil(k*1e9/rate), the first nanosecond of tick k.
func refStart(k *big.Int, rate uint32) *big.Int {
	return ceilDiv(new(big.Int).Mul(k, bigE9), bigRate(rate))
}

func add(a, b *big.Int) *big.Int { return new(big.Int).Add(a, b) }
func sub(a, b *big.Int) *big.Int { return new(big.Int).Sub(a, b) }
func bi(x int64) *big.Int        { return big.NewInt(x) }

// clampBig saturates x to [lo, hi] and returns it as an int64.
func clampBig(x, lo, hi *big.Int) int64 {
	switch {
	case x.Cmp(hi) > 0:
		return hi.Int64()
	case x.Cmp(lo) < 0:
		return lo.Int64()
	}
	return x.Int64()
}

// refClamp saturates x to the accepted range.
func refClamp(x *big.Int) int64 { return clampBig(x, bigMinDur, bigMaxDur) }

// tickRange returns the first and last tick holding an accepted time.
func tickRange(rate uint32) (lo, hi int64) {
	return refTick(bigMinDur, rate).Int64(), refTick(bigMaxDur, rate).Int64()
}

// view gathers everything derived from one Time, so that a mismatch shows up
// as a single readable diff.
type view struct {
	Duration   time.Duration
	Rate       uint32
	Tick       int64
	TickOffset time.Duration
	FixedTime  time.Duration
	FixedDelta time.Duration
	ToFixed    Time
}

func viewOf(t Time) view {
	return view{
		Duration:   t.Duration(),
		Rate:       t.TickRate(),
		Tick:       t.Tick(),
		TickOffset: t.TickOffset(),
		FixedTime:  t.FixedTime(),
		FixedDelta: t.FixedDelta(),
		ToFixed:    t.ToFixed(),
	}
}

// refView is viewOf(New(rate, d)) computed from the definitions. ToFixed is
// the tick start saturated to the accepted range: the first tick at
// -MaxDuration starts before it, and a Time must stay in range.
func refView(rate uint32, d int64) view {
	k := refTick(bi(d), rate)
	start := refStart(k, rate)
	next := refStart(add(k, bigOne), rate)
	return view{
		Duration:   time.Duration(d),
		Rate:       rate,
		Tick:       k.Int64(),
		TickOffset: time.Duration(d - start.Int64()),
		FixedTime:  time.Duration(start.Int64()),
		FixedDelta: time.Duration(sub(next, start).Int64()),
		ToFixed:    Time{d: refClamp(start), rate: rate},
	}
}

// timeCmp lets cmp compare Times (unexported fields) and print them exactly.
var timeCmp = cmp.Comparer(func(a, b Time) bool { return a == b })

func rawString(t Time) string {
	return "Time{d: " + big.NewInt(t.d).String() + ", rate: " + big.NewInt(int64(t.rate)).String() + "}"
}

// ---------------------------------------------------------------------------
// Checks shared by the property tests and the fuzz targets. Each reports
// through tb and returns false on a mismatch.

func checkTime(tb testing.TB, rate uint32, d int64) bool {
	tb.Helper()
	tm := New(rate, time.Duration(d))
	ok := true
	got, want := viewOf(tm), refView(rate, d)
	if got != want {
		tb.Errorf("New(%d, %d) mismatch (-want +got):\n%s", rate, d, cmp.Diff(want, got, timeCmp))
		ok = false
	}
	if tm.IsZero() {
		tb.Errorf("New(%d, %d).IsZero() = true", rate, d)
		ok = false
	}
	lo := time.Second / time.Duration(rate)
	hi := lo
	if time.Second%time.Duration(rate) != 0 {
		hi++
	}
	if l := got.FixedDelta; l != lo && l != hi {
		tb.Errorf("New(%d, %d).FixedDelta() = %d, want %d or %d", rate, d, l, lo, hi)
		ok = false
	}
	if got.TickOffset < 0 || got.TickOffset >= got.FixedDelta {
		tb.Errorf("New(%d, %d): TickOffset %d outside [0, FixedDelta %d)", rate, d, got.TickOffset, got.FixedDelta)
		ok = false
	}
	if rt := FromTick(rate, tm.Tick(), tm.TickOffset()); rt != tm {
		tb.Errorf("FromTick(%d, Tick, TickOffset) of %d = %s, want it back", rate, d, rawString(rt))
		ok = false
	}
	if f := FromTick(rate, tm.Tick(), 0); f != got.ToFixed {
		tb.Errorf("New(%d, %d): ToFixed %s != FromTick(rate, Tick, 0) %s", rate, d, rawString(got.ToFixed), rawString(f))
		ok = false
	}
	// TickWithPartial is float64(tick) + fraction: allow a few ulps of the
	// larger of the tick and 1, since the fraction can cancel against -1.
	exact, _ := new(big.Rat).SetFrac(new(big.Int).Mul(bi(d), bigRate(rate)), bigE9).Float64()
	tol := 4 * math.Max(1, math.Abs(exact)) * 0x1p-52
	if p := tm.TickWithPartial(); math.Abs(p-exact) > tol {
		tb.Errorf("New(%d, %d).TickWithPartial() = %v, want %v ± %g", rate, d, p, exact, tol)
		ok = false
	}
	return ok
}

func checkAdd(tb testing.TB, rate uint32, d, dt int64) bool {
	tb.Helper()
	tm := New(rate, time.Duration(d))
	exact := add(bi(d), bi(dt))
	got, want := tm.Add(time.Duration(dt)), Time{d: refClamp(exact), rate: rate}
	if got != want {
		tb.Errorf("New(%d, %d).Add(%d) = %s, want %s", rate, d, dt, rawString(got), rawString(want))
		return false
	}
	if exact.Cmp(bigMaxDur) <= 0 && exact.Cmp(bigMinDur) >= 0 {
		if back := got.Sub(tm); back != time.Duration(dt) {
			tb.Errorf("New(%d, %d).Add(%d).Sub(start) = %d", rate, d, dt, back)
			return false
		}
	}
	return true
}

// checkSub checks Sub, Compare, Before and After of two times. Sub saturates
// at the int64 bounds, like time.Time.Sub: two accepted times can be almost
// 2*MaxDuration apart.
func checkSub(tb testing.TB, rate uint32, d, e int64) bool {
	tb.Helper()
	a, b := New(rate, time.Duration(d)), New(rate, time.Duration(e))
	diff := sub(bi(d), bi(e))
	ok := true
	if got, want := a.Sub(b), clampBig(diff, bigMinI64, bigMaxI64); int64(got) != want {
		tb.Errorf("New(%[1]d, %[2]d).Sub(New(%[1]d, %[3]d)) = %[4]d, want %[5]d", rate, d, e, got, want)
		ok = false
	}
	sign := diff.Sign()
	if a.Compare(b) != sign || b.Compare(a) != -sign || a.Compare(a) != 0 ||
		a.Before(b) != (sign < 0) || a.After(b) != (sign > 0) {
		tb.Errorf("ordering of %d and %d at %d Hz: Compare %d/%d Before %v After %v, want sign %d",
			d, e, rate, a.Compare(b), b.Compare(a), a.Before(b), a.After(b), sign)
		ok = false
	}
	if diff.IsInt64() {
		if got := b.Add(a.Sub(b)); got != a {
			tb.Errorf("b.Add(a.Sub(b)) = %s, want %s", rawString(got), rawString(a))
			ok = false
		}
	}
	return ok
}

func checkFromTick(tb testing.TB, rate uint32, k, off int64) bool {
	tb.Helper()
	got := FromTick(rate, k, time.Duration(off))
	want := Time{d: refClamp(add(refStart(bi(k), rate), bi(off))), rate: rate}
	if got != want {
		tb.Errorf("FromTick(%d, %d, %d) = %s, want %s", rate, k, off, rawString(got), rawString(want))
		return false
	}
	return true
}

// checkTicksAgo checks TicksAgo against its doc: same offset into tick
// Tick()-n, or that tick's last nanosecond if it is shorter; saturated.
func checkTicksAgo(tb testing.TB, rate uint32, d, n int64) bool {
	tb.Helper()
	tm := New(rate, time.Duration(d))
	got := tm.TicksAgo(n)
	k := refTick(bi(d), rate)
	off := sub(bi(d), refStart(k, rate))
	target := sub(k, bi(n))
	lo, hi := tickRange(rate)
	var want int64
	switch {
	case target.Cmp(bi(lo)) < 0:
		want = -int64(MaxDuration)
	case target.Cmp(bi(hi)) > 0:
		want = int64(MaxDuration)
	default:
		start := refStart(target, rate)
		last := sub(sub(refStart(add(target, bigOne), rate), start), bigOne)
		if off.Cmp(last) > 0 {
			off = last
		}
		want = refClamp(add(start, off))
		if got.Tick() != target.Int64() {
			tb.Errorf("New(%d, %d).TicksAgo(%d).Tick() = %d, want %d", rate, d, n, got.Tick(), target)
			return false
		}
	}
	if w := (Time{d: want, rate: rate}); got != w {
		tb.Errorf("New(%d, %d).TicksAgo(%d) = %s, want %s", rate, d, n, rawString(got), rawString(w))
		return false
	}
	return true
}

// ---------------------------------------------------------------------------
// Random inputs. A fixed seed keeps failures reproducible.

// fixedRates are always worth a look: the rates of the table tests, the
// extremes, a large prime, and 46924, one of the rates where a tick's start
// lands in [2^64-1, 2^64) ns and rounding it up used to wrap to 0.
var fixedRates = []uint32{1, 2, 3, 7, 20, 30, 60, 64, 128, 144, 46924, 999_983, MaxTickRate - 1, MaxTickRate}

func randRate(rng *rand.Rand) uint32 {
	switch rng.IntN(8) {
	case 0:
		return fixedRates[rng.IntN(len(fixedRates))]
	case 1, 2:
		return uint32(1 + rng.IntN(MaxTickRate))
	default:
		return uint32(1 + rng.IntN(10000))
	}
}

func randSign(rng *rand.Rand, x int64) int64 {
	if rng.IntN(2) == 0 {
		return -x
	}
	return x
}

// randAccepted is uniform over [-MaxDuration, MaxDuration].
func randAccepted(rng *rand.Rand) int64 {
	for {
		if d := int64(rng.Uint64()); d >= -int64(MaxDuration) && d <= int64(MaxDuration) {
			return d
		}
	}
}

// randDuration mixes the whole accepted range with the places where
// rounding goes wrong: near 0, near ±MaxDuration, and on tick boundaries.
func randDuration(rng *rand.Rand, rate uint32) int64 {
	lo, hi := tickRange(rate)
	for {
		var d *big.Int
		switch rng.IntN(8) {
		case 0, 1:
			return randAccepted(rng)
		case 2:
			return rng.Int64N(2001) - 1000
		case 3:
			return rng.Int64N(4e9+1) - 2e9
		case 4:
			return randSign(rng, int64(MaxDuration)-rng.Int64N(3e9))
		case 5, 6: // a boundary anywhere, or 1ns either side
			k := lo + rng.Int64N(hi-lo+1)
			d = add(refStart(bi(k), rate), bi(rng.Int64N(3)-1))
		case 7: // a boundary of the first, last or central ticks
			ks := []int64{lo, lo + 1, lo + 2, hi - 1, hi, hi + 1, -1, 0, 1, 2}
			d = add(refStart(bi(ks[rng.IntN(len(ks))]), rate), bi(rng.Int64N(3)-1))
		}
		if d.Cmp(bigMinDur) >= 0 && d.Cmp(bigMaxDur) <= 0 {
			return d.Int64()
		}
	}
}

// randTick favours ticks near where the start overflows int64 (and 2^64),
// which are out of range but accepted by FromTick and reached by TicksAgo.
func randTick(rng *rand.Rand, rate uint32) int64 {
	lo, hi := tickRange(rate)
	switch rng.IntN(6) {
	case 0, 1:
		return lo + rng.Int64N(hi-lo+1)
	case 2:
		return rng.Int64N(2001) - 1000
	case 3:
		return int64(rng.Uint64())
	case 4:
		edge := refTick(bigMaxI64, rate).Int64()
		return randSign(rng, edge+rng.Int64N(7)-3)
	default:
		two64 := new(big.Int).Lsh(bigOne, 64)
		edge := refTick(two64, rate).Int64()
		return randSign(rng, edge+rng.Int64N(7)-3)
	}
}

// randDelta is an arbitrary int64 offset, often big enough to saturate.
func randDelta(rng *rand.Rand) int64 {
	switch rng.IntN(6) {
	case 0:
		return int64(rng.Uint64())
	case 1:
		return rng.Int64N(4e9+1) - 2e9
	case 2:
		return []int64{math.MinInt64, math.MaxInt64, 0, -1, 1}[rng.IntN(5)]
	case 3:
		return randSign(rng, math.MaxInt64-rng.Int64N(3e9)) // across the whole range
	default:
		return randAccepted(rng)
	}
}

// tooMany stops a property test after the first few failing cases: one bug
// tends to fail thousands.
func tooMany(t *testing.T, fails *int, ok bool) {
	t.Helper()
	if !ok {
		if *fails++; *fails >= 10 {
			t.Fatal("stopping after 10 failing cases")
		}
	}
}

// ---------------------------------------------------------------------------
// Property tests.

func TestReferenceDivision(t *testing.T) {
	// The reference is only useful if its rounding of negatives is right.
	for _, c := range []struct{ a, b, floor, ceil int64 }{
		{7, 3, 2, 3}, {6, 3, 2, 2}, {-7, 3, -3, -2}, {-6, 3, -2, -2},
		{-1, 3, -1, 0}, {0, 3, 0, 0}, {1, 3, 0, 1}, {-1, 1e9, -1, 0},
	} {
		if f := floorDiv(bi(c.a), bi(c.b)).Int64(); f != c.floor {
			t.Errorf("floorDiv(%d, %d) = %d, want %d", c.a, c.b, f, c.floor)
		}
		if g := ceilDiv(bi(c.a), bi(c.b)).Int64(); g != c.ceil {
			t.Errorf("ceilDiv(%d, %d) = %d, want %d", c.a, c.b, g, c.ceil)
		}
	}
}

func TestPropertiesAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases, fails := 0, 0
	for range 1000 {
		rate := randRate(rng)
		for range 50 {
			d := randDuration(rng, rate)
			tooMany(t, &fails, checkTime(t, rate, d))
			tooMany(t, &fails, checkAdd(t, rate, d, randDelta(rng)))
			tooMany(t, &fails, checkSub(t, rate, d, randDuration(rng, rate)))
			tooMany(t, &fails, checkFromTick(t, rate, randTick(rng, rate), randDelta(rng)))
			tooMany(t, &fails, checkTicksAgo(t, rate, d, randTick(rng, rate)))
			tooMany(t, &fails, checkTicksAgo(t, rate, d, rng.Int64N(2001)-1000))
			cases++
		}
	}
	t.Logf("%d cases", cases)
}

// Many rates at the extremes of the range, around 0, and at the ticks whose
// starts leave int64 or reach 2^64-1 ns (where rounding up used to wrap):
// rate-specific rounding bugs are easy to miss with random rates.
func TestManyRatesAtEdges(t *testing.T) {
	two64m1 := sub(new(big.Int).Lsh(bigOne, 64), bigOne)
	fails, n := 0, 0
	step := uint32(1)
	for rate := uint32(1); rate <= MaxTickRate; rate += step {
		if rate == 20000 {
			step = 13 // every rate takes too long under -race
		}
		n++
		for _, d := range []int64{-int64(MaxDuration), int64(MaxDuration), -1} {
			got, want := New(rate, time.Duration(d)), refView(rate, d)
			if v := viewOf(got); v != want {
				t.Errorf("New(%d, %d) mismatch (-want +got):\n%s", rate, d, cmp.Diff(want, v, timeCmp))
				tooMany(t, &fails, false)
			}
		}
		br := bigRate(rate)
		kOver := ceilDiv(new(big.Int).Mul(bigMaxI64, br), bigE9).Int64()
		kWrap := ceilDiv(new(big.Int).Mul(two64m1, br), bigE9).Int64()
		for _, k := range []int64{kOver - 1, kOver, kWrap, -kOver, -kOver - 1} {
			tooMany(t, &fails, checkFromTick(t, rate, k, 0))
		}
	}
	t.Logf("%d rates", n)
}

func TestFixedDeltaSumsToSeconds(t *testing.T) {
	// The tick lengths within any second must add up to exactly 1s: the
	// point of rounding each start up rather than accumulating 1e9/rate.
	rng := rand.New(rand.NewPCG(5, 6))
	for range 50 {
		rate := uint32(1 + rng.IntN(1000))
		k := New(rate, time.Duration(randAccepted(rng)/2)).Tick()
		first := FromTick(rate, k, 0)
		sum := time.Duration(0)
		for i := range int64(rate) {
			sum += FromTick(rate, k+i, 0).FixedDelta()
		}
		if sum != time.Second {
			t.Errorf("rate %d from tick %d: %d ticks last %v, want 1s", rate, k, rate, sum)
		}
		if end := first.Add(sum); end.Tick() != k+int64(rate) || end.TickOffset() != 0 {
			t.Errorf("rate %d: a second after tick %d is %v, want tick %d", rate, k, end, k+int64(rate))
		}
	}
}

// ---------------------------------------------------------------------------
// Hand-checked tables at common tick rates.

func TestCommonRates(t *testing.T) {
	type want struct {
		Tick       int64
		TickOffset time.Duration
		FixedDelta time.Duration
	}
	const day = 24 * time.Hour
	tests := []struct {
		rate uint32
		d    time.Duration
		want want
	}{
		// 20 Hz: 50ms ticks exactly.
		{20, 0, want{0, 0, 50 * time.Millisecond}},
		{20, 49_999_999, want{0, 49_999_999, 50 * time.Millisecond}},
		{20, 50 * time.Millisecond, want{1, 0, 50 * time.Millisecond}},
		{20, time.Second, want{20, 0, 50 * time.Millisecond}},
		{20, -1, want{-1, 49_999_999, 50 * time.Millisecond}},
		{20, -50 * time.Millisecond, want{-1, 0, 50 * time.Millisecond}},
		{20, -50*time.Millisecond - 1, want{-2, 49_999_999, 50 * time.Millisecond}},

		// 30 Hz: starts 0, 33_333_334, 66_666_667, 100_000_000; ticks are
		// 33_333_334, 33_333_333, 33_333_333 long.
		{30, 33_333_333, want{0, 33_333_333, 33_333_334}},
		{30, 33_333_334, want{1, 0, 33_333_333}},
		{30, 66_666_667, want{2, 0, 33_333_333}},
		{30, 100 * time.Millisecond, want{3, 0, 33_333_334}},
		// NGO computed float(1s)*30 in float32 and got tick 29.
		{30, time.Second, want{30, 0, 33_333_334}},
		{30, time.Second - 1, want{29, 33_333_332, 33_333_333}}, // tick 29 starts at 966_666_667
		{30, 10 * time.Second, want{300, 0, 33_333_334}},
		// Negative: tick -1 starts at ceil(-33_333_333.3) = -33_333_333.
		{30, -1, want{-1, 33_333_332, 33_333_333}},
		{30, -33_333_333, want{-1, 0, 33_333_333}},
		{30, -33_333_334, want{-2, 33_333_332, 33_333_333}}, // tick -2 starts at -66_666_666
		{30, -100 * time.Millisecond, want{-3, 0, 33_333_334}},

		// 60 Hz: starts 0, 16_666_667, 33_333_334, 50_000_000.
		{60, 16_666_666, want{0, 16_666_666, 16_666_667}},
		{60, 16_666_667, want{1, 0, 16_666_667}},
		{60, 33_333_333, want{1, 16_666_666, 16_666_667}},
		{60, 33_333_334, want{2, 0, 16_666_666}},
		{60, 49_999_999, want{2, 16_666_665, 16_666_666}},
		{60, 50 * time.Millisecond, want{3, 0, 16_666_667}},
		{60, time.Second, want{60, 0, 16_666_667}},
		{60, time.Second + 5*time.Millisecond, want{60, 5 * time.Millisecond, 16_666_667}},
		{60, -1, want{-1, 16_666_665, 16_666_666}}, // tick -1 starts at -16_666_666
		{60, -16_666_666, want{-1, 0, 16_666_666}},
		{60, -16_666_667, want{-2, 16_666_666, 16_666_667}}, // tick -2 starts at -33_333_333
		{60, 30 * day, want{155_520_000, 0, 16_666_667}},
		{60, 30*day - 1, want{155_519_999, 16_666_665, 16_666_666}},

		// 64 Hz: 15.625ms ticks exactly.
		{64, 100 * time.Millisecond, want{6, 6_250_000, 15_625_000}},
		{64, time.Second, want{64, 0, 15_625_000}},
		{64, -1, want{-1, 15_624_999, 15_625_000}},
		{64, -15_625_001, want{-2, 15_624_999, 15_625_000}},

		// 128 Hz: 7.8125ms ticks exactly.
		{128, 7_812_499, want{0, 7_812_499, 7_812_500}},
		{128, 10 * time.Millisecond, want{1, 2_187_500, 7_812_500}},
		{128, time.Second, want{128, 0, 7_812_500}},
		{128, -7_812_500, want{-1, 0, 7_812_500}},
		{128, -7_812_501, want{-2, 7_812_499, 7_812_500}},
		{128, 30 * day, want{331_776_000, 0, 7_812_500}},

		// 144 Hz: tick k starts at ceil(k*62_500_000/9); ticks are 6_944_445
		// or 6_944_444 long; tick 8 starts at 55_555_556, tick 9 at 62.5ms.
		{144, 6_944_444, want{0, 6_944_444, 6_944_445}},
		{144, 6_944_445, want{1, 0, 6_944_444}},
		{144, 62_499_999, want{8, 6_944_443, 6_944_444}},
		{144, 62_500_000, want{9, 0, 6_944_445}},
		{144, time.Second, want{144, 0, 6_944_445}},
		{144, -1, want{-1, 6_944_443, 6_944_444}}, // tick -1 starts at -6_944_444
	}
	for _, tc := range tests {
		tm := New(tc.rate, tc.d)
		got := want{tm.Tick(), tm.TickOffset(), tm.FixedDelta()}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("New(%d, %d) (-want +got):\n%s", tc.rate, tc.d, diff)
		}
		if ft := tm.FixedTime(); ft != tc.d-tc.want.TickOffset {
			t.Errorf("New(%d, %d).FixedTime() = %d, want %d", tc.rate, tc.d, ft, tc.d-tc.want.TickOffset)
		}
		if ft := FromTick(tc.rate, tc.want.Tick, 0).Duration(); ft != tc.d-tc.want.TickOffset {
			t.Errorf("FromTick(%d, %d, 0) = %d, want %d", tc.rate, tc.want.Tick, ft, tc.d-tc.want.TickOffset)
		}
	}
}

func TestFromTickTable(t *testing.T) {
	tests := []struct {
		rate   uint32
		tick   int64
		offset time.Duration
		want   time.Duration
	}{
		{60, 1, 0, 16_666_667},
		{60, 3, 0, 50 * time.Millisecond},
		{60, -1, 0, -16_666_666},
		{60, 0, 16_666_667, 16_666_667}, // an offset past the tick normalizes
		{60, 1, -1, 16_666_666},
		{60, 60, 5 * time.Millisecond, time.Second + 5*time.Millisecond},
		{30, 30, 0, time.Second},
		{30, 1, 0, 33_333_334},
		{30, -2, 0, -66_666_666},
		{144, 1, 0, 6_944_445},
		{144, -9, 0, -62_500_000},
		{128, -1, -1, -7_812_501},
		{1, 5, 0, 5 * time.Second},
		{MaxTickRate, 1, 0, time.Microsecond},
		{MaxTickRate, -1, 1, -999},
	}
	for _, tc := range tests {
		if got := FromTick(tc.rate, tc.tick, tc.offset).Duration(); got != tc.want {
			t.Errorf("FromTick(%d, %d, %d) = %d, want %d", tc.rate, tc.tick, tc.offset, got, tc.want)
		}
	}
}

func TestTicksAgoTable(t *testing.T) {
	at := FromTick(60, 60, 5*time.Millisecond)
	lastOf0 := FromTick(60, 0, 16_666_666) // tick 0 is 16_666_667 long
	tests := []struct {
		name string
		t    Time
		n    int64
		want Time
	}{
		{"a second back", at, 60, New(60, 5*time.Millisecond)},
		{"forward", at, -1, FromTick(60, 61, 5*time.Millisecond)},
		{"zero", at, 0, at},
		{"into negative ticks", at, 61, FromTick(60, -1, 5*time.Millisecond)},
		// Tick 2 is one nanosecond shorter: land on its last nanosecond.
		{"shorter tick", lastOf0, -2, New(60, 49_999_999)},
		{"longer tick", FromTick(60, 2, 16_666_665), 2, New(60, 16_666_665)},
		{"saturate back", at, math.MaxInt64, New(60, -MaxDuration)},
		{"saturate forward", at, math.MinInt64, New(60, MaxDuration)},
		{"zero Time", Time{}, 5, Time{}},
	}
	for _, tc := range tests {
		if got := tc.t.TicksAgo(tc.n); got != tc.want {
			t.Errorf("%s: %v.TicksAgo(%d) = %v, want %v", tc.name, tc.t, tc.n, got, tc.want)
		}
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		t    Time
		want string
	}{
		{New(60, time.Second+5*time.Millisecond), "60+5ms@60Hz"},
		{New(60, -1), "-1+16.666665ms@60Hz"},
		{New(30, time.Second), "30+0s@30Hz"},
		{Time{}, "0+0s@0Hz"},
	}
	for _, tc := range tests {
		if got := tc.t.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestWithRate(t *testing.T) {
	a := New(60, time.Second+5*time.Millisecond)
	b := a.WithRate(128)
	if b.Duration() != a.Duration() || b.TickRate() != 128 || b.Tick() != 128 || b.TickOffset() != 5*time.Millisecond {
		t.Errorf("WithRate(128) of %v = %v", a, b)
	}
	if c := (Time{}).WithRate(60); c != New(60, 0) {
		t.Errorf("Time{}.WithRate(60) = %v", c)
	}
	mustPanic(t, "WithRate(0)", ErrInvalidRate, func() { a.WithRate(0) })
}

// ---------------------------------------------------------------------------
// Continuity: ticks tile the timeline, and a frame loop sees every tick once.

func TestTickBoundaryWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const session = 30 * 24 * time.Hour
	const window = 2000
	for _, rate := range []uint32{60, 128} {
		lo, hi := tickRange(rate)
		starts := []int64{lo, hi - window, -window / 2}
		for range 8 {
			starts = append(starts, New(rate, time.Duration(rng.Int64N(int64(session)))).Tick())
		}
		for _, k0 := range starts {
			walkBoundaries(t, rate, k0, k0+window)
		}
	}
}

// walkBoundaries checks ticks k0..k1 through FromTick. Ticks whose start is
// before -MaxDuration are clamped there, so the checks that need the true
// start skip them.
func walkBoundaries(t *testing.T, rate uint32, k0, k1 int64) {
	t.Helper()
	shortest := time.Second / time.Duration(rate)
	longest := shortest
	if time.Second%time.Duration(rate) != 0 {
		longest++
	}
	// period ticks span exactly span ns: the rounding pattern repeats.
	g := new(big.Int).GCD(nil, nil, bi(int64(rate)), bigE9).Int64()
	period, span := int64(rate)/g, time.Duration(int64(time.Second)/g)
	clamped := func(s Time) bool { return s.Duration() == -MaxDuration && s.TickOffset() != 0 }

	var prev Time
	fails := 0
	for k := k0; k <= k1; k++ {
		s := FromTick(rate, k, 0)
		ok := s.Tick() == k
		if !clamped(s) {
			ok = ok && s.TickOffset() == 0
			if s.Duration() > -MaxDuration {
				before := s.Add(-1)
				ok = ok && before.Tick() == k-1 && before.TickOffset() == before.FixedDelta()-1
			}
		}
		if end := s.Add(s.FixedDelta() - s.TickOffset() - 1); end.Tick() != k {
			ok = false
		}
		if k > k0 && !clamped(prev) {
			l := s.Sub(prev)
			ok = ok && l > 0 && (l == shortest || l == longest) && l == prev.FixedDelta()
		}
		if k-period >= k0 {
			if p := FromTick(rate, k-period, 0); !clamped(p) && s.Sub(p) != span {
				ok = false
			}
		}
		if !ok {
			t.Errorf("%d Hz tick %d: start %s, previous %s", rate, k, rawString(s), rawString(prev))
			if fails++; fails >= 5 {
				return
			}
		}
		prev = s
	}
}

func TestFrameWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const session = 30 * 24 * time.Hour
	const frames = 2000
	for _, rate := range []uint32{60, 128} {
		lo, _ := tickRange(rate)
		starts := []time.Duration{
			0,
			-time.Second,
			FromTick(rate, lo+2, 0).Duration() + time.Duration(rng.Int64N(int64(time.Second))),
			MaxDuration - frames*50*time.Millisecond - time.Second,
		}
		for range 6 {
			starts = append(starts, time.Duration(rng.Int64N(int64(session))))
		}
		for _, d0 := range starts {
			walkFrames(t, rng, rate, d0, frames)
		}
	}
}

// walkFrames runs a fixed-step game loop over frames of 1..50ms: each frame
// advances the clock by Add, then steps the simulation one FixedDelta at a
// time while a whole tick has passed. The simulated ticks must be exactly
// the ticks the clock entered, each once, in order.
func walkFrames(t *testing.T, rng *rand.Rand, rate uint32, d0 time.Duration, frames int) {
	t.Helper()
	clock := New(rate, d0)
	fixed := clock.ToFixed() // start of the last simulated tick
	lastSim := fixed.Tick()
	elapsed := time.Duration(0)
	for f := range frames {
		prevTick := clock.Tick()
		dt := time.Millisecond + time.Duration(rng.Int64N(int64(49*time.Millisecond)+1))
		clock = clock.Add(dt)
		elapsed += dt
		steps := int64(0)
		for clock.Sub(fixed) >= fixed.FixedDelta() {
			fixed = fixed.Add(fixed.FixedDelta())
			if sim := fixed.Tick(); sim != lastSim+1 {
				t.Fatalf("%d Hz frame %d: simulated tick %d after %d", rate, f, sim, lastSim)
			}
			lastSim++
			steps++
		}
		want := refTick(add(bi(int64(d0)), bi(int64(elapsed))), rate).Int64()
		if clock.Tick() != want || steps != want-prevTick || fixed != clock.ToFixed() {
			t.Fatalf("%d Hz frame %d at %s: tick %d (want %d), %d steps from tick %d, fixed %s",
				rate, f, rawString(clock), clock.Tick(), want, steps, prevTick, rawString(fixed))
		}
	}
	if got := clock.Sub(New(rate, d0)); got != elapsed {
		t.Errorf("%d Hz from %d: clock advanced %d, want %d", rate, d0, got, elapsed)
	}
}

// ---------------------------------------------------------------------------
// Saturation, the zero value and panics.

// mustPanic asserts that f panics; if sentinel is not nil, the panic value
// must be an error wrapping it.
func mustPanic(t *testing.T, name string, sentinel error, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s did not panic", name)
			return
		}
		if sentinel != nil {
			if err, ok := r.(error); !ok || !errors.Is(err, sentinel) {
				t.Errorf("%s panicked with %v, want an error wrapping %v", name, r, sentinel)
			}
		}
	}()
	f()
}

func TestSaturation(t *testing.T) {
	const r = 60
	lo, hi := tickRange(r)
	maxT, minT := New(r, MaxDuration), New(r, -MaxDuration)
	tests := []struct {
		name      string
		got, want Time
	}{
		{"New(MaxInt64)", New(r, math.MaxInt64), maxT},
		{"New(MinInt64)", New(r, math.MinInt64), minT},
		{"New(Max+1)", New(r, MaxDuration+1), maxT},
		{"New(-Max-1)", New(r, -MaxDuration-1), minT},
		{"Add past Max", maxT.Add(1), maxT},
		{"Add past -Max", minT.Add(-1), minT},
		{"Add(MaxInt64) at Max", maxT.Add(math.MaxInt64), maxT},
		{"Add(MinInt64) at -Max", minT.Add(math.MinInt64), minT},
		{"Add(MinInt64) at 0", New(r, 0).Add(math.MinInt64), minT},
		{"Add(MinInt64) at Max", maxT.Add(math.MinInt64), New(r, MaxDuration+math.MinInt64)},
		{"FromTick(MaxInt64)", FromTick(r, math.MaxInt64, 0), maxT},
		{"FromTick(MinInt64)", FromTick(r, math.MinInt64, 0), minT},
		{"FromTick(last+1)", FromTick(r, hi+1, 0), maxT},
		{"FromTick(first-1)", FromTick(r, lo-1, 0), minT},
		{"FromTick(first)", FromTick(r, lo, 0), minT}, // it starts before -Max
		{"FromTick offset MaxInt64", FromTick(r, 0, math.MaxInt64), maxT},
		{"FromTick offset MinInt64", FromTick(r, 0, math.MinInt64), minT},
		{"FromTick last, offset 1s", FromTick(r, hi, time.Second), maxT},
		{"TicksAgo(MaxInt64)", New(r, 0).TicksAgo(math.MaxInt64), minT},
		{"TicksAgo(MinInt64)", New(r, -1).TicksAgo(math.MinInt64), maxT},
		{"TicksAgo past first", New(r, 0).TicksAgo(-lo + 1), minT},
		{"ToFixed of first tick", minT.ToFixed(), minT},
		// Tick 865595018914747 at 46924 Hz starts in [2^64-1, 2^64) ns:
		// rounding that up must not wrap to 0.
		{"FromTick near 2^64 ns", FromTick(46924, 865595018914747, 0), New(46924, MaxDuration)},
		{"TicksAgo near 2^64 ns", New(46924, 0).TicksAgo(-865595018914747), New(46924, MaxDuration)},
		// A far tick brought back into range by a large offset is exact.
		// (9_223_372_037s does not fit in int64; 9_223_372_037s+MinInt64 does.)
		{"FromTick far tick, back in range", FromTick(1, 9_223_372_037, math.MinInt64), New(1, 145_224_192)},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s = %s, want %s", tc.name, rawString(tc.got), rawString(tc.want))
		}
	}
	if d := maxT.Sub(minT); d != math.MaxInt64 {
		t.Errorf("Max.Sub(-Max) = %d, want MaxInt64 (saturated)", d)
	}
	if d := minT.Sub(maxT); d != math.MinInt64 {
		t.Errorf("-Max.Sub(Max) = %d, want MinInt64 (saturated)", d)
	}
	// At -MaxDuration the first tick is partial: TicksAgo into it keeps the
	// offset when that is still in range. At 1 Hz the first tick starts at
	// -9223372036s, 145224193ns before -MaxDuration.
	first := FromTick(1, -9223372035, 200*time.Millisecond)
	if got, want := first.TicksAgo(1), New(1, -9223372036*time.Second+200*time.Millisecond); got != want {
		t.Errorf("TicksAgo into the first tick = %s, want %s", rawString(got), rawString(want))
	}
	if got := FromTick(1, -9223372035, 100*time.Millisecond).TicksAgo(1); got != New(1, -MaxDuration) {
		t.Errorf("TicksAgo before -MaxDuration = %s, want -MaxDuration", rawString(got))
	}
}

func TestZeroTime(t *testing.T) {
	type zeroView struct {
		Tick                                        int64
		Rate                                        uint32
		TickOffset, FixedDelta, FixedTime, Duration time.Duration
		Partial, Seconds                            float64
		IsZero                                      bool
	}
	var z Time
	got := zeroView{z.Tick(), z.TickRate(), z.TickOffset(), z.FixedDelta(), z.FixedTime(), z.Duration(), z.TickWithPartial(), z.Seconds(), z.IsZero()}
	want := zeroView{IsZero: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("zero Time (-want +got):\n%s", diff)
	}
	if z.ToFixed() != z || z.TicksAgo(3) != z || z.Add(time.Second) != z || z.Compare(z) != 0 || z.Sub(z) != 0 {
		t.Errorf("zero Time is not inert: ToFixed %v TicksAgo %v Add %v", z.ToFixed(), z.TicksAgo(3), z.Add(time.Second))
	}
	if New(1, 0).IsZero() {
		t.Error("New(1, 0).IsZero() = true: a rate makes a Time non-zero")
	}
}

func TestPanics(t *testing.T) {
	a, b := New(60, 0), New(30, 0)
	mustPanic(t, "New(0, 0)", ErrInvalidRate, func() { New(0, 0) })
	mustPanic(t, "New(MaxTickRate+1, 0)", ErrInvalidRate, func() { New(MaxTickRate+1, 0) })
	mustPanic(t, "New(MaxUint32, 0)", ErrInvalidRate, func() { New(math.MaxUint32, 0) })
	mustPanic(t, "FromTick(0, 1, 0)", ErrInvalidRate, func() { FromTick(0, 1, 0) })
	mustPanic(t, "FromTick(MaxTickRate+1, 1, 0)", ErrInvalidRate, func() { FromTick(MaxTickRate+1, 1, 0) })
	mustPanic(t, "Sub of 60 and 30 Hz", nil, func() { a.Sub(b) })
	mustPanic(t, "Compare of 60 and 30 Hz", nil, func() { a.Compare(b) })
	mustPanic(t, "Before of 60 and 30 Hz", nil, func() { a.Before(b) })
	mustPanic(t, "After of 60 and 30 Hz", nil, func() { a.After(b) })
	mustPanic(t, "Sub with the zero Time", nil, func() { a.Sub(Time{}) })
	mustPanic(t, "Compare with the zero Time", nil, func() { Time{}.Compare(a) })

	// The edges themselves are valid.
	New(1, 0)
	New(MaxTickRate, 0)
}

func TestValidateRate(t *testing.T) {
	for _, tc := range []struct {
		rate  uint32
		valid bool
	}{{0, false}, {1, true}, {60, true}, {MaxTickRate, true}, {MaxTickRate + 1, false}, {math.MaxUint32, false}} {
		err := ValidateRate(tc.rate)
		if (err == nil) != tc.valid || (err != nil && !errors.Is(err, ErrInvalidRate)) {
			t.Errorf("ValidateRate(%d) = %v, want valid=%v", tc.rate, err, tc.valid)
		}
	}
}

// ---------------------------------------------------------------------------
// Binary encoding.

func encode(rate uint32, d int64) []byte {
	b := []byte{1, byte(rate >> 24), byte(rate >> 16), byte(rate >> 8), byte(rate)}
	for i := 56; i >= 0; i -= 8 {
		b = append(b, byte(uint64(d)>>i))
	}
	return b
}

func TestBinaryRoundTrip(t *testing.T) {
	// The layout is a wire format: pin it byte for byte once.
	got, err := New(60, time.Second).MarshalBinary()
	want := []byte{1, 0, 0, 0, 60, 0, 0, 0, 0, 0x3b, 0x9a, 0xca, 0x00}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("MarshalBinary of 1s@60Hz = %x, %v; want %x", got, err, want)
	}
	for _, tm := range []Time{
		{},
		New(60, 0),
		New(60, -1),
		New(60, 30*24*time.Hour+123),
		New(1, MaxDuration),
		New(MaxTickRate, -MaxDuration),
		New(144, -time.Second),
		New(46924, 1<<40),
	} {
		b, err := tm.MarshalBinary()
		if err != nil || len(b) != 13 || !cmp.Equal(b, encode(tm.rate, tm.d)) {
			t.Errorf("MarshalBinary(%s) = %x, %v", rawString(tm), b, err)
			continue
		}
		prefix := []byte("xy")
		if ab, err := tm.AppendBinary(prefix); err != nil || string(ab[:2]) != "xy" || !cmp.Equal(ab[2:], b) {
			t.Errorf("AppendBinary(%s) = %x, %v", rawString(tm), ab, err)
		}
		got := New(7, 7) // decoding must overwrite, including to the zero Time
		if err := got.UnmarshalBinary(b); err != nil || got != tm {
			t.Errorf("UnmarshalBinary(MarshalBinary(%s)) = %s, %v", rawString(tm), rawString(got), err)
		}
	}
}

func TestUnmarshalBinaryRejects(t *testing.T) {
	valid := encode(60, 12345)
	wrongVersion := func(v byte) []byte { b := encode(60, 0); b[0] = v; return b }
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"nil", nil, ErrMalformed},
		{"empty", []byte{}, ErrMalformed},
		{"short", valid[:12], ErrMalformed},
		{"long", append(encode(60, 0), 0), ErrMalformed},
		{"version 0", wrongVersion(0), ErrMalformed},
		{"version 2", wrongVersion(2), ErrMalformed},
		{"version 255", wrongVersion(255), ErrMalformed},
		{"rate 0, d 1", encode(0, 1), ErrInvalidRate},
		{"rate 0, d -1", encode(0, -1), ErrInvalidRate},
		{"rate Max+1", encode(MaxTickRate+1, 0), ErrInvalidRate},
		{"rate MaxUint32", encode(math.MaxUint32, 5), ErrInvalidRate},
		{"d Max+1", encode(60, int64(MaxDuration)+1), ErrOutOfRange},
		{"d -Max-1", encode(60, -int64(MaxDuration)-1), ErrOutOfRange},
		{"d MaxInt64", encode(60, math.MaxInt64), ErrOutOfRange},
		{"d MinInt64", encode(1, math.MinInt64), ErrOutOfRange},
	}
	sentinels := []error{ErrMalformed, ErrInvalidRate, ErrOutOfRange}
	for _, tc := range tests {
		orig := New(60, 12345)
		got := orig
		err := got.UnmarshalBinary(tc.data)
		if err == nil {
			t.Errorf("%s: UnmarshalBinary(%x) succeeded with %s", tc.name, tc.data, rawString(got))
			continue
		}
		for _, s := range sentinels {
			if errors.Is(err, s) != (s == tc.want) {
				t.Errorf("%s: error %q: errors.Is(%q) = %v", tc.name, err, s, errors.Is(err, s))
			}
		}
		if !strings.HasPrefix(err.Error(), "nettime: ") {
			t.Errorf("%s: error %q lacks the package prefix", tc.name, err)
		}
		if got != orig {
			t.Errorf("%s: target changed to %s", tc.name, rawString(got))
		}
	}
}
