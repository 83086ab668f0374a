package semconv

import (
	"bytes"
	"fmt"
	"strings"
)

// DocPath is where Markdown is written, relative to the module root.
const DocPath = "docs/semconv.md"

// Markdown renders the Registry and the text-line formats as the reference
// page docs/semconv.md. `make semconv` rewrites the page; a test fails when it
// is out of step with this package.
func Markdown() []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# percause semantic conventions\n\n")
	p("<!-- Generated from instr/semconv (Registry, Markdown) by `make semconv`. Do not edit by hand. -->\n\n")
	p("Every name percause puts on the wire, generated from the one Go source of truth, `instr/semconv`, so a client\n")
	p("in another language (Swift on the phone) can emit exactly the same names. Durations are seconds as doubles;\n")
	p("counts are ints. OpenTelemetry semantic conventions are used where one exists; the rest is under `pippa.`\n")
	p("(the system observed) or `percause.` (what this project derives). Metric attributes come only from bounded sets.\n\n")
	p("The names of docs/architecture.md are unchanged. Added here: `pippa.turn.units`, the exporter's and the SDK's own\n")
	p("metrics (`percause.exporter.*`, `percause.sdk.rejected`), `pippa.voice.turns`, `pippa.voice.cushion`,\n")
	p("`pippa.voice.speech_end_to_post`, `pippa.voice.not_sent`, the health gauges, `pippa.tts.take.beside`, the lanes'\n")
	p("call attributes and the link status's readings; on the verdict span, the turn's time (`percause.turn.time`),\n")
	p("the readings of the done reading and the route copied from the turn, and one `percause.underrun` event per unit\n")
	p("that underran, so a page can show a turn from its verdict alone.\n\n")

	section := func(title string, kind Kind, header string, row func(n Name) string) {
		p("## %s\n\n%s\n", title, header)
		for _, n := range Registry {
			if n.Kind == kind {
				p("%s\n", row(n))
			}
		}
		p("\n")
	}
	p("## What the verdict needs\n\n")
	p("Every attribute a client sends is marked, for the verdict: **required** (the turn cannot be read right without it:\n")
	p("it waits, is decided `unknown`, or a rule misses what it would find), **recommended** (a rule reads it: without it\n")
	p("that rule cannot fire) or **optional** (no rule reads it; dashboards, the evidence or people do). **collector**\n")
	p("marks what the collector writes. Numbers are never negative unless marked *signed*; NaN and infinities are bad\n")
	p("input. A whole-number double sent for an int (and an int for a double) is read as the number it is.\n")
	p("`percause check` reports a client's turns against these marks.\n\n")
	p("| span | required | recommended |\n|---|---|---|\n")
	for _, span := range []string{onRes, SpanVoiceTurn, SpanVoiceUnit, SpanTTSTake, EventRouteChange} {
		var req, rec []string
		for _, n := range Registry {
			if (n.Kind != KindAttribute && n.Kind != KindResource) || !n.CarriedBy(span) {
				continue
			}
			if span == EventRouteChange && n.Where[0] != onRC {
				continue // carried by the event too, read only on the turn
			}
			switch n.Requirement {
			case Required:
				req = append(req, n.Name)
			case Recommended:
				rec = append(rec, n.Name)
			}
		}
		label := "`" + span + "`"
		if span == onRes {
			label = "resource"
		}
		p("| %s | %s | %s |\n", label, codes(req), codes(rec))
	}
	p("\n")

	p("## Span structure\n\n")
	p("One turn is one trace. The engine's takes join it through the `traceparent` header the phone sends with every\n")
	p("call of the turn (W3C Trace Context). Spans of a turn may arrive in any order, in separate requests.\n\n")
	p("| span | parent | kind | timestamps |\n|---|---|---|---|\n")
	for _, n := range Registry {
		if n.Kind == KindSpan {
			p("| `%s` | %s | %s | %s |\n", n.Name, esc(n.Parent), n.SpanKind, esc(n.Timestamps))
		}
	}
	p("\n")

	section("Resource", KindResource, "| name | type | for the verdict | meaning | values |\n|---|---|---|---|---|",
		func(n Name) string {
			return fmt.Sprintf("| `%s` | %s | %s | %s | %s |", n.Name, n.Type, level(n), esc(n.Meaning), codes(n.Values))
		})
	section("Spans", KindSpan, "| name | emitted by | meaning |\n|---|---|---|",
		func(n Name) string { return fmt.Sprintf("| `%s` | %s | %s |", n.Name, codes(n.Where), esc(n.Meaning)) })
	section("Span events", KindEvent, "| name | on | meaning |\n|---|---|---|",
		func(n Name) string { return fmt.Sprintf("| `%s` | %s | %s |", n.Name, codes(n.Where), esc(n.Meaning)) })
	section("Attributes", KindAttribute, "| name | type | where | for the verdict | meaning | values |\n|---|---|---|---|---|---|",
		func(n Name) string {
			return fmt.Sprintf("| `%s` | %s | %s | %s | %s | %s |", n.Name, n.Type, codes(n.Where), level(n), esc(n.Meaning), codes(n.Values))
		})
	section("Metrics", KindMetric, "| name | instrument | unit | attributes | Prometheus | meaning |\n|---|---|---|---|---|---|",
		func(n Name) string {
			return fmt.Sprintf("| `%s` | %s | %s | %s | `%s` | %s |", n.Name, n.Type, orDash(n.Unit), codes(n.Where),
				PromName(n), esc(n.Meaning))
		})
	p("Every metric also carries the resource as labels through the collector's resource-to-telemetry setting\n")
	p("(`service_name`, `service_instance_id`, `app_installation_id`). Histograms add `_bucket`, `_sum` and `_count`.\n")
	p("`%s` starts at the launch: it is cumulative and never counted down.\n\n", MetricPoolResets)
	b.WriteString(textLinesDoc)
	return b.Bytes()
}

