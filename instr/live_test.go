package instr

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/percause/percause/instr/semconv"
)

// TestLiveKindsAreSemconvs: the registry's kinds are exactly
// semconv.LiveKinds, in its order: Add and Get, Snapshot, and the turn's
// pippa.live.<kind> attributes (now and before) name every one of them and
// nothing else.
func TestLiveKindsAreSemconvs(t *testing.T) {
	if numKinds != len(semconv.LiveKinds) {
		t.Fatalf("numKinds = %d, semconv.LiveKinds has %d", numKinds, len(semconv.LiveKinds))
	}
	var r refusals
	sdk, exp, _ := memSDK(t, WithErrorHandler(r.handle))
	live := sdk.Live()
	for i, k := range semconv.LiveKinds {
		if got := kindIndex(k); got != i {
			t.Errorf("kindIndex(%q) = %d, want its position %d", k, got, i)
		}
		live.Add(k, i+1)
		if got := live.Get(k); got != i+1 {
			t.Errorf("Get(%q) = %d, want %d", k, got, i+1)
		}
	}
	if errs := r.during(func() { live.Add("sockets", 1) }); kindIndex("sockets") != -1 || len(errs) != 1 || live.Rejected() != 1 {
		t.Errorf("a kind outside semconv.LiveKinds: refusals %v, %d counted; want it refused once", errs, live.Rejected())
	}
	snap := live.Snapshot()
	keys := make([]string, 0, len(snap))
	for k := range snap {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := append([]string(nil), semconv.LiveKinds...)
	sort.Strings(want)
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("Snapshot has kinds %v, want %v", keys, want)
	}

	for range 2 {
		_, turn := sdk.StartTurn(context.Background())
		turn.End()
	}
	turns := ended(t, sdk, exp, semconv.SpanVoiceTurn)
	if len(turns) != 2 {
		t.Fatalf("%d turns", len(turns))
	}
	second := turns[1]
	seen := map[string]bool{}
	for i, k := range semconv.LiveKinds {
		now, before := semconv.LiveAttr(k), semconv.LiveBeforeAttr(k)
		seen[now], seen[before] = true, true
		if v, ok := second[now]; !ok || v.AsInt64() != int64(i+1) {
			t.Errorf("%s = %v (present %v), want %d", now, v.AsInt64(), ok, i+1)
		}
		if v, ok := second[before]; !ok || !equalInts(v.AsInt64Slice(), []int64{int64(i + 1)}) {
			t.Errorf("%s = %v (present %v), want [%d]", before, v.AsInt64Slice(), ok, i+1)
		}
	}
	for name := range second {
		if strings.HasPrefix(name, semconv.LivePrefix) && !seen[name] {
			t.Errorf("the turn carries %s, which is not a kind of semconv.LiveKinds", name)
		}
	}
}
