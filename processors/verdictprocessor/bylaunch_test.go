package verdictprocessor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/processors/internal/launches"
)

// launchDelivery is one delivery a keyed join stage made: the launch its
// client metadata named, and the launches its turns' resources name.
type launchDelivery struct {
	key      string
	launches []string
	refused  bool
}

// TestTurnsGoOutKeyedByLaunch: with launch_metadata_key, a cycle that
// joined turns of two launches sends each launch's in a delivery of its
// own, under the metadata key naming it. One launch's refusal holds only
// that launch's turn, and the sender's retry sends that one alone; each
// launch is delivered, accepted, once.
func TestTurnsGoOutKeyedByLaunch(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Emit, cfg.LaunchMetadataKey = EmitTurns, "percause.launch"
	h := newHarness(t, cfg)
	var (
		mu      sync.Mutex
		got     []launchDelivery
		refuseB = true
	)
	h.p.next, _ = consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		d := launchDelivery{key: strings.Join(client.FromContext(ctx).Metadata.Get("percause.launch"), ",")}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			v, _ := td.ResourceSpans().At(i).Resource().Attributes().Get(semconv.ServiceInstanceID)
			d.launches = append(d.launches, v.Str())
		}
		mu.Lock()
		defer mu.Unlock()
		d.refused = refuseB && strings.HasSuffix(d.key, "/launch-B")
		got = append(got, d)
		if d.refused {
			return errRefused
		}
		return nil
	})
	startHarness(t, h)
	batch := func() ptrace.Traces {
		td := sdk(1, plainUnit("launch-A"), plainTurn("launch-A", 1, 0, 1))
		sdk(2, plainUnit("launch-B"), plainTurn("launch-B", 1, 0, 1)).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		return td
	}

	if err := h.try(batch()); !errors.Is(err, errRefused) {
		t.Fatalf("a cycle with one launch refused answered %v, want the refusal", err)
	}
	if !h.p.held.Decided(traceID(1)) || h.p.held.Decided(traceID(2)) || h.p.held.Len() != 1 {
		t.Fatalf("after launch-B's refusal: A decided %v, B decided %v, %d held; want A decided, B held",
			h.p.held.Decided(traceID(1)), h.p.held.Decided(traceID(2)), h.p.held.Len())
	}
	mu.Lock()
	refuseB = false
	mu.Unlock()
	if err := h.try(batch()); err != nil {
		t.Fatalf("the retry answered %v", err)
	}
	want := map[string]int{"install-1/launch-A": 1, "install-1/launch-B": 1}
	accepted := map[string]int{}
	for _, d := range got {
		if len(d.launches) != 1 || !strings.HasSuffix(d.key, "/"+d.launches[0]) {
			t.Errorf("a delivery keyed %q carried the turns of %v, want its own launch's only", d.key, d.launches)
		}
		if !d.refused {
			accepted[d.key]++
		}
	}
	if len(accepted) != len(want) || accepted["install-1/launch-A"] != 1 || accepted["install-1/launch-B"] != 1 {
		t.Errorf("accepted deliveries by key %v, want %v (every launch once, the refused one sent again alone)", accepted, want)
	}
	if len(got) != 3 {
		t.Errorf("%d deliveries, want 3: A and B, then B again", len(got))
	}
	if h.p.held.Len() != 0 {
		t.Errorf("%d traces still held", h.p.held.Len())
	}
}

// TestTurnsWithoutLaunchKeyGoTogether: without launch_metadata_key a
// cycle's turns go in one delivery naming nothing, as before.
func TestTurnsWithoutLaunchKeyGoTogether(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	h, out := joinHarness(t, cfg)
	td := sdk(1, plainUnit("launch-A"), plainTurn("launch-A", 1, 0, 1))
	sdk(2, plainUnit("launch-B"), plainTurn("launch-B", 1, 0, 1)).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	if err := h.try(td); err != nil {
		t.Fatal(err)
	}
	if len(*out) != 1 || (*out)[0].td.ResourceSpans().Len() != 2 {
		t.Fatalf("%d deliveries, want one with both launches' turns", len(*out))
	}
}

// BenchmarkJoinByLaunch is what keying by launch costs the join stage:
// requests of 8 whole turns, of 1 launch or of 8, joined and sent on in
// one delivery (no launch_metadata_key) or in one a launch, to a next
// consumer that accepts at once. It measures the split and the
// deliveries' goroutines, not the exporter's round trips, which the
// deliveries run side by side.
func BenchmarkJoinByLaunch(b *testing.B) {
	for _, keyed := range []bool{false, true} {
		for _, nLaunches := range []int{1, 8} {
			b.Run(fmt.Sprintf("keyed=%v/launches=%d", keyed, nLaunches), func(b *testing.B) {
				cfg := createDefaultConfig().(*Config)
				cfg.Emit = EmitTurns
				if keyed {
					cfg.LaunchMetadataKey = "percause.launch"
				}
				h := newHarness(b, cfg)
				h.p.next = consumertest.NewNop()
				if err := h.p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
					b.Fatal(err)
				}
				defer func() { _ = h.p.Shutdown(context.Background()) }()
				i := 0
				for b.Loop() {
					td := ptrace.NewTraces()
					for j := range 8 {
						launch := "launch-" + strconv.Itoa(j%nLaunches)
						one := sdk(byte(j), plainUnit(launch), plainTurn(launch, int64(i+1), 0, 1), take("t1", 0.3, nil))
						id := traceID(byte(j))
						id[8], id[9], id[10] = byte(i), byte(i>>8), byte(i>>16)
						setTrace(one, id)
						one.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
					}
					if err := h.p.ConsumeTraces(context.Background(), td); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(8*b.N), "ns/turn")
			})
		}
	}
}

// BenchmarkLaunchFromRecordBytes is what decision 0316's first
// alternative would cost: a partitioner that finds each record's launch
// by reading the record's OTLP bytes back (one joined turn, its unit and
// its take, as the join writes it), against the key the processor names
// in client metadata, which costs the grouping BenchmarkJoinByLaunch
// measures.
func BenchmarkLaunchFromRecordBytes(b *testing.B) {
	td := ptrace.NewTraces()
	tr := sdk(1, plainUnit("launch-A"), plainTurn("launch-A", 1, 0, 1), take("t1", 0.3, nil))
	tr.CopyTo(td)
	var m ptrace.ProtoMarshaler
	record, err := m.MarshalTraces(td)
	if err != nil {
		b.Fatal(err)
	}
	var u ptrace.ProtoUnmarshaler
	for b.Loop() {
		got, err := u.UnmarshalTraces(record)
		if err != nil {
			b.Fatal(err)
		}
		rss := got.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			if _, ok := launches.KeyOf(rss.At(i).Resource()); ok {
				break
			}
		}
	}
	b.ReportMetric(float64(len(record)), "bytes/record")
}
