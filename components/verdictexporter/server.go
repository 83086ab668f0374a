package verdictexporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.uber.org/zap"

	"github.com/percause/percause/internal/page/dayreport"
	"github.com/percause/percause/internal/page/verdictpage"
)

// PageTitle heads the served page.
const PageTitle = "percause: verdicts"

// startServer listens where http says, with the collector's own HTTP
// server settings (TLS, the authenticator, …), and serves the page.
func (e *verdictExporter) startServer(ctx context.Context, host component.Host) error {
	sc := *e.cfg.HTTP.Get()
	ln, err := sc.ToListener(ctx)
	if err != nil {
		return err
	}
	srv, err := sc.ToServer(ctx, host.GetExtensions(), e.telset, http.HandlerFunc(e.servePage),
		confighttp.WithErrorHandler(e.serverError))
	if err != nil {
		ln.Close()
		return err
	}
	e.server, e.served, e.addr = srv, make(chan struct{}), ln.Addr().String()
	e.logger.Info("verdict exporter: serving the verdict page", zap.String("endpoint", ln.Addr().String()))
	go func() {
		defer close(e.served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.logger.Error("verdict exporter: the page's server stopped", zap.Error(err))
		}
	}()
	return nil
}

// bearerChallenge is the WWW-Authenticate of a 401 (RFC 6750): the
// authenticator the page names is bearertokenauth.
const bearerChallenge = `Bearer realm="percause verdicts"`

// serverError answers what the collector's HTTP server refuses before the
// page sees the request. The authenticator's 401 gets the Bearer challenge
// a client needs to know what to send, and is counted: a refused token is
// someone at the door.
func (e *verdictExporter) serverError(w http.ResponseWriter, r *http.Request, msg string, code int) {
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", bearerChallenge)
		e.tel.ExporterVerdictsPageUnauthorized.Add(r.Context(), 1)
	}
	http.Error(w, msg, code)
}

