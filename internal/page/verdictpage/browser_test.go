package verdictpage

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"gopkg.in/yaml.v3"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/page/dayreport"
	"github.com/percause/percause/internal/testsupport/testenv"
	"github.com/percause/percause/lab"
	"github.com/percause/percause/lab/scenario"
	"github.com/percause/percause/lab/verdicts"
)

// The end-to-end proof of the page: the real collector (`percause
// collector`, the embedded default with every turn listed) fed by every
// lab scenario, its page read in a real headless Chromium, every request
// the browser makes recorded and anything leaving loopback refused; then
// the same page exposed behind a bearer token. With -update it also
// writes the screenshots and the measurements under docs/page/.

// pageDocs is where -update writes the screenshots and measurements.
var pageDocs = filepath.Join(testenv.RepoRoot(), "docs", "page")

// chromium finds the browser: PERCAUSE_CHROMIUM, or chromium on the PATH.
// Without one the test is skipped, except in CI, which installs it.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PERCAUSE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium on the PATH: CI installs it (apt-get install chromium)")
	}
	t.Skip("no chromium on the PATH (apt-get install chromium; CI installs it)")
	return ""
}

// pageTurns is the test's page.turns: the lab's turns fill several pages
// of the list.
const pageTurns = 10

// pageConfig is local.yaml with pageTurns turns a page and, with token,
// the page exposed on every interface behind bearertokenauth/page (its
// token from PERCAUSE_PAGE_TOKEN).
func pageConfig(t *testing.T, token bool) string {
	t.Helper()
	var cfg map[string]any
	if err := yaml.Unmarshal(collectorconfig.Local, &cfg); err != nil {
		t.Fatal(err)
	}
	v := cfg["exporters"].(map[string]any)["verdicts"].(map[string]any)
	v["page"].(map[string]any)["turns"] = pageTurns
	if token {
		port := testenv.FreePort(t)
		v["http"] = map[string]any{
			"endpoint": fmt.Sprintf("0.0.0.0:%d", port),
			"auth":     map[string]any{"authenticator": "bearertokenauth/page"},
		}
		cfg["extensions"].(map[string]any)["bearertokenauth/page"] = map[string]any{"token": "${env:PERCAUSE_PAGE_TOKEN}"}
		svc := cfg["service"].(map[string]any)
		svc["extensions"] = append(svc["extensions"].([]any), "bearertokenauth/page")
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "collector.yaml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// recorder keeps every URL the browser asks for; requests to anything but
// loopback (or data: URLs, which never leave the browser) are failed before
// they are sent.
type recorder struct {
	mu      sync.Mutex
	seen    []string
	blocked []string
}

func (r *recorder) add(u string, blocked bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, u)
	if blocked {
		r.blocked = append(r.blocked, u)
	}
}

func (r *recorder) reset() ([]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, b := r.seen, r.blocked
	r.seen, r.blocked = nil, nil
	return s, b
}

func local(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.Scheme == "data" {
		return true
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
		return u.Scheme == "http" || u.Scheme == "https"
	}
	return false
}

// browser starts headless Chromium with the flags this sandbox needs and
// a fresh profile, every request going through the recorder.
func browser(t *testing.T) (context.Context, *recorder) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	rec := &recorder{}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *fetch.EventRequestPaused:
			ok := local(e.Request.URL)
			rec.add(e.Request.URL, !ok)
			go func() {
				if ok {
					_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
				} else {
					_, _ = chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
				}
			}()
		case *network.EventRequestWillBeSent:
			rec.add(e.Request.URL, false)
		}
	}); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		t.Fatal(err)
	}
	return ctx, rec
}

// shown is what the page shows, read from its document.
type shown struct {
	Title   string         `json:"title"`
	Total   int            `json:"total"`
	Done    string         `json:"done"`
	Reasons []string       `json:"reasons"`
	ByCause map[string]int `json:"byCause"`
	Links   []string       `json:"links"`
	Head    string         `json:"head"`
	Older   string         `json:"older"`
	Alerts  []struct {
		Name string `json:"name"`
		Href string `json:"href"`
	} `json:"alerts"`
	Turns []shownTurn `json:"turns"`
}

