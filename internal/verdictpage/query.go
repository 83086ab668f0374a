package verdictpage

import (
	"errors"
	"fmt"
	"net/url"
	"time"
	"unicode"
	"unicode/utf8"
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

// Query parameters of the served page.
const (
	ParamRange        = "range"
	ParamInstallation = "installation"
)

// Query errors.
var (
	ErrRange        = errors.New("unknown range")
	ErrInstallation = errors.New("installation must be printable text of at most 128 bytes")
)

// Query is what a request to the served page asks for: a range and an
// installation ("" for every installation).
type Query struct {
	Range        string
	Installation string
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
	q := Query{Range: v.Get(ParamRange), Installation: v.Get(ParamInstallation)}
	if q.Range == "" {
		q.Range = DefaultRange
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

// Encode is the query string that asks for q (defaults left out).
func (q Query) Encode() string {
	v := url.Values{}
	if q.Range != DefaultRange {
		v.Set(ParamRange, q.Range)
	}
	if q.Installation != "" {
		v.Set(ParamInstallation, q.Installation)
	}
	return v.Encode()
}

func clip(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}
