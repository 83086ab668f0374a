package verdictexporter

import (
	"runtime"
	"testing"
	"time"
)

// TestStoreMemoryPerTurn measures (and logs) what a kept turn costs in
// memory; it fails only past a generous bound, so a change that makes
// turns much dearer is seen.
func TestStoreMemoryPerTurn(t *testing.T) {
	const n = 10000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p := newPageStore(KeepConfig{Age: 365 * 24 * time.Hour, Turns: n, LinkChanges: 10})
	items := make([]item, 0, n)
	for i := range n {
		td := turnAt(byte(i), testNow.Add(time.Duration(i)*time.Second))
		rs := td.ResourceSpans().At(0)
		rs.Resource().Attributes().PutStr("service.instance.id", "9b1e2c3d-0000-4000-8000-000000000001")
		s := rs.ScopeSpans().At(0).Spans().At(0)
		s.SetSpanID([8]byte{byte(i >> 8), byte(i), 1})
		it, _ := itemOf(rs, s)
		items = append(items, it)
	}
	p.add(items, testNow.Add(n*time.Second))
	items = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("a kept turn costs %.0f bytes of heap", per)
	if per > 2000 {
		t.Errorf("a kept turn costs %.0f bytes, past 2000", per)
	}
	runtime.KeepAlive(p)
}