type shownTurn struct {
	Trace      string   `json:"trace"`
	Cause      string   `json:"cause"`
	Evidence   string   `json:"evidence"`
	Causes     string   `json:"causes"`
	Route      string   `json:"route"`
	Needs      []string `json:"needs"`
	Cushions   []string `json:"cushions"`
	LinkStatus []string `json:"linkStatus"`
	Forced     string   `json:"forced"`
	Red        []string `json:"red"`
	Height     float64  `json:"height"`
}

const readPage = `(() => {
  const q = s => document.querySelector(s);
  const text = (el, s) => { const e = el.querySelector(s); return e ? e.innerText : ""; };
  const byCause = {};
  document.querySelectorAll('#by-cause li[data-cause]').forEach(li => byCause[li.dataset.cause] = +li.dataset.n);
  return {
    title: document.title,
    total: q('#turns-total strong') ? +q('#turns-total strong').dataset.n : -1,
    done: q('#done') ? q('#done').dataset.done : "",
    reasons: [...document.querySelectorAll('#done li')].map(li => li.innerText),
    byCause,
    links: [...document.querySelectorAll('#links li[data-status]')].map(li => li.dataset.status),
    head: q('#list-head') ? q('#list-head').innerText : "",
    older: q('#older') ? q('#older').href : "",
    alerts: [...document.querySelectorAll('#alerts li[data-alert]')].map(li => ({name: li.dataset.alert, href: li.querySelector('a') ? li.querySelector('a').href : ""})),
    turns: [...document.querySelectorAll('li.turn')].map(li => ({
      trace: li.dataset.trace,
      cause: text(li, '[data-field=cause]'),
      evidence: text(li, '[data-field=evidence]'),
      causes: text(li, '[data-field=causes]'),
      route: text(li, '[data-field=route]'),
      needs: [...li.querySelectorAll('[data-field=need]')].map(e => e.innerText),
      cushions: [...li.querySelectorAll('[data-field=cushion]')].map(e => e.innerText),
      linkStatus: [...li.querySelectorAll('[data-field=link-status] li[data-status]')].map(e => e.dataset.status),
      forced: text(li, '[data-field=forced]'),
      red: [...li.querySelectorAll('*')].filter(e => getComputedStyle(e).color === 'rgb(143, 18, 22)' && e.children.length === 0).map(e => (e.previousElementSibling && e.previousElementSibling.tagName === 'DT' ? e.previousElementSibling.innerText : e.innerText)),
      height: li.getBoundingClientRect().height,
    })),
  };
})()`

// brokenWords are the words of the page the layout broke across lines:
// for each word of each text node shown, the client rects of a range over
// it; a word whose rects sit on more than one line was broken inside.
const brokenWords = `(() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest('svg, select, title, style') || el.getClientRects().length === 0) continue;
    const re = /\S+/g;
    let m;
    while ((m = re.exec(n.textContent))) {
      const r = document.createRange();
      r.setStart(n, m.index);
      r.setEnd(n, m.index + m[0].length);
      const lines = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.bottom)));
      if (lines.size > 1) out.push(m[0]);
    }
  }
  return out;
})()`

// timing is the browser's own reading of one load of the page.
type timing struct {
	FCP      float64 `json:"fcp"`
	TTFB     float64 `json:"ttfb"`
	DOMReady float64 `json:"domReady"`
	Load     float64 `json:"load"`
	Transfer float64 `json:"transfer"`
	Encoded  float64 `json:"encoded"`
	Decoded  float64 `json:"decoded"`
}

// readTiming waits (up to 3 s) for the first contentful paint to be
// reported, then reads the navigation's timing.
const readTiming = `new Promise(resolve => {
  const done = () => {
    const n = performance.getEntriesByType('navigation')[0];
    const p = performance.getEntriesByName('first-contentful-paint')[0];
    resolve({fcp: p ? p.startTime : -1, ttfb: n.responseStart - n.startTime, domReady: n.domContentLoadedEventEnd - n.startTime,
      load: n.loadEventEnd - n.startTime, transfer: n.transferSize, encoded: n.encodedBodySize, decoded: n.decodedBodySize});
  };
  if (performance.getEntriesByName('first-contentful-paint').length) { done(); return; }
  new PerformanceObserver((list, obs) => { if (list.getEntriesByName('first-contentful-paint').length) { obs.disconnect(); done(); } })
    .observe({type: 'paint', buffered: true});
  setTimeout(done, 3000);
})`

func TestPageInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: starts the collector, runs every scenario, drives Chromium")
	}
	ctx, rec := browser(t)

	// The recorder sees and stops a request that would leave loopback:
	// without this, "nothing was asked of the outside" would prove nothing.
	outside := "http://198.51.100.7/percause-must-not-fetch.png"
	if err := chromedp.Do(ctx, chromedp.Navigate("data:text/html,<img src='"+outside+"'>")); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the recorder to see the outside request", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return slices.Contains(rec.blocked, outside)
	})
	rec.reset()

	// A real Alertmanager the page asks what is firing.
	am := testenv.StartAlertmanager(t)
	col := testenv.StartCollector(t, testenv.WithCollectorConfig(pageConfig(t, false)),
		testenv.WithCollectorEnv(testenv.EnvVerdictWait, lab.DefaultVerdictWait),
		testenv.WithCollectorEnv("PERCAUSE_ALERTMANAGER_URL", am.URL))
	lctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := lab.Run(lctx, scenario.All, lab.WithCollector(col.OTLPURL, col.VerdictFile), lab.WithScale(lab.DefaultScale/2))
	if err != nil {
		t.Fatalf("lab run: %v", err)
	}
	reader := verdicts.NewReader(col.VerdictFile)
	if err := reader.Refresh(); err != nil {
		t.Fatal(err)
	}
	decided := reader.All()
	rerun := false
	for _, tr := range res.Turns {
		rerun = rerun || tr.Attempt > 1
	}
	if !rerun && len(decided) != len(res.Turns) {
		t.Fatalf("the collector decided %d turns, the lab ran %d", len(decided), len(res.Turns))
	}
	all := col.PageURL + "?range=all"
	testenv.WaitFor(t, 30*time.Second, "the page to show every verdict", func() bool {
		resp, err := http.Get(all)
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return strings.Contains(string(b), fmt.Sprintf(`<strong data-n="%d">`, len(decided)))
	})
	// The pool's alert, naming its turn by trace_id as a receiver may add
	// it. (An alert as the generated rules send it names its installation
	// and cause only; the exporter links it to the latest such turn:
	// components/verdictexporter's TestAlertLinksToTheLatestTurnOfItsCause.)
	poolTurn := ""
	for _, tr := range res.Turns {
		if tr.Cause == "pool" && poolTurn == "" {
			poolTurn = tr.TraceID
		}
	}
	if poolTurn == "" {
		t.Fatal("no turn of the lab's got the pool verdict")
	}
	postAlert(t, am.URL, map[string]string{"alertname": "PercausePoolResetMoved", "app_installation_id": "lab", "severity": "warning"},
		map[string]string{"summary": "pool_reset moved", "trace_id": poolTurn})

	// Desktop first: what the page shows, page by page, against the lab's
	// turns.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(all))
	if err != nil || resp.Status != 200 {
		t.Fatalf("navigate %s: %v, %+v", all, err, resp)
	}
	desktopTiming, err := chromedp.Run(ctx, chromedp.Evaluate[timing](readTiming, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	got := readAllPages(t, ctx, len(decided))
	checkAgainstTheLab(t, got, res, decided, rerun)
	checkFilter(t, ctx, col.PageURL, decided)
	checkPermalinks(t, ctx, col.PageURL, got, poolTurn)

	// Nothing was asked of anything but the collector on loopback.
	seen, blocked := rec.reset()
	if len(blocked) > 0 {
		t.Errorf("the page asked for %v, outside loopback", blocked)
	}
	if len(seen) == 0 {
		t.Error("the recorder saw no request at all: it is not recording")
	}
	for _, u := range seen {
		if !local(u) {
			t.Errorf("the browser asked for %s", u)
		}
	}

	// Measurements and screenshots: the default view at both widths.
	weights := measureWeights(t, col.PageURL)
	shots := map[string][]byte{}
	if shots["desktop.png"], err = chromedp.Run(ctx, screenshotOf(col.PageURL)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	if shots["phone.png"], err = chromedp.Run(ctx, screenshotOf(col.PageURL)); err != nil {
		t.Fatal(err)
	}
	phoneTiming, err := chromedp.Run(ctx, chromedp.Evaluate[timing](readTiming, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	// At phone width no word is broken inside, on any view: the list, a
	// page of one cause, a turn with its link status, the log's page.
	lostLink := ""
	for _, tr := range res.Turns {
		if tr.Scenario == "engine-restart" && len(tr.Readings.LinkStatuses) > 0 && lostLink == "" {
			lostLink = tr.TraceID
		}
	}
	if lostLink == "" {
		t.Fatal("no engine-restart turn recorded a link status change")
	}
	for _, u := range []string{col.PageURL, all + "&page=2", all + "&cause=network", TurnHref(lostLink)[2:], TurnHref(poolTurn)[2:]} {
		if !strings.HasPrefix(u, "http") {
			u = col.PageURL + u
		}
		checkPhoneLayout(t, ctx, u)
	}
	// A turn whose underrun was read against its take, at phone width.
	if _, err := chromedp.Run(ctx, chromedp.Navigate(all+"&cause=synthesis")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector('li.turn[data-cause=synthesis]').scrollIntoView(), true)`)); err != nil {
		t.Fatal(err)
	}
	if shots["phone-turn.png"], err = chromedp.Run(ctx, chromedp.CaptureScreenshot()); err != nil {
		t.Fatal(err)
	}
	// A lost link's turn at its permalink, its status line during it on
	// its card.
	if _, err := chromedp.Run(ctx, chromedp.Navigate(col.PageURL+TurnHref(lostLink)[2:])); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector('[data-field=link-status]').scrollIntoView({block: 'center'}), true)`)); err != nil {
		t.Fatal(err)
	}
	if shots["phone-link.png"], err = chromedp.Run(ctx, chromedp.CaptureScreenshot()); err != nil {
		t.Fatal(err)
	}
	if _, blocked := rec.reset(); len(blocked) > 0 {
		t.Errorf("the page asked for %v, outside loopback", blocked)
	}
	t.Logf("desktop: %+v", desktopTiming)
	t.Logf("phone:   %+v", phoneTiming)
	t.Logf("weights: %v", weights)
	if *update {
		if err := os.MkdirAll(pageDocs, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range shots {
			if err := os.WriteFile(filepath.Join(pageDocs, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		writeMeasurements(t, len(decided), weights, desktopTiming, phoneTiming)
	}

	t.Run("the log's page at phone width", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join("testdata", "static.html"))
		if err != nil {
			t.Fatal(err)
		}
		// A data: URL: the recorder lets nothing else but loopback through.
		checkPhoneLayout(t, ctx, "data:text/html;base64,"+base64.StdEncoding.EncodeToString(b))
	})
	t.Run("behind a token", func(t *testing.T) { checkToken(t, ctx) })
}

// postAlert posts one firing alert to Alertmanager's API, as Prometheus
// does.
func postAlert(t *testing.T, amURL string, labels, annotations map[string]string) {
	t.Helper()
	now := time.Now()
	body, _ := json.Marshal([]map[string]any{{"labels": labels, "annotations": annotations,
		"startsAt": now.Add(-time.Minute).Format(time.RFC3339), "endsAt": now.Add(time.Hour).Format(time.RFC3339)}})
	resp, err := http.Post(amURL+"/api/v2/alerts", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("posting an alert: %s", resp.Status)
	}
}

// readAllPages reads the list page by page, following its "older" link in
// the browser, until the last: every turn once, newest first.
func readAllPages(t *testing.T, ctx context.Context, want int) shown {
	t.Helper()
	var all shown
	for page := 1; ; page++ {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[shown](readPage))
		if err != nil {
			t.Fatal(err)
		}
		if page == 1 {
			all = got
			all.Turns = nil
		}
		if len(got.Turns) > pageTurns {
			t.Errorf("page %d lists %d turns, more than page.turns (%d)", page, len(got.Turns), pageTurns)
		}
		all.Turns = append(all.Turns, got.Turns...)
		if got.Older == "" {
			break
		}
		if page > want/pageTurns+1 {
			t.Fatalf("page %d still links to an older one (%s)", page, got.Older)
		}
		if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#older"))); err != nil {
			t.Fatalf("following page %d's older link: %v", page, err)
		}
	}
	if want > pageTurns && len(all.Turns) <= pageTurns {
		t.Errorf("the list of %d turns is not paged", want)
	}
	seen := map[string]bool{}
	for _, tr := range all.Turns {
		if seen[tr.Trace] {
			t.Errorf("turn %s is listed on two pages", tr.Trace)
		}
		seen[tr.Trace] = true
	}
	return all
}

// checkFilter: the list filtered by cause (the form's select, sent by the
// browser) lists exactly that cause's turns.
func checkFilter(t *testing.T, ctx context.Context, base string, decided map[string]verdicts.Verdict) {
	t.Helper()
	want := 0
	for _, v := range decided {
		if v.Cause == "network" {
			want++
		}
	}
	if _, err := chromedp.Run(ctx, chromedp.Navigate(base+"?range=all")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.SetValue(chromedp.CSS(`select[name=cause]`), "network")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`form button[type=submit]`))); err != nil {
		t.Fatal(err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[shown](readPage))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(loc, "cause=network") || len(got.Turns) != want || want == 0 {
		t.Errorf("the form's cause filter at %s lists %d turns; the collector decided %d network turns", loc, len(got.Turns), want)
	}
	for _, tr := range got.Turns {
		if tr.Cause != "network" {
			t.Errorf("the network list shows a %s turn", tr.Cause)
		}
	}
}

// checkPermalinks: a card's link, a bar of the chart and the alert each
// lead to their turn's card.
func checkPermalinks(t *testing.T, ctx context.Context, base string, all shown, poolTurn string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Navigate(base+"?range=all")); err != nil {
		t.Fatal(err)
	}
	first := all.Turns[0].Trace
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`li.turn a.permalink`))); err != nil {
		t.Fatal(err)
	}
	one, err := chromedp.Run(ctx, chromedp.Evaluate[shown](readPage))
	if err != nil {
		t.Fatal(err)
	}
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.Contains(loc, "?turn="+first) || len(one.Turns) != 1 || one.Turns[0].Trace != first {
		t.Errorf("the first card's link leads to %s, showing %d turns", loc, len(one.Turns))
	}
	// Every bar of the chart leads to a page that shows the turn it names.
	if _, err := chromedp.Run(ctx, chromedp.Navigate(base+"?range=all")); err != nil {
		t.Fatal(err)
	}
	hrefs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#timeline a')].map(a => a.href.baseVal !== undefined ? new URL(a.href.baseVal, location.href).href : a.href)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(hrefs) == 0 {
		t.Error("the chart links to no turn")
	}
	for _, h := range hrefs {
		u, err := url.Parse(h)
		if err != nil {
			t.Fatal(err)
		}
		trace := u.Query().Get("turn")
		if trace == "" {
			trace = strings.TrimPrefix(u.Fragment, "t-")
		}
		if _, err := chromedp.RunResponse(ctx, chromedp.Navigate(h)); err != nil {
			t.Fatal(err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[shown](readPage))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(got.Turns, func(tr shownTurn) bool { return tr.Trace == trace }) {
			t.Errorf("the chart's link %s does not show turn %s", h, trace)
		}
	}
	// The alert Alertmanager holds is in the box, and its link is its turn.
	if _, err := chromedp.Run(ctx, chromedp.Navigate(base)); err != nil {
		t.Fatal(err)
	}
	page, err := chromedp.Run(ctx, chromedp.Evaluate[shown](readPage))
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Alerts) != 1 || page.Alerts[0].Name != "PercausePoolResetMoved" || !strings.HasSuffix(page.Alerts[0].Href, "?turn="+poolTurn) {
		t.Fatalf("the alerts box shows %+v, want PercausePoolResetMoved linking to turn %s", page.Alerts, poolTurn)
	}
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`#alerts li a`))); err != nil {
		t.Fatal(err)
	}
	turn, err := chromedp.Run(ctx, chromedp.Evaluate[shown](readPage))
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Turns) != 1 || turn.Turns[0].Trace != poolTurn || turn.Turns[0].Cause != "pool" {
		t.Errorf("the alert's link shows %+v, want the pool turn %s", turn.Turns, poolTurn)
	}
}

