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
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/page/dayreport"
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
func fixedDay() ([]dayreport.JudgedTurn, []dayreport.LinkChange) {
	clean := func(h, m int, turn int64) dayreport.JudgedTurn {
		return dayreport.JudgedTurn{Trace: "0a" + strings.Repeat("0", 28) + strconv.FormatInt(turn+10, 10), Turn: turn, Link: semconv.LinkWifi,
			Cause: semconv.CauseNone, Causes: []string{semconv.CauseNone}, Evidence: "no rule fired",
			SpeechEndToPost: f(0.8), NotSent: f(0), PoolResets: n(0), PoolResetsBefore: n(0), Start: at(h, m),
			Installation: "3f6c1a52-7d2e-4a8b-9c61-0d5e4f3a2b10", Launch: "9b1e2c3d-0000-4000-8000-000000000001", Version: "1.4.0",
			Outputs: []string{semconv.PortBuiltinSpeaker}, Bluetooth: b(false), Rules: "1"}
	}
	turns := []dayreport.JudgedTurn{clean(7, 5, 1), clean(7, 40, 2)}
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
	// A tally that stands still (2 before, 2 now) is no rule's reading.
	esc.PoolResets, esc.PoolResetsBefore = n(2), n(2)
	turns = append(turns, net, syn, bt, pool, unk, esc)
	links := []dayreport.LinkChange{
		{Time: at(8, 12), Trace: net.Trace, Span: "1", Installation: turns[0].Installation, Status: semconv.LinkStatusConnectionLost,
			Previous: semconv.LinkStatusOK, Message: "Connection lost. Checking why…", Check: "progress check", FailingFor: f(6.2), QuietFor: f(15.5)},
		{Time: at(12, 1), Trace: "0b", Span: "1", Installation: turns[0].Installation, Status: semconv.LinkStatusEngineRestarting,
			Previous: semconv.LinkStatusOK, Message: "Pippa is restarting, back in a few seconds.", Check: "progress check", FailingFor: f(6.2), QuietFor: f(15.5)},
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
		`<span class="mark ok">yes</span> dictated turns on Wi-Fi and LTE: Wi-Fi 7 dictated, LTE 1 dictated`,
		`<span class="mark bad">no</span> speech-end-to-post within 3.00 s: 7 of 8 turns, slowest 3.60 s (Wi-Fi 6 of 7, slowest 3.60 s; LTE 1 of 1, slowest 0.80 s)`,
		`<span class="mark bad">no</span> pool_reset at 0: highest tally 2`,
		`<li data-cause="none" data-n="3">`, `<li data-cause="network" data-n="1">`,
		`take t3 need 2.10 s &gt; cushion 1.50 s`,
		`unit 3 · take <code class="tok">t3</code>: 2 underruns, 1.40 s silent; need <strong data-field="need">2.10 s</strong> &gt; cushion <strong data-field="cushion">1.50 s</strong>: read as <span class="read-as">synthesis</span>`,
		`need <strong data-field="need">0.40 s</strong> ≤ cushion`,
		`the take never came; cushion <strong data-field="cushion">1.50 s</strong>`,
		`bluetooth_a2dp (Bluetooth)`,
		`<dt>decided early</dt><dd data-field="forced" data-forced="wait">its takes had not all come when the processor&#39;s wait ran out</dd>`,
		`<span class="tok">ok</span> → <strong class="tok">engine_restarting</strong>: “Pippa is restarting, back in a few seconds.” <span class="muted">(progress check failing for 6.2 s, quiet for 15.5 s)</span>`,
		`<dt>pool_reset</dt><dd class="bad" data-read="rule">1 (before: 0)</dd>`,
		`<dt>pool_reset</dt><dd>2 (before: 2)</dd>`,
		`<dt>underruns</dt><dd class="bad" data-read="rule">2, 1.40 s silent</dd>`,
		`<dt>speech end to post</dt><dd>3.60 s <span class="note">(over the 3.00 s budget)</span></dd>`,
		`<dt>not sent</dt><dd>4.50 s <span class="note">(a &#34;not sent&#34; wait)</span></dd>`,
		`<a href="./?cause=network" class="badge b-network">network</a>`,
		`<a href="./?turn=0a000000000000000000000000000013" class="permalink">turn 3 · `,
		` · during <a href="./?turn=0a000000000000000000000000000013">turn 3</a>`,
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
	// Its links ask the same page again (a query, an anchor), nothing else.
	for _, m := range regexp.MustCompile(`(?:src|href|action)="([^"]*)"`).FindAllStringSubmatch(out, -1) {
		if m[1] != "./" && m[1] != "data:," && !strings.HasPrefix(m[1], "./?") {
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
	// A static page is one file: its links are anchors within it.
	for _, m := range regexp.MustCompile(`(?:src|href|action)="([^"]*)"`).FindAllStringSubmatch(s, -1) {
		if m[1] != "data:," && !strings.HasPrefix(m[1], "#t-") {
			t.Errorf("the static page refers to %q", m[1])
		}
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
	if len(got) != 4 || got[0].Turn != 3 || got[3].Turn != 6 || len(gl) != 2 {
		t.Errorf("within got %d turns (first %+v), %d links", len(got), got, len(gl))
	}
	if all, _ := Within(turns, links, time.Time{}, time.Time{}, ""); len(all) != len(turns) {
		t.Errorf("open bounds kept %d of %d", len(all), len(turns))
	}
}

// cards are the trace IDs of the turn cards the page lists, in order.
func cards(page string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<li class="turn" id="t-[0-9a-f]+" data-trace="([0-9a-f]+)"`).FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

func trace(turn int) string { return "0a" + strings.Repeat("0", 28) + strconv.Itoa(turn+10) }

// TestListPagesAndFilters: the list of turns pages past page.turns and
// filters by cause; each page links to the pages beside it and keeps the
// query's range, installation and cause.
func TestListPagesAndFilters(t *testing.T) {
	for _, c := range []struct {
		name         string
		q            Query
		listed       int
		want         []int
		head         string
		newer, older string
	}{
		{"first page", Query{Range: "24h"}, 3, []int{8, 7, 6}, "Turns 1–3 of 8 turns, newest first.", "", "./?page=2"},
		{"middle page", Query{Range: "24h", Page: 2}, 3, []int{5, 4, 3}, "Turns 4–6 of 8 turns, newest first.", "./", "./?page=3"},
		{"last page", Query{Range: "all", Page: 3}, 3, []int{2, 1}, "Turns 7–8 of 8 turns, newest first.", "./?page=2&amp;range=all", ""},
		{"past the last", Query{Range: "24h", Page: 9}, 3, nil, "8 turns.", "./?page=3", ""},
		{"every turn on one page", Query{Range: "24h"}, 50, []int{8, 7, 6, 5, 4, 3, 2, 1}, "All 8 turns, newest first.", "", ""},
		{"by cause", Query{Range: "24h", Cause: semconv.CauseNone}, 50, []int{8, 2, 1}, "All 3 none turns, newest first.", "", ""},
		{"by cause, paged", Query{Range: "24h", Cause: semconv.CauseNone, Installation: "x"}, 2, []int{8, 2}, "Turns 1–2 of 3 none turns, newest first.", "", "./?cause=none&amp;installation=x&amp;page=2"},
		{"a cause with no turn", Query{Range: "24h", Cause: semconv.CauseState}, 50, nil, "0 state turns.", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := fixedPage()
			p.Query, p.Listed = &c.q, c.listed
			out := render(t, p)
			var want []string
			for _, n := range c.want {
				want = append(want, trace(n))
			}
			if got := cards(out); !slices.Equal(got, want) {
				t.Errorf("listed %v, want %v", got, want)
			}
			if !strings.Contains(out, `<p class="muted" id="list-head">`+c.head) {
				t.Errorf("the list's head is not %q", c.head)
			}
			for id, href := range map[string]string{"newer": c.newer, "older": c.older} {
				got := regexp.MustCompile(`<a href="([^"]*)" rel="[a-z]+" id="` + id + `">`).FindStringSubmatch(out)
				switch {
				case href == "" && got != nil:
					t.Errorf("a %s link to %s, want none", id, got[1])
				case href != "" && (got == nil || got[1] != href):
					t.Errorf("the %s link is %v, want %s", id, got, href)
				}
			}
			if c.q.Cause != "" && !strings.Contains(out, `id="clear-filter"`) {
				t.Error("a filtered list has no link back to every cause")
			}
			// The done reading is the range's, whatever the list shows.
			if !strings.Contains(out, `<strong data-n="8">8</strong> turns by primary cause`) {
				t.Error("the list's filter changed the day's counts")
			}
		})
	}
}

