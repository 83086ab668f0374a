package verdictpage

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"flag"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/dayreport"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func f(v float64) *float64 { return &v }
func n(v int64) *int64     { return &v }
func b(v bool) *bool       { return &v }

var day0 = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

func at(h, m int) pcommon.Timestamp {
	return pcommon.NewTimestampFromTime(day0.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute))
}

// fixedDay is a day of turns like the lab's: every cause, an underrun read
// against its take (need above the cushion, and at or under it), a take
// that never came, a turn decided early, and two status line changes.
func fixedDay() ([]dayreport.Turn, []dayreport.LinkChange) {
	clean := func(h, m int, turn int64) dayreport.Turn {
		return dayreport.Turn{Trace: "0a" + strings.Repeat("0", 28) + strconv.FormatInt(turn+10, 10), Turn: turn, Link: semconv.LinkWifi,
			Cause: semconv.CauseNone, Causes: []string{semconv.CauseNone}, Evidence: "no rule fired",
			SpeechEndToPost: f(0.8), NotSent: f(0), PoolResets: n(0), PoolResetsBefore: n(0), Start: at(h, m),
			Installation: "3f6c1a52-7d2e-4a8b-9c61-0d5e4f3a2b10", Launch: "9b1e2c3d-0000-4000-8000-000000000001", Version: "1.4.0",
			Outputs: []string{semconv.PortBuiltinSpeaker}, Bluetooth: b(false), Rules: "1"}
	}
	turns := []dayreport.Turn{clean(7, 5, 1), clean(7, 40, 2)}
	net := clean(8, 12, 3)
	net.Cause, net.Causes, net.Link = semconv.CauseNetwork, []string{semconv.CauseNetwork}, semconv.LinkCell
	net.Evidence = "unit 2: 2 underruns, 1.40 s silent; take t2 need 0.40 s ≤ cushion 1.50 s"
	net.Underruns, net.Silent = 2, 1.4
	net.Underran = []dayreport.Underrun{{Unit: 2, Take: "t2", Underruns: 2, Silent: 1.4, Cushion: 1.5, Need: f(0.4), Cause: semconv.CauseNetwork}}
	syn := clean(9, 30, 4)
	syn.Cause, syn.Causes = semconv.CauseSynthesis, []string{semconv.CauseSynthesis, semconv.CauseWait}
	syn.Evidence = "unit 3: 2 underruns, 1.40 s silent; take t3 need 2.10 s > cushion 1.50 s; unit 2 queued 0.30 s late"
	syn.Underruns, syn.Silent = 2, 1.4
	syn.Underran = []dayreport.Underrun{{Unit: 3, Take: "t3", Underruns: 2, Silent: 1.4, Cushion: 1.5, Need: f(2.1), Cause: semconv.CauseSynthesis}}
	bt := clean(10, 2, 5)
	bt.Cause, bt.Causes, bt.Evidence = semconv.CauseBluetooth, []string{semconv.CauseBluetooth}, "stutter with 0 underruns on bluetooth_a2dp"
	bt.Outputs, bt.Bluetooth = []string{semconv.PortBluetoothA2DP}, b(true)
	pool := clean(11, 45, 6)
	pool.Cause, pool.Causes, pool.Evidence = semconv.CausePool, []string{semconv.CausePool}, "pool_reset 0→1 since the launch's previous turn"
	pool.PoolResets, pool.PoolResetsBefore, pool.NotSent, pool.SpeechEndToPost = n(1), n(0), f(4.5), f(3.6)
	unk := clean(13, 20, 7)
	unk.Cause, unk.Causes, unk.Forced = semconv.CauseUnknown, []string{semconv.CauseUnknown}, "wait"
	unk.Evidence = "unit 1: 1 underruns, 0.50 s silent; take t1 never came (decided after the wait)"
	unk.Underran = []dayreport.Underrun{{Unit: 1, Take: "t1", Underruns: 1, Silent: 0.5, Cushion: 1.5, Cause: semconv.CauseUnknown}}
	unk.Underruns, unk.Silent = 1, 0.5
	esc := clean(14, 0, 8)
	esc.Evidence = `a <script>alert("x")</script> & friends`
	turns = append(turns, net, syn, bt, pool, unk, esc)
	links := []dayreport.LinkChange{
		{Time: at(12, 1), Trace: "0b", Span: "1", Installation: turns[0].Installation, Status: semconv.LinkStatusEngineRestarting,
			Previous: semconv.LinkStatusOK, Message: "Pippa is restarting, back in a few seconds.", Check: "progress", FailingFor: f(6.2), QuietFor: f(15.5)},
		{Time: at(12, 2), Trace: "0b", Span: "2", Installation: turns[0].Installation, Status: semconv.LinkStatusOK,
			Previous: semconv.LinkStatusEngineRestarting},
	}
	return turns, links
}

