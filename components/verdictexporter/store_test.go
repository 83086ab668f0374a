package verdictexporter

import (
	"bytes"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// FuzzDecodeSpan: whatever storage hands back, reading it never panics;
// what it reads is one span, and a span encoded reads back as itself.
func FuzzDecodeSpan(f *testing.F) {
	td := turnAt(1, testNow)
	rs := td.ResourceSpans().At(0)
	good, err := encodeSpan(rs, rs.ScopeSpans().At(0), rs.ScopeSpans().At(0).Spans().At(0))
	if err != nil {
		f.Fatal(err)
	}
	if !bytes.Equal(good[:1], []byte{valueFormat}) {
		f.Fatal("the stored value does not start with its format")
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{})
	f.Add([]byte{valueFormat})
	f.Add([]byte{2, 1, 2, 3})
	f.Fuzz(func(t *testing.T, v []byte) {
		res, s, err := decodeSpan(v)
		if err != nil {
			return
		}
		again := ptrace.NewTraces()
		ars := again.ResourceSpans().AppendEmpty()
		res.CopyTo(ars.Resource())
		s.CopyTo(ars.ScopeSpans().AppendEmpty().Spans().AppendEmpty())
		if again.SpanCount() != 1 {
			t.Fatalf("%x read as %d spans", v, again.SpanCount())
		}
		b, err := encodeSpan(ars, ars.ScopeSpans().At(0), ars.ScopeSpans().At(0).Spans().At(0))
		if err != nil {
			t.Fatal(err)
		}
		_, s2, err := decodeSpan(b)
		if err != nil || s2.SpanID() != s.SpanID() || s2.Name() != s.Name() {
			t.Fatalf("a span read from %x does not read back: %v", v, err)
		}
	})
}

func TestAcceptsGzip(t *testing.T) {
	for ae, want := range map[string]bool{
		"": false, "gzip": true, "GZIP": true, "br, gzip;q=0.8": true, "deflate": false,
		"gzip;q=0": false, "gzip; q=0.0": false, "gzip;q=0.001": true, "identity, gzip;q=1": true, "gzipx": false,
	} {
		if got := acceptsGzip(ae); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", ae, got, want)
		}
	}
}
