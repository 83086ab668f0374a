package verdictpage

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestParseQuery(t *testing.T) {
	for raw, want := range map[string]Query{
		"":                                {Range: DefaultRange, Page: 1},
		"range=7d":                        {Range: "7d", Page: 1},
		"range=all&installation=abc":      {Range: "all", Installation: "abc", Page: 1},
		"installation=a%20b&range=1h&x=1": {Range: "1h", Installation: "a b", Page: 1},
		"range=6h&range=junk":             {Range: "6h", Page: 1},
		"installation=" + strings.Repeat("x", MaxInstallation): {Range: DefaultRange, Installation: strings.Repeat("x", MaxInstallation), Page: 1},
		"cause=network&page=3":                                 {Range: DefaultRange, Cause: "network", Page: 3},
		"turn=0A00000000000000000000000000001F":                {Range: DefaultRange, Page: 1, Turn: "0a00000000000000000000000000001f"},
		"turn=0a00000000000000000000000000001f&format=text":    {Range: DefaultRange, Page: 1, Turn: "0a00000000000000000000000000001f", Format: "text"},
	} {
		v, _ := url.ParseQuery(raw)
		got, err := ParseQuery(v)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", raw, got, err, want)
		}
	}
	for raw, want := range map[string]error{
		"range=2d":         ErrRange,
		"range=%00":        ErrRange,
		"installation=%0a": ErrInstallation,
		"installation=%ff": ErrInstallation,
		"installation=" + strings.Repeat("x", MaxInstallation+1): ErrInstallation,
		"cause=Network":                   ErrCause,
		"cause=no+verdict":                ErrCause,
		"page=0":                          ErrPage,
		"page=-1":                         ErrPage,
		"page=01":                         ErrPage,
		"page=100001":                     ErrPage,
		"page=1e3":                        ErrPage,
		"turn=0a00":                       ErrTurn,
		"turn=" + strings.Repeat("0", 32): ErrTurn,
		"turn=" + strings.Repeat("g", 32): ErrTurn,
		"format=text":                     ErrFormat,
		"turn=" + strings.Repeat("a", 32) + "&format=json": ErrFormat,
	} {
		v, _ := url.ParseQuery(raw)
		if _, err := ParseQuery(v); !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", raw, err, want)
		}
	}
}

// FuzzParseQuery: any query string parses without a panic; what it
// accepts is a range the page offers and an installation it can print,
// and the query it encodes back asks for the same.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "range=24h", "range=all&installation=3f6c1a52-7d2e-4a8b-9c61-0d5e4f3a2b10",
		"range=1h&installation=%e2%80%ae", "installation=%ff", "range=7d&range=1h", "a=%zz", "installation=\t",
		"cause=pool&page=2", "turn=0A00000000000000000000000000001F&format=text", "page=+1", "turn=%00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := ParseQuery(v)
		if err != nil {
			return
		}
		known := false
		for _, r := range Ranges {
			known = known || r.Key == q.Range
		}
		if !known || q.Choice().Key != q.Range {
			t.Fatalf("%q accepted range %q", raw, q.Range)
		}
		if q.Page < 1 || q.Page > MaxPage || (q.Turn != "" && !TraceID(q.Turn)) || (q.Format != "" && q.Turn == "") {
			t.Fatalf("%q accepted %+v", raw, q)
		}
		if !utf8.ValidString(q.Installation) || len(q.Installation) > MaxInstallation ||
			strings.IndexFunc(q.Installation, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			t.Fatalf("%q accepted installation %q", raw, q.Installation)
		}
		back, err := url.ParseQuery(q.Encode())
		if err != nil {
			t.Fatalf("%+v encodes to %q, which does not parse: %v", q, q.Encode(), err)
		}
		again, err := ParseQuery(back)
		if err != nil || again != q {
			t.Fatalf("%+v encodes to %q, which reads back as %+v, %v", q, q.Encode(), again, err)
		}
	})
}