func fixedPage() Page {
	turns, links := fixedDay()
	return Page{
		Title: "percause: verdicts", Now: day0.Add(15 * time.Hour), Loc: time.UTC,
		From: day0.Add(-9 * time.Hour), To: day0.Add(15 * time.Hour), RangeLabel: "last 24 hours",
		Query: &Query{Range: "24h"}, Installations: []string{turns[0].Installation},
		Turns: turns, Links: links, Budget: 3, Refresh: 30 * time.Second, Listed: 50,
		Kept: "Kept: the last 7 days, at most 20000 turns and 2000 link status changes.",
	}
}

func render(t *testing.T, p Page) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(&buf, p); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestGolden: the page of a fixed day, byte for byte (-update rewrites it).
func TestGolden(t *testing.T) {
	for name, p := range map[string]Page{"served.html": fixedPage(), "static.html": func() Page {
		p := fixedPage()
		p.Query, p.Refresh, p.From, p.To, p.RangeLabel, p.Kept = nil, 30*time.Second, time.Time{}, time.Time{}, "the log's turns", ""
		return p
	}()} {
		t.Run(name, func(t *testing.T) {
			got := render(t, p)
			path := filepath.Join("testdata", name)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("the page differs from %s (run with -update after checking the difference)", path)
			}
		})
	}
}

// TestShowsTheVerdicts: what the page says of the fixed day, read back
// from its markup: the counts, the done reading, each turn's verdict and
// evidence, the take readings behind an underrun, the link changes.
func TestShowsTheVerdicts(t *testing.T) {
	out := render(t, fixedPage())
	for _, want := range []string{
		`<strong data-n="8">8</strong> turns by primary cause`,
		`data-done="no"`, "No: not done",
		`<span class="mark bad">no</span> speech-end-to-post within 3.00 s: 7 of 8 turns, slowest 3.60 s`,
		`<span class="mark bad">no</span> pool_reset at 0: highest tally 1`,
		`<li data-cause="none" data-n="3">`, `<li data-cause="network" data-n="1">`,
		`take t3 need 2.10 s &gt; cushion 1.50 s`,
		`unit 3 · take <code>t3</code>: 2 underruns, 1.40 s silent; need <strong data-field="need">2.10 s</strong> &gt; cushion <strong data-field="cushion">1.50 s</strong>: read as <span class="read-as">synthesis</span>`,
		`need <strong data-field="need">0.40 s</strong> ≤ cushion`,
		`the take never came; cushion <strong data-field="cushion">1.50 s</strong>`,
		`bluetooth_a2dp (Bluetooth)`,
		`<dt>decided early</dt><dd class="bad">wait</dd>`,
		`ok → <strong>engine_restarting</strong>`, `Pippa is restarting, back in a few seconds.`,
		`failing for 6.2 s, quiet for 15.5 s; check progress`,
		`<li data-cause="wait" data-n="1"><span>wait</span>`,
		`<meta http-equiv="refresh" content="30">`,
		`a &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; friends`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the page does not say %s", want)
		}
	}
	// Newest first.
	if i, j := strings.Index(out, `data-trace="0a000000000000000000000000000018"`), strings.Index(out, `data-trace="0a000000000000000000000000000011"`); i < 0 || j < 0 || i > j {
		t.Errorf("turns not listed newest first (%d, %d)", i, j)
	}
	p := fixedPage()
	p.Listed = 2
	if got := strings.Count(render(t, p), `<li class="turn"`); got != 2 {
		t.Errorf("Listed 2 lists %d turns", got)
	}
}