// TestTurnPermalink: ?turn=TRACE is that turn's card alone, with the
// link status changes of its trace, linking back to its installation's
// turns; an unknown trace says the turn is not kept.
func TestTurnPermalink(t *testing.T) {
	p := fixedPage()
	p.Query = &Query{Range: "24h", Turn: trace(3)}
	out := render(t, p)
	if got := cards(out); !slices.Equal(got, []string{trace(3)}) {
		t.Fatalf("the permalink lists %v", got)
	}
	for _, want := range []string{
		`<h2 id="h-focus">Turn <code class="tok">` + trace(3) + `</code></h2>`,
		`<div class="status-line" data-field="link-status">`,
		`<strong class="tok">connection_lost</strong>: “Connection lost. Checking why…”`,
		`<a href="./?installation=3f6c1a52-7d2e-4a8b-9c61-0d5e4f3a2b10&amp;range=all">Every turn of this installation</a>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the permalink does not say %s", want)
		}
	}
	for _, not := range []string{`id="h-done"`, `engine_restarting`, `http-equiv="refresh"`} {
		if strings.Contains(out, not) {
			t.Errorf("the permalink shows %s", not)
		}
	}
	p.Query = &Query{Range: "24h", Turn: strings.Repeat("ab", 16)}
	if out := render(t, p); !strings.Contains(out, `id="not-kept"`) || len(cards(out)) != 0 {
		t.Error("an unknown trace does not say the turn is not kept")
	}
}

// TestCardsCarryTheirLinkStatus: a link status change is shown in the
// card of the turn whose trace it came in, and only there.
func TestCardsCarryTheirLinkStatus(t *testing.T) {
	out := render(t, fixedPage())
	for _, tr := range cards(out) {
		i := strings.Index(out, `data-trace="`+tr+`"`)
		card := out[i : i+strings.Index(out[i:], "</li>\n<li class=\"turn\"")+1]
		if j := strings.Index(out[i:], `</ol>`); !strings.Contains(out[i:i+j], `<li class="turn"`) {
			card = out[i : i+j]
		}
		has := strings.Contains(card, `data-field="link-status"`)
		if has != (tr == trace(3)) {
			t.Errorf("turn %s: link status shown %v", tr, has)
		}
	}
}

// TestChartFollowsTheData: the chart's bars span the turns, not the range
// asked for: a day whose turns came in ten minutes is drawn as ten
// minutes, in bars of under a minute.
func TestChartFollowsTheData(t *testing.T) {
	end := day0.Add(15 * time.Hour)
	var turns []dayreport.JudgedTurn
	for i := range 23 {
		turns = append(turns, dayreport.JudgedTurn{Trace: trace(i), Turn: int64(i + 1), Cause: semconv.CauseNone,
			Start: pcommon.NewTimestampFromTime(end.Add(-10*time.Minute + time.Duration(i)*26*time.Second))})
	}
	tl := buildTimeline(turns, time.UTC, links{q: &Query{Range: "24h"}, listed: 50})
	if len(tl.Bars) < 10 || tl.Step != "30 seconds" {
		t.Errorf("%d bars of %s for 23 turns in 10 minutes", len(tl.Bars), tl.Step)
	}
	if first, last := tl.XLabels[0].Text, tl.XLabels[len(tl.XLabels)-1].Text; first != "14:50:00" || last != "14:59:30" {
		t.Errorf("the axis runs %s to %s, want 14:50:00 to 14:59:30", first, last)
	}
	// A bar of one turn links to it; of several, to their cause's list at
	// the newest's card.
	for _, b := range tl.Bars {
		for _, s := range b.Segs {
			if !strings.HasPrefix(s.Href, "./?turn=") && !regexp.MustCompile(`^\./\?cause=none#t-[0-9a-f]{32}$`).MatchString(s.Href) {
				t.Errorf("a bar links to %q", s.Href)
			}
		}
	}
}

