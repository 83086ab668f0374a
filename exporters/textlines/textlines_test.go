package textlines

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func exampleTurn() *Turn {
	return &Turn{
		TraceID: "4bf92f3577b34da6a3ce929d0e0e4736",
		Units: []Unit{
			{Index: 1, TakeID: "t1", Gap: 0.12, Lead: 0.4, Cushion: 1.5},
			{Index: 2, TakeID: "t2", Gap: 0.56, Lead: -0.3, Underruns: 2, Silent: 1.4, Cushion: 0.5},
			{Index: 3, TakeID: "t3", Gap: 0.12, Lead: 0.4, Cushion: 1.5},
		},
		TurnValues: TurnValues{Index: 2, LinkType: "cell", LinkSubtype: "lte",
			Inputs: []string{"bluetooth_hfp"}, Outputs: []string{"bluetooth_a2dp"}, Bluetooth: true, SampleRate: 16000,
			RouteChanges: 1, Stutter: true,
			ListenGrant: 0.2, ListenSession: 0.31, ListenTotal: 0.62, RPMLoaded: 0.18, RPMFresh: 0.25,
			SpeechEndToPost: 0.8, PoolResets: 1, PoolResetsBefore: 0, HasPoolResets: true, HasPoolPrior: true,
			Live: []Live{{"players", 2, []int{1}}, {"mic_engines", 1, []int{0}}, {"audio_queues", 0, []int{0}},
				{"takes", 0, []int{0}}, {"byte_streams", 2, []int{0}}, {"replies_in_flight", 0, []int{0}}},
			DeviceUptime: 86400, AppUptime: 3600, Activations: 4, Memory: 188743680},
	}
}

func exampleTake() *Take {
	return &Take{ID: "t2", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", FirstByte: 0.4, Total: 4.4, Audio: 3, Rate: 3 / 4.4, Need: 1}
}

// TestDocumentedExamples keeps the examples in docs/semconv.md true: they
// are exactly what the formatter prints.
func TestDocumentedExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "semconv.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{string(AppendTurn(nil, exampleTurn())), string(AppendTake(nil, exampleTake()))} {
		if !strings.Contains(string(doc), line) {
			t.Errorf("docs/semconv.md does not show the line the formatter prints:\n%s", line)
		}
	}
}

func TestFormats(t *testing.T) {
	for name, tc := range map[string]struct {
		got, want string
	}{
		"empty turn": {string(AppendTurn(nil, &Turn{TurnValues: TurnValues{Index: 1}})),
			"[voice-turn] turn=1 trace=- link=- units=0 underruns=0 silent=0.00 stutter=no route=->- bt=no sample_rate=0 route_changes=0 listen=0.00/0.00/0.00 rpm=0.00/0.00 post=0.00 not_sent=0.00 pool_reset=- live=- uptime=0.00/0.00 activations=0 memory=0 gaps=- broke=-\n"},
		"separators in values are replaced": {string(AppendTake(nil, &Take{ID: "a b=c,d"})),
			"[tts-take] take=a_b_c_d trace=- first_byte=0.00 total=0.00 audio=0.00 rate=0.00 need=0.00 beside=0\n"},
		"first turn of a launch has no prior tally": {fieldOf(AppendTurn(nil, &Turn{TurnValues: TurnValues{HasPoolResets: true, PoolResets: 3}}), "pool_reset"),
			"pool_reset=3"},
		"late unit shows its lead": {fieldOf(AppendTurn(nil, &Turn{Units: []Unit{{Gap: 0.5, Lead: -0.25}, {Gap: 0, Lead: 0}}}), "gaps"),
			"gaps=0.50a(-0.25),0.00"},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got  %q\nwant %q", tc.got, tc.want)
			}
		})
	}
}

func fieldOf(line []byte, key string) string {
	for _, f := range strings.Fields(string(line)) {
		if strings.HasPrefix(f, key+"=") {
			return f
		}
	}
	return ""
}

func TestWriterWritesWholeLines(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	if err := w.WriteTurn(exampleTurn()); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteTake(exampleTake()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], PrefixTurn+" ") || !strings.HasPrefix(lines[1], PrefixTake+" ") {
		t.Errorf("lines %q", lines)
	}
}

func BenchmarkAppendTurn(b *testing.B) {
	t := exampleTurn()
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendTurn(buf[:0], t)
	}
}