// TestSelfContained: the page asks for nothing: no script, no element
// that fetches, no URL but its own form's; its policy forbids fetching, and
// its one style element is the one the policy's hash allows.
func TestSelfContained(t *testing.T) {
	out := render(t, fixedPage())
	for _, bad := range []string{"<script", "<img", "<iframe", "<object", "<embed", "@import", "url(", "http://", "https://", " style=", "<link rel=\"stylesheet\""} {
		if strings.Contains(strings.ToLower(strings.ReplaceAll(out, "&lt;script", "")), bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	for _, m := range regexp.MustCompile(`(?:src|href|action)="([^"]*)"`).FindAllStringSubmatch(out, -1) {
		if m[1] != "./" && m[1] != "data:," {
			t.Errorf("the page refers to %q", m[1])
		}
	}
	m := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(out, -1)
	if len(m) != 1 {
		t.Fatalf("%d style elements, want 1", len(m))
	}
	h := sha256.Sum256([]byte(m[0][1]))
	meta := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatch(out)
	if !strings.Contains(CSP, "'sha256-"+base64.StdEncoding.EncodeToString(h[:])+"'") || meta == nil || html.UnescapeString(meta[1]) != CSP {
		t.Errorf("the style element's hash is not the one the policy allows: %s", CSP)
	}
	if !strings.HasPrefix(CSP, "default-src 'none';") {
		t.Errorf("CSP %q does not start by forbidding everything", CSP)
	}
	static := fixedPage()
	static.Query = nil
	s := render(t, static)
	if strings.Contains(s, "<form") || strings.Contains(s, `http-equiv="refresh"`) {
		t.Error("a static page has a form or reloads itself")
	}
}

// TestChartsHaveTextEquivalents: each chart is an image with a title and
// a description, and a table says what it draws.
func TestChartsHaveTextEquivalents(t *testing.T) {
	out := render(t, fixedPage())
	if got := strings.Count(out, `role="img" aria-labelledby=`); got != 1 {
		t.Errorf("%d charts labelled as images, want 1 (the causes implicated are a list with its bars)", got)
	}
	for _, id := range []string{"timeline-table", "implicated", "timeline-desc", "implicated-desc"} {
		if !strings.Contains(out, `id="`+id+`"`) {
			t.Errorf("no %s", id)
		}
	}
	// Every turn counted in the timeline's table: 8 in all.
	total := 0
	for _, m := range regexp.MustCompile(`<td class="n">(\d+)</td></tr>`).FindAllStringSubmatch(out[strings.Index(out, `id="timeline-table"`):strings.Index(out, `id="h-implicated"`)], -1) {
		k, _ := strconv.Atoi(m[1])
		total += k
	}
	if total != 8 {
		t.Errorf("the timeline's table counts %d turns, want 8", total)
	}
	for _, label := range []string{`<label>Range`, `<label>Installation`, `<html lang="en">`} {
		if !strings.Contains(out, label) {
			t.Errorf("no %s", label)
		}
	}
}

// relLum and contrast are WCAG 2's relative luminance and contrast ratio.
func relLum(hex string) float64 {
	c := func(s string) float64 {
		v, _ := strconv.ParseUint(s, 16, 8)
		x := float64(v) / 255
		if x <= 0.03928 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*c(hex[1:3]) + 0.7152*c(hex[3:5]) + 0.0722*c(hex[5:7])
}

func contrast(a, b string) float64 {
	la, lb := relLum(a), relLum(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// TestContrast: every colour the style sheet sets text or a badge in
// reads at WCAG AA (4.5:1) against what it stands on: dark text on the
// page's white and tinted boxes, white text on each cause's badge.
func TestContrast(t *testing.T) {
	badge := regexp.MustCompile(`\.b-([a-z-]+)\{background:(#[0-9a-f]{6})\}`)
	found := 0
	for _, m := range badge.FindAllStringSubmatch(css, -1) {
		found++
		if r := contrast("#ffffff", m[2]); r < 4.5 {
			t.Errorf("white on the %s badge (%s): %.2f:1", m[1], m[2], r)
		}
		if r := contrast("#ffffff", m[2]); r < 3 {
			t.Errorf("the %s bar (%s) against the page: %.2f:1, want 3:1", m[1], m[2], r)
		}
	}
	if found < len(semconv.Causes) {
		t.Fatalf("found %d badge colours, want one per cause", found)
	}
	for _, pair := range [][2]string{
		{"#1a1a1a", "#ffffff"}, {"#4d4d4d", "#ffffff"}, {"#333333", "#ffffff"}, {"#0b57b0", "#ffffff"},
		{"#135a24", "#eef8f0"}, {"#8f1216", "#fdf0f0"}, {"#8f1216", "#ffffff"}, {"#1a1a1a", "#f2f2f2"}, {"#ffffff", "#0b57b0"},
	} {
		if !strings.Contains(css, pair[0]) && pair[0] != "#ffffff" {
			t.Errorf("%s is no longer in the style sheet: update this test", pair[0])
		}
		if r := contrast(pair[0], pair[1]); r < 4.5 {
			t.Errorf("%s on %s: %.2f:1", pair[0], pair[1], r)
		}
	}
}

func TestBucketStep(t *testing.T) {
	for _, c := range []struct {
		span time.Duration
		want time.Duration
	}{
		{30 * time.Minute, time.Minute}, {time.Hour, 5 * time.Minute}, {24 * time.Hour, time.Hour},
		{7 * 24 * time.Hour, 6 * time.Hour}, {60 * 24 * time.Hour, 2 * 24 * time.Hour},
	} {
		if got := bucketStep(day0, day0.Add(c.span)); got != c.want {
			t.Errorf("span %s: step %s, want %s", c.span, got, c.want)
		}
	}
	for _, c := range []struct{ in, want int }{{0, 1}, {1, 1}, {2, 2}, {3, 3}, {7, 8}, {9, 10}, {12, 20}, {23, 30}, {50, 50}, {51, 60}, {81, 100}} {
		if got := niceCeil(c.in); got != c.want {
			t.Errorf("niceCeil(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestWithin(t *testing.T) {
	turns, links := fixedDay()
	turns[1].Installation = "other"
	got, gl := Within(turns, links, day0.Add(7*time.Hour+30*time.Minute), day0.Add(12*time.Hour+1*time.Minute), turns[0].Installation)
	if len(got) != 4 || got[0].Turn != 3 || got[3].Turn != 6 || len(gl) != 1 {
		t.Errorf("within got %d turns (first %+v), %d links", len(got), got, len(gl))
	}
	if all, _ := Within(turns, links, time.Time{}, time.Time{}, ""); len(all) != len(turns) {
		t.Errorf("open bounds kept %d of %d", len(all), len(turns))
	}
}