// TestAlertsBox: with Alertmanager known, a box above "Done?" lists each
// firing alert, since when, and links to its turn or installation; it
// says plainly when Alertmanager does not answer.
func TestAlertsBox(t *testing.T) {
	p := fixedPage()
	if strings.Contains(render(t, p), `id="alerts"`) {
		t.Error("an alerts box without an Alertmanager")
	}
	since := p.Now.Add(-25 * time.Minute)
	p.Alerts = &Alerts{Source: "http://127.0.0.1:9093", Firing: []Alert{
		{Name: "PercausePoolResetMoved", Summary: "pool_reset moved on installation x", Since: since, Installation: "x", Trace: trace(6)},
		{Name: "PercauseReconnectingShown", Since: since, Installation: "x"},
		{Name: "Other", Trace: "not-a-trace"},
	}}
	out := render(t, p)
	for _, want := range []string{
		`<li data-alert="PercausePoolResetMoved"><strong class="tok">PercausePoolResetMoved</strong>, firing since <time class="tok">2026-11-30 14:35:00</time> (25 min): pool_reset moved on installation x · <a href="./?turn=` + trace(6) + `">its turn</a></li>`,
		`<a href="./?installation=x&amp;range=all">the installation&#39;s turns</a>`,
		`<li data-alert="Other"><strong class="tok">Other</strong></li>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the box does not say %s", want)
		}
	}
	if strings.Index(out, `id="alerts"`) > strings.Index(out, `id="h-done"`) {
		t.Error("the alerts box is not above Done?")
	}
	p.Alerts = &Alerts{Source: "http://127.0.0.1:9093"}
	if !strings.Contains(render(t, p), `data-state="quiet"`) {
		t.Error("no alert firing is not said")
	}
	p.Alerts = &Alerts{Source: "http://127.0.0.1:9093", Err: "connection refused"}
	if out := render(t, p); !strings.Contains(out, `does not answer, so the page cannot say what is firing: connection refused`) {
		t.Error("an Alertmanager that does not answer is not said")
	}
}
