package clocksync

// A young window's floor is not yet the path's. On a soft floor single
// samples keep coming in below it by more than the lowest samples'
// spacing says (a 5G uplink: the minimum of 100 samples sits 1.2 ms above
// the floor, of 600 0.75 ms), and in the first seconds by more than the
// few bins' wander allows the young rule (youngK). Taken for a path
// change, such a sample gives A the start's floor excess for good:
// random:188 seed 5, one uplink sample 1.06 ms below the floor 13.5 s in
// (tolerance 0.38 ms, eight wanders 0.78), left 0.8 ms of error for 20
// minutes. So in the first window a fall through fewer than settledBelow
// samples, no larger than loneFallK times the jitter's mean excess as the
// reference saw it, is followed as the young rule's falls are (in doubt,
// half of it in the bound). A path that did get shorter brings its
// samples below the old floor one after another: once settledBelow of the
// newest are below it, within recentWindow of the fall, the reference from
// before is put back and the fall judged against it as a change
// (random:13849, an uplink route 31 ms shorter 51 s in that came down in
// parts of a sample each: 3.7–5.6 ms p99 over five seeds without that,
// 0.12–0.25 with it, 0.06–0.20 before the lone rule).

// loneFallK times the reference's mean excess over a floor is how far a
// lone sample's fall may take it in the first window.
const loneFallK = 2

// loneFall is a lone sample's fall followed in the first window, with
// what following it changed, as it was before.
type loneFall struct {
	on       bool
	u        bool  // the uplink's floor fell (else the downlink's)
	at       int64 // client time it was followed
	ref      pathRef
	anchor   pathRef
	doubt    doubt
	youngErr int64
	asym     int64
	asymErr  int64
}

// undoLoneFall takes back a lone fall followed within recentWindow once
// settledBelow of the newest samples are below the reference from before
// it (by the tolerance, tolU or tolW): the path got shorter, or the clock
// moved. The reference, the anchor, the doubt, youngErr and A are put back
// as they were (A's error only grows), so that the fall is judged whole
// against them: a doubt left from following it counted the fall twice,
// and a 2.2 ms clock step in the first window, proved by the other side's
// rise, ended as the path (TestStepInTheFirstWindowIsAJump). A path
// change meanwhile does not end the watch: during a route's ramp the
// other side's floor moves too, and ending it there left random:13849
// 1.0–2.0 ms of error on four seeds.
func (e *Estimator) undoLoneFall(now, tolU, tolW int64) {
	l := &e.lone
	if now-l.at > recentWindow {
		l.on = false
		return
	}
	fu, fw := e.floorsAt(l.ref)
	rec := e.recent(now, fu-tolU, fw-tolW)
	below := rec.belowW
	if l.u {
		below = rec.belowU
	}
	if below >= settledBelow {
		e.ref, e.anchor, e.doubt, e.youngErr, l.on = l.ref, l.anchor, l.doubt, l.youngErr, false
		e.asym, e.asymErr = l.asym, max(e.asymErr, l.asymErr)
	}
}