// servePage answers GET / with the page for the query's range and
// installation.
func (e *verdictExporter) servePage(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", verdictpage.CSP+"; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	refuse := func(code int, msg string) {
		e.tel.ExporterVerdictsPageRefused.Add(r.Context(), 1)
		http.Error(w, msg, code)
	}
	if r.URL.Path != "/" {
		refuse(http.StatusNotFound, "not found: the verdict page is at /")
		return
	}
	if r.Method == http.MethodPost && e.cfg.Page.Alertmanager != "" {
		e.serveLift(w, r, refuse)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		refuse(http.StatusMethodNotAllowed, "the verdict page answers GET")
		return
	}
	q, err := verdictpage.ParseQuery(r.URL.Query())
	if err != nil {
		refuse(http.StatusBadRequest, err.Error())
		return
	}
	var buf bytes.Buffer
	code, contentType := http.StatusOK, "text/html; charset=utf-8"
	page, found := e.pageFor(r.Context(), q)
	switch {
	case q.Format == verdictpage.FormatText && !found:
		refuse(http.StatusNotFound, fmt.Sprintf("no turn with trace ID %s is kept here; the verdict file has every verdict", q.Turn))
		return
	case q.Format == verdictpage.FormatText:
		// The turn as `percause turn` prints it, for `percause turn --page`.
		contentType = "text/plain; charset=utf-8"
		err = dayreport.WriteTurn(&buf, page.Turns[0], page.Links, page.Budget, page.Loc)
	default:
		if !found {
			code = http.StatusNotFound
		}
		err = verdictpage.Render(&buf, page)
	}
	if err != nil {
		e.logger.Error("verdict exporter: rendering the page", zap.Error(err))
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	e.tel.ExporterVerdictsPageServed.Add(r.Context(), 1)
	h.Set("Content-Type", contentType)
	h.Add("Vary", "Accept-Encoding")
	body := buf.Bytes()
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
		_, _ = zw.Write(body)
		if zw.Close() == nil {
			h.Set("Content-Encoding", "gzip")
			body = z.Bytes()
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// pageFor is the page for q from what the store keeps now, with what
// Alertmanager says is firing when the page knows one; found is false for
// a turn's permalink whose turn is not kept.
func (e *verdictExporter) pageFor(ctx context.Context, q verdictpage.Query) (page verdictpage.Page, found bool) {
	store := e.watch()
	var alerts *verdictpage.Alerts
	if e.cfg.Page.Alertmanager != "" {
		alerts = firingAlerts(ctx, e.alertClient, e.cfg.Page.Alertmanager)
		store.linkAlertsToTurns(alerts.Firing)
	}
	if q.Turn == "" {
		p := e.dayPage(q)
		p.Alerts = alerts
		return p, true
	}
	t, links, ok := store.turn(q.Turn)
	p := verdictpage.Page{
		Title: PageTitle, Now: e.now(), Loc: time.Local, Query: &q,
		Budget: e.cfg.Page.PostBudget.Seconds(), Alerts: alerts, Listed: e.cfg.Page.Turns,
	}
	if ok {
		p.Turns, p.Links = []dayreport.JudgedTurn{t}, links
	}
	return p, ok
}

// dayPage is the page of the range and installation q asks for.
func (e *verdictExporter) dayPage(q verdictpage.Query) verdictpage.Page {
	now := e.now()
	choice := q.Choice()
	var from time.Time
	if choice.Span > 0 {
		from = now.Add(-choice.Span)
	}
	turns, links, installations, kept, keptLinks := e.page.snapshot(from, now)
	turns, links = verdictpage.Within(turns, links, time.Time{}, time.Time{}, q.Installation)
	k := e.cfg.Keep
	return verdictpage.Page{
		Title: PageTitle, Now: now, Loc: time.Local,
		From: from, To: now, RangeLabel: choice.Label,
		Query: &q, Installations: installations,
		Turns: turns, Links: links,
		Budget:  e.cfg.Page.PostBudget.Seconds(),
		Refresh: e.cfg.Page.Refresh,
		Listed:  e.cfg.Page.Turns,
		Kept: fmt.Sprintf("Kept from the verdict file: %d turns and %d link status changes (at most %d turns and %d changes, of the last %s).",
			kept, keptLinks, k.Turns, k.LinkChanges, days(k.Age)),
	}
}

func days(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		if d == 24*time.Hour {
			return "1 day"
		}
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}

// acceptsGzip reads Accept-Encoding: gzip named without q=0.
func acceptsGzip(ae string) bool {
	for _, part := range strings.Split(ae, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
				if q, err := strconv.ParseFloat(v, 64); err == nil && q == 0 {
					return false
				}
			}
		}
		return true
	}
	return false
}

// serveLift answers the alerts box's form: POST / with lift=ID lifts that
// silence, if percause up made it, and sends the browser back to the box.
// Only the page's own form may: a request another site makes the browser
// send (its Sec-Fetch-Site or Origin says so) is refused.
func (e *verdictExporter) serveLift(w http.ResponseWriter, r *http.Request, refuse func(int, string)) {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		refuse(http.StatusForbidden, "only the page's own form lifts a silence")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host && o != "https://"+r.Host {
		refuse(http.StatusForbidden, "only the page's own form lifts a silence")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		refuse(http.StatusBadRequest, err.Error())
		return
	}
	id := r.PostForm.Get("lift")
	if !silenceID(id) {
		refuse(http.StatusBadRequest, "lift: not a silence ID")
		return
	}
	code, err := liftSilence(r.Context(), e.alertClient, e.cfg.Page.Alertmanager, id)
	if err != nil {
		refuse(code, err.Error())
		return
	}
	e.logger.Info("verdict exporter: lifted a silence from the page", zap.String("silence", id))
	http.Redirect(w, r, "./#alerts", http.StatusSeeOther)
}