// checkPhoneLayout loads u at the viewport set (390 px) and checks that
// the page does not scroll sideways and that no word is broken inside.
func checkPhoneLayout(t *testing.T, ctx context.Context, u string) {
	t.Helper()
	name := u
	if strings.HasPrefix(u, "data:") {
		name = "the page as a data: URL"
	}
	if _, err := chromedp.Run(ctx, chromedp.Navigate(u)); err != nil {
		t.Fatal(err)
	}
	width, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.documentElement.scrollWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if width > 390 {
		t.Errorf("%s: at phone width the page is %.0f px wide: it scrolls sideways", name, width)
	}
	broken, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](brokenWords))
	if err != nil {
		t.Fatal(err)
	}
	if len(broken) > 0 {
		t.Errorf("%s: at phone width these words are broken across lines: %q", name, broken)
	}
}

// screenshotOf loads u and captures the viewport.
func screenshotOf(u string) chromedp.Action[[]byte] {
	return func(ctx context.Context, tg *chromedp.Target) ([]byte, error) {
		if _, err := chromedp.Navigate(u)(ctx, tg); err != nil {
			return nil, err
		}
		return chromedp.CaptureScreenshot()(ctx, tg)
	}
}

func checkAgainstTheLab(t *testing.T, got shown, res *lab.Result, decided map[string]verdicts.Verdict, rerun bool) {
	t.Helper()
	if got.Title != "percause: verdicts" {
		t.Errorf("title %q", got.Title)
	}
	// The counts: every verdict the collector made, by primary cause.
	want := map[string]int{}
	for _, v := range decided {
		want[v.Cause]++
	}
	if got.Total != len(decided) || len(got.Turns) != len(decided) {
		t.Errorf("the page counts %d turns and lists %d; the collector decided %d", got.Total, len(got.Turns), len(decided))
	}
	for c, n := range want {
		if got.ByCause[c] != n {
			t.Errorf("the page counts %d %s turns, the collector decided %d", got.ByCause[c], c, n)
		}
	}
	for c := range got.ByCause {
		if want[c] == 0 {
			t.Errorf("the page counts %s turns the collector never decided", c)
		}
	}
	// Each of the lab's turns, with the verdict the lab got, its causes,
	// its evidence shown, and the take readings behind its underruns.
	byTrace := map[string]int{}
	for i, tr := range got.Turns {
		byTrace[tr.Trace] = i
	}
	evidenceShown := false
	maxPool := 0
	for _, tr := range res.Turns {
		maxPool = max(maxPool, tr.Readings.PoolResets)
		i, ok := byTrace[tr.TraceID]
		if !ok {
			t.Errorf("%s turn %d (%s) is not on the page", tr.Scenario, tr.Turn, tr.TraceID)
			continue
		}
		p := got.Turns[i]
		if p.Cause != tr.Cause || p.Evidence != tr.Evidence || p.Causes != strings.Join(tr.Causes, ", ") {
			t.Errorf("%s turn %d: the page shows %s [%s] %q; the lab got %s %v %q", tr.Scenario, tr.Turn, p.Cause, p.Causes, p.Evidence, tr.Cause, tr.Causes, tr.Evidence)
		}
		if p.Height <= 0 || (tr.Evidence != "" && p.Evidence == "") {
			t.Errorf("%s turn %d: its evidence is not visible", tr.Scenario, tr.Turn)
		}
		if strings.Contains(p.Route, "(Bluetooth)") != tr.Readings.Bluetooth {
			t.Errorf("%s turn %d: route %q, the lab's route was Bluetooth: %v", tr.Scenario, tr.Turn, p.Route, tr.Readings.Bluetooth)
		}
		var needs, cushions []string
		for _, u := range tr.Readings.PerUnit {
			if u.Underruns > 0 {
				needs = append(needs, fmt.Sprintf("%.2f s", u.Need))
				cushions = append(cushions, fmt.Sprintf("%.2f s", tr.Readings.Cushion))
			}
		}
		if tr.Cause == "network" || tr.Cause == "synthesis" {
			if !slices.Equal(p.Needs, needs) || !slices.Equal(p.Cushions, cushions) {
				t.Errorf("%s turn %d: the page reads need %v against cushion %v; the lab's units that underran: need %v, cushion %v",
					tr.Scenario, tr.Turn, p.Needs, p.Cushions, needs, cushions)
			}
			evidenceShown = evidenceShown || (strings.Contains(p.Evidence, "need") && len(p.Needs) > 0)
		}
	}
	if !evidenceShown {
		t.Error("no turn of the network or synthesis scenarios shows its evidence with its take readings")
	}
	// The done reading: the pool scenario moved the tally, so the day is
	// not done, and the highest tally is the lab's.
	if got.Done != "no" {
		t.Errorf("the page says done %q for a day with the pool scenario's resets", got.Done)
	}
	if !rerun {
		wantPool := fmt.Sprintf("pool_reset at 0: highest tally %d", maxPool)
		if !slices.ContainsFunc(got.Reasons, func(r string) bool { return strings.Contains(r, wantPool) }) {
			t.Errorf("the done reading says %q, want %q", got.Reasons, wantPool)
		}
	}
	// Each turn's card carries the link status changes the lab's phone
	// recorded during it, and the list of changes has them all.
	for _, tr := range res.Turns {
		i, ok := byTrace[tr.TraceID]
		if !ok {
			continue
		}
		want, shown := slices.Clone(tr.Readings.LinkStatuses), slices.Clone(got.Turns[i].LinkStatus)
		slices.Sort(want)
		slices.Sort(shown)
		if !slices.Equal(want, shown) {
			t.Errorf("%s turn %d: the phone showed %v during it; its card shows %v", tr.Scenario, tr.Turn, want, shown)
		}
	}
	if len(got.Links) == 0 {
		t.Error("no link status change listed: the lost-link scenarios record some")
	}
	// Red marks only what a rule read; the forced reason is not a cause.
	for _, p := range got.Turns {
		v := decided[p.Trace]
		for _, r := range p.Red {
			if (r == "pool_reset" && !slices.Contains(v.Causes, "pool")) || (r == "underruns" && v.Cause == "none") || r == "speech end to post" || r == "not sent" {
				t.Errorf("turn %s (%s %v): %q is red, which no rule read", p.Trace, v.Cause, v.Causes, r)
			}
		}
		if v.Forced != "" && (p.Forced != dayreport.ForcedReason(v.Forced) || slices.Contains(semconv.Causes, p.Forced)) {
			t.Errorf("turn %s decided early (%s) reads %q", p.Trace, v.Forced, p.Forced)
		}
	}
}

