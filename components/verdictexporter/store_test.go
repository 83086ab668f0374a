package verdictexporter

import (
	"slices"
	"testing"
	"time"
)

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

// TestStoreReplace: a read-back replaces what the store holds, within its
// bounds, and says what it added and what it let go against what was
// there.
func TestStoreReplace(t *testing.T) {
	items := func(ns ...byte) []item {
		var out []item
		for _, n := range ns {
			rs := turnAt(n, testNow.Add(-time.Duration(10-n)*time.Minute)).ResourceSpans().At(0)
			it, _ := itemOf(rs, rs.ScopeSpans().At(0).Spans().At(0))
			out = append(out, it)
		}
		return out
	}
	p := newPageStore(KeepConfig{Age: time.Hour, Turns: 3, LinkChanges: 1})
	p.add(items(1, 2), testNow)
	added, letGo := p.replace(items(2, 3, 4, 5), testNow) // 5 newest: 2 goes past keep.turns
	if added != 3 || letGo != 2 {
		t.Errorf("added %d, let go %d; want 3 (3, 4 and 5) and 2 (1, and 2 past the bound)", added, letGo)
	}
	got, _ := keptTraces(p, testNow)
	want := []string{traceOf(3), traceOf(4), traceOf(5)}
	if !slices.Equal(got, want) {
		t.Errorf("holds %v, want %v", got, want)
	}
}
