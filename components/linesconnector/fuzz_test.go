package linesconnector

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/percause/percause/instr/semconv"
)

// FuzzConsumeLogs: any log bodies, one record each, never panic the
// connector; what it holds and the launches it remembers stay within their
// bounds; whatever it holds it lets go at shutdown, and every span it
// emits is one of the SDK's three, in a trace.
func FuzzConsumeLogs(f *testing.F) {
	for _, s := range []string{
		turnA + "\n" + takeA,
		"2026-11-30T08:00:00Z [voice-turn] turn=3 units=1 gaps=0.10 broke=1:1/0.50/1.50@t5\n2026-11-30T08:00:01Z [tts-take] take=t5 need=0.30",
		"[voice-turn] underruns=0,1 broke=2:1/0.40/1.00@x route_change@0.5=override:builtin_speaker +bluetooth",
		"[tts-take] take=t\n[tts-take] take=t\n[voice-turn] broke=1:1/0.1/0.1@t",
		"noise\n[voice-turn]\n\r\n",
		// Two processes' identical lines under BSD syslog prefixes.
		"Nov 30 08:00:30 studio pippa[311]: [voice-turn] turn=1 units=0\nNov 30 08:00:30 studio pippa[312]: [voice-turn] turn=1 units=0",
		// A phone asleep between turns, then turns missing and the start moved.
		"2026-11-30T08:00:00Z [voice-turn] turn=1 units=0 health:device_uptime=5000,app_uptime=30\n2026-11-30T08:02:00Z [voice-turn] turn=2 units=0 health:device_uptime=5060,app_uptime=90\n2026-11-30T08:30:00Z [voice-turn] turn=5 units=0 health:app_uptime=200",
		// A take ID the engine reused within the window.
		"2026-11-30T08:00:00Z [tts-take] take=t2 need=0.20\n2026-11-30T08:02:50Z [tts-take] take=t2 need=3.00\n2026-11-30T08:03:00Z [voice-turn] turn=2 units=1 gaps=0.10 broke=1:1/0.50/1.50@t2",
		// Negative and impossible scalars.
		"[voice-turn] turn=-3 units=-3 underruns=-1 silent=-2.0 post=-1.0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		h := newHarness(t, func(c *Config) { c.MaxPending, c.EmittedCacheSize = 8, 4 })
		ld := plog.NewLogs()
		lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
		for _, part := range strings.SplitN(body, "\x00", 16) {
			lrs.AppendEmpty().Body().SetStr(part)
		}
		if err := h.c.ConsumeLogs(context.Background(), ld); err != nil {
			t.Fatal(err)
		}
		if h.c.st.held > 8 {
			t.Fatalf("holds %d lines, max_pending is 8", h.c.st.held)
		}
		ls := h.c.st.launches
		n := 0
		for _, list := range ls.bySource {
			n += len(list)
		}
		if len(ls.byTrace) > 4 || n != len(ls.byTrace) {
			t.Fatalf("remembers %d turns' launches (%d by source), emitted_cache_size is 4", len(ls.byTrace), n)
		}
		h.now = h.now.Add(time.Hour)
		h.c.sweep(context.Background())
		if err := h.c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if h.c.st.held != 0 || len(h.c.st.turns) != 0 || len(h.c.st.takesByID) != 0 || len(h.c.st.turnsByTake) != 0 {
			t.Fatalf("state left after shutdown: %d held", h.c.st.held)
		}
		for name := range h.spans() {
			switch name {
			case semconv.SpanVoiceTurn, semconv.SpanVoiceUnit, semconv.SpanTTSTake:
			default:
				t.Fatalf("emitted a %q span", name)
			}
		}
	})
}
