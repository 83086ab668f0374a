package verdictpage

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/percause/percause/instr/semconv"
)

// RangeChoice is one range the served page offers.
type RangeChoice struct {
	Key   string
	Label string
	// Span is how far back from now the range reaches; 0 is everything
	// the store keeps.
	Span time.Duration
}

// Ranges are the ranges the served page offers, shortest first.
var Ranges = []RangeChoice{
	{"1h", "last hour", time.Hour},
	{"6h", "last 6 hours", 6 * time.Hour},
	{"24h", "last 24 hours", 24 * time.Hour},
	{"7d", "last 7 days", 7 * 24 * time.Hour},
	{"all", "everything kept", 0},
}

// DefaultRange is the range shown when none is asked for.
const DefaultRange = "24h"

// MaxInstallation bounds an installation named in a query (a UUID is 36).
const MaxInstallation = 128

// MaxPage bounds the page of turns a query may ask for: with the store's
// bounds (keep.turns) no list is longer.
const MaxPage = 100000

// Query parameters of the served page.
const (
	ParamRange        = "range"
	ParamInstallation = "installation"
	ParamCause        = "cause"
	ParamPage         = "page"
	ParamTurn         = "turn"
	ParamFormat       = "format"
)

// FormatText is the one format a turn's permalink answers besides the
// page: the text `percause turn` prints (dayreport.WriteTurn).
const FormatText = "text"

// Query errors.
var (
	ErrRange        = errors.New("unknown range")
	ErrInstallation = errors.New("installation must be printable text of at most 128 bytes")
	ErrCause        = errors.New("unknown cause")
	ErrPage         = errors.New("page must be a whole number from 1 to 100000")
	ErrTurn         = errors.New("turn must be a trace ID: 32 hexadecimal digits, not all zero")
	ErrFormat       = errors.New("format must be text, and only with turn")
)

// Query is what a request to the served page asks for: a range, an
// installation ("" for every installation), the cause the list of turns
// is filtered by ("" for every cause) and its page (from 1); or one turn
// (its permalink, Turn a trace ID in lowercase hex), as the page or, with
// Format "text", as text.
type Query struct {
	Range        string
	Installation string
	Cause        string
	Page         int
	Turn         string
	Format       string
}

// Choice is the range asked for.
func (q Query) Choice() RangeChoice {
	for _, r := range Ranges {
		if r.Key == q.Range {
			return r
		}
	}
	return Ranges[2]
}

// ParseQuery reads a request's query. Missing parameters take their
// defaults; an unknown range or an installation that cannot be one is an
// error (the page answers 400). Only the first value of a parameter counts.
func ParseQuery(v url.Values) (Query, error) {
	q := Query{Range: v.Get(ParamRange), Installation: v.Get(ParamInstallation), Cause: v.Get(ParamCause), Page: 1,
		Turn: strings.ToLower(v.Get(ParamTurn)), Format: v.Get(ParamFormat)}
	if q.Range == "" {
		q.Range = DefaultRange
	}
	if q.Cause != "" && !slices.Contains(semconv.Causes, q.Cause) {
		return Query{}, fmt.Errorf("%w %q (one of %s)", ErrCause, clip(q.Cause), strings.Join(semconv.Causes, ", "))
	}
	if p := v.Get(ParamPage); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > MaxPage || strconv.Itoa(n) != p {
			return Query{}, ErrPage
		}
		q.Page = n
	}
	if q.Turn != "" && !TraceID(q.Turn) {
		return Query{}, ErrTurn
	}
	if q.Format != "" && (q.Format != FormatText || q.Turn == "") {
		return Query{}, ErrFormat
	}
	known := false
	for _, r := range Ranges {
		known = known || r.Key == q.Range
	}
	if !known {
		return Query{}, fmt.Errorf("%w %q (one of 1h, 6h, 24h, 7d, all)", ErrRange, clip(q.Range))
	}
	if len(q.Installation) > MaxInstallation || !utf8.ValidString(q.Installation) {
		return Query{}, ErrInstallation
	}
	for _, r := range q.Installation {
		if !unicode.IsPrint(r) {
			return Query{}, ErrInstallation
		}
	}
	return q, nil
}

// TraceID reports whether s is a trace ID as the page names one: 32
// lowercase hexadecimal digits, not all zero (OTLP's invalid ID).
func TraceID(s string) bool {
	if len(s) != 32 || strings.ToLower(s) != s {
		return false
	}
	b, err := hex.DecodeString(s)
	return err == nil && strings.Trim(s, "0") != "" && len(b) == 16
}

// Encode is the query string that asks for q (defaults left out).
func (q Query) Encode() string {
	v := url.Values{}
	if q.Range != DefaultRange && q.Range != "" {
		v.Set(ParamRange, q.Range)
	}
	if q.Installation != "" {
		v.Set(ParamInstallation, q.Installation)
	}
	if q.Cause != "" {
		v.Set(ParamCause, q.Cause)
	}
	if q.Page > 1 {
		v.Set(ParamPage, strconv.Itoa(q.Page))
	}
	if q.Turn != "" {
		v.Set(ParamTurn, q.Turn)
	}
	if q.Format != "" {
		v.Set(ParamFormat, q.Format)
	}
	return v.Encode()
}

// Href is the served page's link to q: relative to the page, so it holds
// behind a prefix (tailscale serve) as at the root.
func (q Query) Href() string {
	if e := q.Encode(); e != "" {
		return "./?" + e
	}
	return "./"
}

// TurnHref is the permalink of the turn with this trace ID.
func TurnHref(trace string) string {
	return Query{Range: DefaultRange, Turn: trace}.Href()
}

func clip(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

// Trace is the trace ID of the turn asked for.
func (q Query) Trace() string { return q.Turn }