// weight is the bytes of one page served.
type weight struct {
	Range     string
	Raw, Gzip int
}

func measureWeights(t *testing.T, base string) []weight {
	t.Helper()
	var out []weight
	queries := []string{}
	for _, r := range Ranges {
		queries = append(queries, "range="+r.Key)
	}
	// The page with no turn: what the turns listed add to it.
	queries = append(queries, "range=all&installation=nobody")
	for _, q := range queries {
		w := weight{Range: q}
		for _, enc := range []string{"identity", "gzip"} {
			req, _ := http.NewRequest(http.MethodGet, base+"?"+q, nil)
			req.Header.Set("Accept-Encoding", enc)
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if enc == "gzip" {
				w.Gzip = len(b)
			} else {
				w.Raw = len(b)
			}
		}
		out = append(out, w)
	}
	return out
}

func writeMeasurements(t *testing.T, turns int, ws []weight, desktop, phone timing) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# The verdict page, measured\n\n")
	fmt.Fprintf(&b, "Written by `TestPageInChromium` (`internal/page/verdictpage/browser_test.go`) with `-update`: the real\n")
	fmt.Fprintf(&b, "collector fed by every lab scenario (%d turns), its page read in headless Chromium. The test\n", turns)
	fmt.Fprintf(&b, "measures these; it asserts nothing on time.\n\n")
	fmt.Fprintf(&b, "| query | HTML served | gzip |\n|---|---|---|\n")
	for _, w := range ws {
		fmt.Fprintf(&b, "| `?%s` | %d bytes | %d bytes |\n", w.Range, w.Raw, w.Gzip)
	}
	empty, full := ws[len(ws)-1], ws[len(ws)-2]
	listed := min(turns, pageTurns)
	fmt.Fprintf(&b, "\nEvery range holds the same %d turns here: the lab's run lasts minutes. The last row is the\n", turns)
	fmt.Fprintf(&b, "page with no turn (an installation that sent none): the %d turns, %d of them listed, add %d bytes (%d gzip),\n",
		turns, listed, full.Raw-empty.Raw, full.Gzip-empty.Gzip)
	fmt.Fprintf(&b, "about %d bytes a listed turn with its share of the chart and the link changes.\n", (full.Raw-empty.Raw)/max(listed, 1))
	fmt.Fprintf(&b, "A page of the list holds `page.turns` turns (50 by default; %d in this test, so the lab's turns\n", pageTurns)
	fmt.Fprintf(&b, "fill %d pages); the rest of the page (the chart, the alerts box) grows with the range, not the list.\n\n", (turns+pageTurns-1)/pageTurns)
	fmt.Fprintf(&b, "| viewport | first contentful paint | first byte | DOM ready | load |\n|---|---|---|---|---|\n")
	for _, r := range []struct {
		name string
		t    timing
	}{{"desktop 1280×900", desktop}, {"phone 390×844", phone}} {
		fmt.Fprintf(&b, "| %s | %.0f ms | %.0f ms | %.0f ms | %.0f ms |\n", r.name, r.t.FCP, r.t.TTFB, r.t.DOMReady, r.t.Load)
	}
	fmt.Fprintf(&b, "\nThe screenshots beside this file: `desktop.png`, `phone.png` (the alerts box above \"Done?\", with\n")
	fmt.Fprintf(&b, "Alertmanager's firing alert), `phone-turn.png` (a synthesis turn, its take's need against the cushion)\n")
	fmt.Fprintf(&b, "and `phone-link.png` (an engine restart's turn at its permalink, the phone's status line during it).\n")
	if err := os.WriteFile(filepath.Join(pageDocs, "README.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkToken: the page exposed on every interface behind a bearer token
// answers the browser 401 without the token and with a wrong one, and the
// page with the right one.
func checkToken(t *testing.T, ctx context.Context) {
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		t.Fatal(err)
	}
	token := hex.EncodeToString(tok)
	cfg := pageConfig(t, true)
	b, _ := os.ReadFile(cfg)
	port := regexp.MustCompile(`endpoint: 0\.0\.0\.0:(\d+)`).FindSubmatch(b)
	if port == nil {
		t.Fatalf("no exposed endpoint in\n%s", b)
	}
	testenv.StartCollector(t, testenv.WithCollectorConfig(cfg), testenv.WithCollectorEnv("PERCAUSE_PAGE_TOKEN", token))
	u := "http://127.0.0.1:" + string(port[1]) + "/"
	if _, err := strconv.Atoi(string(port[1])); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		header string
		want   int64
	}{
		{"no token", "", 401},
		{"a wrong token", "Bearer not-" + token, 401},
		{"the token without its scheme", token, 401},
		{"the token", "Bearer " + token, 200},
	} {
		hdr := network.Headers{}
		if c.header != "" {
			hdr["Authorization"] = c.header
		}
		if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: hdr}); err != nil {
			t.Fatal(err)
		}
		resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(u))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if resp.Status != c.want {
			t.Errorf("%s: HTTP %d, want %d", c.name, resp.Status, c.want)
		}
		title, err := chromedp.Run(ctx, chromedp.Title())
		if err != nil {
			t.Fatal(err)
		}
		if (title == "percause: verdicts") != (c.want == 200) {
			t.Errorf("%s: the browser shows %q", c.name, title)
		}
	}
}
