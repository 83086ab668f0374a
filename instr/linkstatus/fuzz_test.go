package linkstatus

import (
	"testing"
	"time"

	"github.com/percause/percause/instr/semconv"
)

// FuzzDiagnose: whatever the probes read, the line is exactly one known
// status with its registered message, the tailnet advice appears only with
// "cannot be reached", and a lane is never called saturated unless the engine
// answered somewhere, nor a connection stale unless a fresh one answered
// while the lane's own hung.
func FuzzDiagnose(f *testing.F) {
	f.Add(false, false, 0, false, "control", 0, 6, false, 0)
	f.Add(true, true, 503, false, "control", 6, 6, false, 0)
	f.Add(true, true, 0, true, "shared", 9, 6, false, 0)
	f.Add(true, true, 0, false, "bulk", 6, 6, false, 0)
	f.Add(true, false, 200, true, "", -1, 0, false, 0)
	f.Add(true, true, 200, false, "control", 1, 6, true, 0)
	f.Add(true, true, 200, true, "control", 1, 6, true, 200)
	f.Fuzz(func(t *testing.T, probed, online bool, front int, other bool, lane string, inFlight, limit int, poolProbed bool, poolStatus int) {
		p := Probes{Probed: probed, DeviceOnline: online, FrontStatus: front, OtherAnswered: other, Lane: lane, InFlight: inFlight, Limit: limit,
			PoolProbed: poolProbed, PoolStatus: poolStatus}
		l := Diagnose(p)
		known := false
		for _, s := range semconv.LinkStatuses {
			known = known || s == l.Status
		}
		if !known {
			t.Fatalf("%+v: unknown status %q", p, l.Status)
		}
		if (l.Advice != "") != (l.Status == semconv.LinkStatusUnreachable) {
			t.Fatalf("%+v: advice %q on %s", p, l.Advice, l.Status)
		}
		if l.Status == semconv.LinkStatusLaneSaturated && !(other || front != 0) {
			t.Fatalf("%+v: saturated without the engine answering", p)
		}
		if l.Status == semconv.LinkStatusUnreachable && (other || front != 0 || !online) {
			t.Fatalf("%+v: unreachable although answered or offline", p)
		}
		if l.Status == semconv.LinkStatusStaleConnection && (!online || front == 0 || Restarting(front) || !poolProbed || poolStatus != 0) {
			t.Fatalf("%+v: stale connection without a fresh answer and a silent pool", p)
		}
		if l.Status != semconv.LinkStatusOK && l.Message == "" {
			t.Fatalf("%+v: %s without a message", p, l.Status)
		}
	})
}

// FuzzReconnecting: the verdict shows exactly when all three conditions hold.
func FuzzReconnecting(f *testing.F) {
	f.Add(2, int64(6e9), int64(15e9))
	f.Add(1, int64(60e9), int64(60e9))
	f.Add(3, int64(16e9), int64(2e9))
	f.Fuzz(func(t *testing.T, failures int, failing, quiet int64) {
		r := Readings{Failures: failures, FailingFor: time.Duration(failing), QuietFor: time.Duration(quiet)}
		v := Reconnecting(r, DefaultThresholds())
		want := failures >= DefaultFailures && r.FailingFor >= DefaultFailingFor && r.QuietFor >= DefaultQuiet
		if v.Show != want {
			t.Fatalf("%+v: show %v, want %v", r, v.Show, want)
		}
		if v.Show == (v.Message == "") || v.Show == (v.Why != "") {
			t.Fatalf("%+v: show %v with message %q, why %q", r, v.Show, v.Message, v.Why)
		}
	})
}
