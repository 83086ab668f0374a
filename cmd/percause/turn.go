package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/leaf/envvars"
	"github.com/percause/percause/internal/page/dayreport"
	"github.com/percause/percause/internal/page/verdictpage"
)

func init() {
	register(subcommand{
		name:    "turn",
		summary: "one turn's verdict, evidence and readings, by its trace ID: from the verdict file or a running collector's page",
		run: func(ctx context.Context, args []string) int {
			return runTurn(ctx, args, os.Getenv, os.Stdout, os.Stderr)
		},
	})
}

// pageTimeout bounds asking a collector's page for a turn.
const pageTimeout = 10 * time.Second

// defaultVerdictFile is where the embedded default writes the verdicts,
// from the same variables (collector-config/local.yaml).
func defaultVerdictFile(getenv func(string) string) string {
	if f := getenv("PERCAUSE_VERDICT_FILE"); f != "" {
		return f
	}
	dir := getenv("PERCAUSE_DATA_DIR")
	if dir == "" {
		dir = "./percause-data"
	}
	return filepath.Join(dir, "verdicts.jsonl")
}

func runTurn(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("turn", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("file", "", "the verdict `FILE` (default: $PERCAUSE_VERDICT_FILE, else $PERCAUSE_DATA_DIR/verdicts.jsonl, else ./percause-data/verdicts.jsonl); its rotated copies FILE.1, FILE.2, … are read too")
	page := fs.String("page", "", "ask a running collector's verdict page at `URL` instead (e.g. http://127.0.0.1:9465/); $PERCAUSE_PAGE_TOKEN, if set, is sent as its bearer token")
	budget := fs.Duration("post-budget", semconv.DefaultPostBudget, "the done reading's allowance for speech-end-to-post (with --file; the page uses its own)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: percause turn [--file FILE | --page URL] TRACE")
		fmt.Fprintln(stderr, "Prints one turn's verdict, evidence and readings, and what rule 1 read of each unit that underran, by the")
		fmt.Fprintln(stderr, "turn's trace ID (32 hex digits, as the page's ?turn= permalink names it), with the phone's link status")
		fmt.Fprintln(stderr, "changes during the turn. The verdict file holds every verdict and link change; the page keeps the recent ones.")
		fs.PrintDefaults()
		envvars.Help(stderr, "turn")
	}
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if len(rest) != 1 {
		fmt.Fprintln(stderr, "turn: name one trace ID")
		fs.Usage()
		return exitUsage
	}
	trace := strings.ToLower(rest[0])
	if !verdictpage.TraceID(trace) {
		fmt.Fprintf(stderr, "turn: %q is not a trace ID (32 hexadecimal digits, not all zero)\n", rest[0])
		return exitUsage
	}
	if *file != "" && *page != "" {
		fmt.Fprintln(stderr, "turn: --file and --page are two places to look: name one")
		return exitUsage
	}
	if *budget <= 0 {
		fmt.Fprintln(stderr, "turn: --post-budget must be positive")
		return exitUsage
	}
	if *page != "" {
		return turnFromPage(ctx, *page, trace, getenv("PERCAUSE_PAGE_TOKEN"), stdout, stderr)
	}
	path := *file
	if path == "" {
		path = defaultVerdictFile(getenv)
	}
	t, links, found, err := turnFromFile(path, trace)
	if err != nil {
		fmt.Fprintf(stderr, "turn: %v\n", err)
		return exitFailed
	}
	if !found {
		fmt.Fprintf(stderr, "turn: no verdict for trace %s in %s (nor its rotated copies)\n", trace, path)
		return exitFailed
	}
	if err := dayreport.WriteTurn(stdout, t, links, budget.Seconds(), time.Local); err != nil {
		fmt.Fprintf(stderr, "turn: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// turnFromFile finds the turn's verdict in the verdict file, then in its
// rotated copies, newest first, with the link status changes of its trace
// the files read hold (the verdicts exporter writes them beside the
// verdicts). Only the lines that name the trace ID are decoded: the file
// can be a hundred megabytes.
func turnFromFile(path, trace string) (dayreport.JudgedTurn, []dayreport.LinkChange, bool, error) {
	var links []dayreport.LinkChange
	for i := 0; ; i++ {
		p := path
		if i > 0 {
			p = fmt.Sprintf("%s.%d", path, i)
		}
		f, err := os.Open(p)
		if errors.Is(err, os.ErrNotExist) && i > 0 {
			return dayreport.JudgedTurn{}, nil, false, nil
		}
		if err != nil {
			return dayreport.JudgedTurn{}, nil, false, err
		}
		t, ls, found, err := findTurn(f, trace)
		f.Close()
		links = append(ls, links...) // an older file's first
		if err != nil || found {
			return t, links, found, err
		}
	}
}

func findTurn(r io.Reader, trace string) (dayreport.JudgedTurn, []dayreport.LinkChange, bool, error) {
	var lines bytes.Buffer
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), []byte(trace)) {
			lines.Write(sc.Bytes())
			lines.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return dayreport.JudgedTurn{}, nil, false, err
	}
	day, err := dayreport.Read(&lines)
	if err != nil {
		return dayreport.JudgedTurn{}, nil, false, err
	}
	t, ok := verdictpage.Find(day.Turns, trace)
	return t, dayreport.LinksOf(day.Links, trace), ok && t.Cause != "", nil
}

// turnFromPage asks the page at base for the turn as text (the same
// rendering, dayreport.WriteTurn, with the link status changes the page
// keeps) and prints it.
func turnFromPage(ctx context.Context, base, trace, token string, stdout, stderr io.Writer) int {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "turn: --page must be the page's http(s) URL, got %q\n", base)
		return exitUsage
	}
	u.RawQuery = url.Values{verdictpage.ParamTurn: {trace}, verdictpage.ParamFormat: {verdictpage.FormatText}}.Encode()
	ctx, cancel := context.WithTimeout(ctx, pageTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		fmt.Fprintf(stderr, "turn: %v\n", err)
		return exitFailed
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "turn: asking the page: %v\n", err)
		return exitFailed
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		fmt.Fprintf(stderr, "turn: reading the page's answer: %v\n", err)
		return exitFailed
	}
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "turn: the page answered %s: %s\n", resp.Status, strings.TrimSpace(string(body)))
		return exitFailed
	}
	if _, err := stdout.Write(body); err != nil {
		fmt.Fprintf(stderr, "turn: %v\n", err)
		return exitFailed
	}
	return exitOK
}