// PromName is the Prometheus name a metric gets from the collector's
// Prometheus exporter: dots become underscores, a curly unit is dropped, s and
// By become _seconds and _bytes (unless the name already ends so), unit 1 adds
// nothing, counters end in _total.
func PromName(n Name) string {
	if strings.Contains(n.Name, "_total") || !strings.Contains(n.Name, ".") {
		return n.Name
	}
	s := strings.ReplaceAll(n.Name, ".", "_")
	suffix := map[string]string{UnitSeconds: "_seconds", UnitBytes: "_bytes"}[n.Unit]
	if !strings.HasSuffix(s, suffix) { // the exporter does not repeat a unit the name already ends in
		s += suffix
	}
	if n.Type == "counter" {
		s += "_total"
	}
	return s
}

func codes(vs []string) string {
	if len(vs) == 0 {
		return "–"
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		if strings.Contains(v, " ") {
			out[i] = esc(v)
		} else {
			out[i] = "`" + v + "`"
		}
	}
	return strings.Join(out, ", ")
}

func esc(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// level renders an attribute's requirement level, its condition and sign.
func level(n Name) string {
	s := string(n.Requirement)
	if n.When != "" {
		s += ": " + n.When
	}
	if n.Signed {
		s += "; signed"
	}
	return esc(s)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return "`" + s + "`"
}

// textLinesDoc documents the canonical log lines (exporters/textlines).
const textLinesDoc = "## Text lines\n\n" +
	"The SDK writes one line per turn and per take (`instr.WithTextLog`), from the same recordings as the spans.\n" +
	"Fields are `key=value` in this fixed order, separated by one space; values never contain spaces; seconds have two\n" +
	"decimals; `-` means not recorded. Separators inside a value (space, `=`, `,`, `+`, `>`, `(`, `)`, `/`, `:`, `@`) are\n" +
	"replaced by `_`. `exporters/textlines.Parse` reads a line back (and checks the order); `exporters/textlines.Read`\n" +
	"reads the lines as they sit in a log (any prefix, CRLF, any order, unknown fields) and the app's own spellings of the\n" +
	"same readings: [lines.md](lines.md) is its grammar.\n\n" +
	"### `[voice-turn]`\n\n" +
	"```\n" +
	"[voice-turn] turn=2 trace=4bf92f3577b34da6a3ce929d0e0e4736 link=cell/lte units=3 underruns=2 silent=1.40 stutter=yes route=bluetooth_hfp>bluetooth_a2dp bt=yes sample_rate=16000 route_changes=1 listen=0.20/0.31/0.62 rpm=0.18/0.25 post=0.80 not_sent=0.00 pool_reset=1(0) live=players:2(1),mic_engines:1(0),audio_queues:0(0),takes:0(0),byte_streams:2(0),replies_in_flight:0(0) uptime=86400.00/3600.00 activations=4 memory=188743680 gaps=0.12,0.56a(-0.30),0.12 broke=2:2/1.40/0.50@t2\n" +
	"```\n\n" +
	"| field | format | from |\n|---|---|---|\n" +
	"| `turn` | int | `pippa.turn.index` |\n" +
	"| `trace` | 32 hex digits | the turn's trace ID |\n" +
	"| `link` | `type[/subtype]` | `network.connection.type`, `network.connection.subtype` |\n" +
	"| `units` | int | units read aloud |\n" +
	"| `underruns` | int | sum of `pippa.unit.underruns` |\n" +
	"| `silent` | seconds | sum of `pippa.unit.silent` |\n" +
	"| `stutter` | `yes`/`no` | `pippa.turn.stutter` |\n" +
	"| `route` | `in+in>out+out` | `pippa.route.inputs`, `pippa.route.outputs` |\n" +
	"| `bt` | `yes`/`no` | `pippa.route.bluetooth` |\n" +
	"| `sample_rate` | int, Hz | `pippa.route.sample_rate` |\n" +
	"| `route_changes` | int | `pippa.route_change` events |\n" +
	"| `listen` | `grant/session/total` seconds | `pippa.listen.*` |\n" +
	"| `rpm` | `loaded/fresh` seconds | `pippa.rpm.*` |\n" +
	"| `post` | seconds | `pippa.turn.speech_end_to_post` |\n" +
	"| `not_sent` | seconds | `pippa.turn.not_sent` |\n" +
	"| `pool_reset` | `now[(at the previous turn's end)]` | `pippa.pool.resets`, `pippa.pool.resets.before` |\n" +
	"| `live` | `kind:now[(before,…)]`, comma-separated, in `LiveKinds` order | `pippa.live.<kind>`, `pippa.live.<kind>.before` |\n" +
	"| `uptime` | `device/app` seconds | `pippa.health.device_uptime`, `pippa.health.app_uptime` |\n" +
	"| `activations` | int | `pippa.health.activations` |\n" +
	"| `memory` | int, bytes | `pippa.health.memory` |\n" +
	"| `gaps` | per unit, comma-separated: `gap`, and when the lead is negative `gap` + `a(lead)` | `pippa.unit.gap`, `pippa.unit.lead` |\n" +
	"| `broke` | per unit with underruns: `index:underruns/silent/cushion@take` | `pippa.unit.*`, `pippa.take.id` |\n" +
	"| `changes` | optional, last: each route change, comma-separated: `at@reason>out+out` | `pippa.route_change` events |\n\n" +
	"`changes` is printed only when the writer passes each change (`textlines.Turn.Changes`); a line without it is the\n" +
	"older format, which gives only the count, and still reads.\n\n" +
	"In `gaps`, `0.56a(-0.30)` reads: 0.56 s of silence before the unit, which was queued 0.30 s *after* the previous\n" +
	"unit had ended: her words were late (the wait), not a network stall.\n\n" +
	"### `[tts-take]`\n\n" +
	"```\n" +
	"[tts-take] take=t2 trace=4bf92f3577b34da6a3ce929d0e0e4736 first_byte=0.40 total=4.40 audio=3.00 rate=0.68 need=1.00 beside=0\n" +
	"```\n\n" +
	"| field | format | from |\n|---|---|---|\n" +
	"| `take` | string | `pippa.take.id` |\n" +
	"| `trace` | 32 hex digits | the phone's turn trace |\n" +
	"| `first_byte`, `total`, `audio`, `rate`, `need` | two decimals | `pippa.take.*` |\n" +
	"| `beside` | int | `pippa.take.beside` |\n"
