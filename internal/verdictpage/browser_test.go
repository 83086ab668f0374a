package verdictpage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	"github.com/percause/percause/internal/testenv"
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

// pageConfig is local.yaml with every turn listed and, with token, the
// page exposed on every interface behind bearertokenauth/page (its token
// from PERCAUSE_PAGE_TOKEN).
func pageConfig(t *testing.T, token bool) string {
	t.Helper()
	var cfg map[string]any
	if err := yaml.Unmarshal(collectorconfig.Local, &cfg); err != nil {
		t.Fatal(err)
	}
	v := cfg["exporters"].(map[string]any)["verdicts"].(map[string]any)
	v["page"].(map[string]any)["turns"] = 1000
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
	Turns   []struct {
		Trace    string   `json:"trace"`
		Cause    string   `json:"cause"`
		Evidence string   `json:"evidence"`
		Causes   string   `json:"causes"`
		Route    string   `json:"route"`
		Needs    []string `json:"needs"`
		Cushions []string `json:"cushions"`
		Height   float64  `json:"height"`
	} `json:"turns"`
}

const readPage = `(() => {
  const q = s => document.querySelector(s);
  const text = (el, s) => { const e = el.querySelector(s); return e ? e.innerText : ""; };
  const byCause = {};
  document.querySelectorAll('#by-cause li[data-cause]').forEach(li => byCause[li.dataset.cause] = +li.dataset.n);
  return {
    title: document.title,
    total: +q('#turns-total strong').dataset.n,
    done: q('#done').dataset.done,
    reasons: [...document.querySelectorAll('#done li')].map(li => li.innerText),
    byCause,
    links: [...document.querySelectorAll('#links tr[data-status]')].map(tr => tr.dataset.status),
    turns: [...document.querySelectorAll('li.turn')].map(li => ({
      trace: li.dataset.trace,
      cause: text(li, '[data-field=cause]'),
      evidence: text(li, '[data-field=evidence]'),
      causes: text(li, '[data-field=causes]'),
      route: text(li, '[data-field=route]'),
      needs: [...li.querySelectorAll('[data-field=need]')].map(e => e.innerText),
      cushions: [...li.querySelectorAll('[data-field=cushion]')].map(e => e.innerText),
      height: li.getBoundingClientRect().height,
    })),
  };
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

	col := testenv.StartCollector(t, testenv.WithCollectorConfig(pageConfig(t, false)),
		testenv.WithCollectorEnv(testenv.EnvVerdictWait, lab.DefaultVerdictWait))
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

	// Desktop first: what the page shows, against the lab's turns.
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
	got, err := chromedp.Run(ctx, chromedp.Evaluate[shown](readPage))
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstTheLab(t, got, res, decided, rerun)

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
	// A turn whose underrun was read against its take, at phone width.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector('li.turn[data-cause=synthesis]').scrollIntoView(), true)`)); err != nil {
		t.Fatal(err)
	}
	if shots["phone-turn.png"], err = chromedp.Run(ctx, chromedp.CaptureScreenshot()); err != nil {
		t.Fatal(err)
	}
	narrow, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.documentElement.scrollWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if narrow > 390 {
		t.Errorf("at phone width the page is %.0f px wide: it scrolls sideways", narrow)
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

	t.Run("behind a token", func(t *testing.T) { checkToken(t, ctx) })
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
	// The link status changes the lab's phones recorded during their turns
	// are listed.
	for _, tr := range res.Turns {
		for _, s := range tr.Readings.LinkStatuses {
			if !slices.Contains(got.Links, s) {
				t.Errorf("%s turn %d: the phone showed %s; the page's link changes are %v", tr.Scenario, tr.Turn, s, got.Links)
			}
		}
	}
	if len(got.Links) == 0 {
		t.Error("no link status change listed: the lost-link scenarios record some")
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
	fmt.Fprintf(&b, "Written by `TestPageInChromium` (`internal/verdictpage/browser_test.go`) with `-update`: the real\n")
	fmt.Fprintf(&b, "collector fed by every lab scenario (%d turns), its page read in headless Chromium. The test\n", turns)
	fmt.Fprintf(&b, "measures these; it asserts nothing on time.\n\n")
	fmt.Fprintf(&b, "| query | HTML served | gzip |\n|---|---|---|\n")
	for _, w := range ws {
		fmt.Fprintf(&b, "| `?%s` | %d bytes | %d bytes |\n", w.Range, w.Raw, w.Gzip)
	}
	empty, full := ws[len(ws)-1], ws[len(ws)-2]
	fmt.Fprintf(&b, "\nEvery range holds the same %d turns here: the lab's run lasts minutes. The last row is the\n", turns)
	fmt.Fprintf(&b, "page with no turn (an installation that sent none): each turn listed adds about %d bytes (%d gzip).\n",
		(full.Raw-empty.Raw)/max(turns, 1), (full.Gzip-empty.Gzip)/max(turns, 1))
	fmt.Fprintf(&b, "The page lists up to `page.turns` turns (50 by default; 1000 in this test, so every turn is listed).\n\n")
	fmt.Fprintf(&b, "| viewport | first contentful paint | first byte | DOM ready | load |\n|---|---|---|---|---|\n")
	for _, r := range []struct {
		name string
		t    timing
	}{{"desktop 1280×900", desktop}, {"phone 390×844", phone}} {
		fmt.Fprintf(&b, "| %s | %.0f ms | %.0f ms | %.0f ms | %.0f ms |\n", r.name, r.t.FCP, r.t.TTFB, r.t.DOMReady, r.t.Load)
	}
	fmt.Fprintf(&b, "\nThe screenshots beside this file: `desktop.png`, `phone.png` and `phone-turn.png` (a synthesis turn,\nits take's need against the cushion).\n")
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
