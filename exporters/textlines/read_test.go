package textlines

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// appTurn is the example of docs/lines.md: the app's spellings of the
// readings of exampleTurn, behind an os_log prefix.
const appTurn = "2026-05-03 09:14:22.481234+0200 Pippa[812:33091] <Notice> [voice-turn] turn=2 link=cell/lte underruns=0,2,0 +bluetooth +stutter route=bluetooth_hfp>bluetooth_a2dp sample_rate=16000 listen_open:grant=0.20,session=0.31,total=0.62 route_change@1.20=old_device_unavailable:builtin_speaker route_change@2.40=new_device_available:bluetooth_a2dp health:device_uptime=86400.00,app_uptime=3600.00,activations=4,memory=188743680 rpm=0.18/0.25 post=0.80 not_sent=0.00 pool_reset=1(0) live=players:2(1),mic_engines:1(0),audio_queues:0(0),takes:0(0),byte_streams:2(0),replies_in_flight:0(0) gaps=0.12a(0.40),0.56a(-0.30),0.12a(0.40) broke=2:2/1.40/0.50@t2"

const appTake = "May  3 09:14:21 engine pippa-tts[4411]: [tts-take] take=t2 trace=4bf92f3577b34da6a3ce929d0e0e4736 first_byte=0.40s total=4.40s rate=0.68 need=1.00s beside=0"

func TestReadCanonicalRoundTrip(t *testing.T) {
	want := exampleTurn()
	want.Changes = []RouteChange{{At: 1.2, Reason: "old_device_unavailable", Outputs: []string{"builtin_speaker"}}}
	for name, line := range map[string]string{
		"with changes":       string(AppendTurn(nil, want)),
		"older, count only":  string(AppendTurn(nil, exampleTurn())),
		"prefixed with CRLF": "2026-05-03T07:14:22Z phone: " + strings.TrimSuffix(string(AppendTurn(nil, want)), "\n") + "\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			rec, err := Read(line)
			if err != nil {
				t.Fatal(err)
			}
			got := rec.Turn
			if rec.Kind != KindTurn || rec.TraceID != want.TraceID || rec.App {
				t.Errorf("kind %v trace %q app %v", rec.Kind, rec.TraceID, rec.App)
			}
			if got.Index != 2 || got.LinkType != "cell" || got.LinkSubtype != "lte" || !got.Stutter || !got.Bluetooth ||
				got.SampleRate != 16000 || got.RouteChanges != 1 || got.ListenTotal != 0.62 || got.RPMFresh != 0.25 ||
				got.SpeechEndToPost != 0.8 || !got.HasPoolResets || !got.HasPoolPrior || got.PoolResets != 1 ||
				got.DeviceUptime != 86400 || got.Activations != 4 || got.Memory != 188743680 || got.DeclaredUnits != 3 {
				t.Errorf("turn %+v", got)
			}
			if !reflect.DeepEqual(got.Live, want.Live) {
				t.Errorf("live %+v", got.Live)
			}
			wantUnits := []UnitReading{
				{Index: 1, Gap: 0.12, HasGap: true, HasUnderruns: true},
				{Index: 2, TakeID: "t2", Gap: 0.56, Lead: -0.3, HasGap: true, HasLead: true, Underruns: 2, HasUnderruns: true,
					Silent: 1.4, Cushion: 0.5, HasBrokenUnit: true},
				{Index: 3, Gap: 0.12, HasGap: true, HasUnderruns: true},
			}
			if !reflect.DeepEqual(got.Units, wantUnits) {
				t.Errorf("units\n got %+v\nwant %+v", got.Units, wantUnits)
			}
			if strings.Contains(line, " changes=") != rec.Present.Has(FChanges) {
				t.Errorf("changes present %v", rec.Present.Has(FChanges))
			}
			if rec.Present.Has(FChanges) && !reflect.DeepEqual(got.Changes, want.Changes) {
				t.Errorf("changes %+v", got.Changes)
			}
		})
	}
	take, err := Read(string(AppendTake(nil, exampleTake())))
	if err != nil {
		t.Fatal(err)
	}
	if tk := take.Take; take.Kind != KindTake || tk.ID != "t2" || tk.TraceID != exampleTake().TraceID || tk.Need != 1 || tk.Audio != 3 || tk.Rate != 0.68 {
		t.Errorf("take %+v", take)
	}
}

// TestReadAppSpellings: the app's spellings give the same readings as the
// canonical line of the same turn, plus what only they carry.
func TestReadAppSpellings(t *testing.T) {
	canon, err := Read(string(AppendTurn(nil, exampleTurn())))
	if err != nil {
		t.Fatal(err)
	}
	app, err := Read(appTurn)
	if err != nil {
		t.Fatal(err)
	}
	if !app.App || app.TraceID != "" {
		t.Errorf("app %v trace %q", app.App, app.TraceID)
	}
	if want := time.Date(2026, 5, 3, 7, 14, 22, 481234000, time.UTC); !app.Time.Equal(want) {
		t.Errorf("time %v, want %v", app.Time, want)
	}
	a, c := app.Turn, canon.Turn
	if a.ListenGrant != c.ListenGrant || a.ListenSession != c.ListenSession || a.ListenTotal != c.ListenTotal ||
		a.DeviceUptime != c.DeviceUptime || a.AppUptime != c.AppUptime || a.Activations != c.Activations || a.Memory != c.Memory ||
		a.Bluetooth != c.Bluetooth || a.Stutter != c.Stutter || !reflect.DeepEqual(a.Live, c.Live) || a.PoolResets != c.PoolResets {
		t.Errorf("app readings differ:\n app %+v\ncanon %+v", a, c)
	}
	if len(a.Units) != 3 || a.Units[1] != c.Units[1] || a.Units[0].Lead != 0.4 || !a.Units[0].HasLead || a.Units[0].Underruns != 0 || !a.Units[0].HasUnderruns {
		t.Errorf("app units %+v", a.Units)
	}
	want := []RouteChange{{1.2, "old_device_unavailable", []string{"builtin_speaker"}}, {2.4, "new_device_available", []string{"bluetooth_a2dp"}}}
	if !reflect.DeepEqual(a.Changes, want) || a.RouteChanges != 2 {
		t.Errorf("changes %+v (%d)", a.Changes, a.RouteChanges)
	}

	take, err := Read(appTake)
	if err != nil {
		t.Fatal(err)
	}
	if tk := take.Take; tk.ID != "t2" || tk.FirstByte != 0.4 || tk.Total != 4.4 || tk.Need != 1 || take.Present.Has(FAudio) || !take.Time.IsZero() {
		t.Errorf("take %+v present %b time %v", tk, take.Present, take.Time)
	}
	ms, err := Read("[tts-take] take=t9 first_byte=400ms need=1500ms")
	if err != nil || ms.Take.FirstByte != 0.4 || ms.Take.Need != 1.5 {
		t.Errorf("ms: %+v %v", ms.Take, err)
	}
}

func TestReadUnknownAndMissingFields(t *testing.T) {
	rec, err := Read("[voice-turn] turn=4 mood=calm link=wifi +shiny listen_open:grant=0.20,warmup=0.10 units=2 underruns=0")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Unknown != 3 || !reflect.DeepEqual(rec.UnknownKeys, []string{"mood", "+shiny", "listen_open:warmup"}) {
		t.Errorf("unknown %d %v", rec.Unknown, rec.UnknownKeys)
	}
	if rec.Present.Has(FListenTotal) || !rec.Present.Has(FListenGrant) || rec.Present.Has(FPool) || rec.Present.Has(FLive) {
		t.Errorf("present %b", rec.Present)
	}
	if len(rec.Turn.Units) != 2 || !rec.Turn.Units[1].HasUnderruns || rec.Turn.Units[1].HasGap {
		t.Errorf("units %+v", rec.Turn.Units)
	}
}

func TestReadRefusesWithAReason(t *testing.T) {
	for name, tc := range map[string]struct{ line, reason, detail string }{
		"not key=value":       {"[voice-turn] turn=1 oops", ReasonSyntax, `"oops"`},
		"empty value":         {"[voice-turn] turn=", ReasonSyntax, "no value"},
		"not an int":          {"[voice-turn] turn=two", ReasonBadValue, `turn="two": want an int`},
		"NaN":                 {"[tts-take] take=t need=NaN", ReasonBadValue, `need="NaN": want seconds`},
		"hex float":           {"[tts-take] take=t need=0x1p-2", ReasonBadValue, `need="0x1p-2": want seconds`},
		"infinite":            {"[tts-take] take=t need=1e999", ReasonBadValue, `need="1e999": want seconds`},
		"bad bool":            {"[voice-turn] turn=1 stutter=maybe", ReasonBadValue, `stutter="maybe": want yes or no`},
		"short trace":         {"[voice-turn] turn=1 trace=abc", ReasonBadTrace, "32 hex"},
		"zero trace":          {"[tts-take] take=t trace=00000000000000000000000000000000", ReasonBadTrace, "32 hex"},
		"twice":               {"[voice-turn] turn=1 turn=2", ReasonDuplicate, "turn: given twice"},
		"flag twice":          {"[voice-turn] +bluetooth bt=yes", ReasonDuplicate, "bt: given twice"},
		"units vs gaps":       {"[voice-turn] units=3 gaps=0.10,0.20", ReasonInconsistent, "units=3"},
		"total vs broke":      {"[voice-turn] units=1 underruns=3 gaps=0.10 broke=1:2/0.40/1.50@t1", ReasonInconsistent, "add up to 2"},
		"broke past units":    {"[voice-turn] units=1 gaps=0.10 broke=2:1/0.40/1.50@t1", ReasonInconsistent, "unit 2 of 1"},
		"per-unit vs broke":   {"[voice-turn] underruns=0,1 broke=2:2/0.40/1.50@t1", ReasonInconsistent, "underruns says 1, broke 2"},
		"count vs changes":    {"[voice-turn] route_changes=2 changes=0.50@override>builtin_speaker", ReasonInconsistent, "1 changes listed"},
		"bad broke":           {"[voice-turn] broke=2:2/1.40@t2", ReasonBadValue, "index:underruns"},
		"bad live":            {"[voice-turn] live=players:2(1", ReasonBadValue, "closing"},
		"bad route change":    {"[voice-turn] route_change@soon=override:builtin_speaker", ReasonBadValue, `the time "soon" is not seconds — want route_change@<seconds>`},
		"bad group":           {"[voice-turn] listen_open:grant", ReasonSyntax, "not key=value"},
		"take without id":     {"[tts-take] need=1.00", ReasonBadValue, "no take id"},
		"tag only":            {"[voice-turn]", ReasonNoReadings, "no reading"},
		"only unknown fields": {"[tts-take] colour=blue", ReasonNoReadings, "1 unknown"},
		"too long":            {"[voice-turn] turn=1 x=" + strings.Repeat("a", MaxLineBytes), ReasonTooLong, "bytes"},
		"too many units":      {"[voice-turn] units=100000", ReasonTooLong, "at most 512 units"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Read(tc.line)
			var le *LineError
			if !errors.As(err, &le) || le.Reason != tc.reason || !strings.Contains(le.Detail(), tc.detail) || !errors.Is(err, ErrSyntax) {
				t.Fatalf("%v, want reason %s with %q", err, tc.reason, tc.detail)
			}
		})
	}
	for _, line := range []string{"", "GET /health 200", "[voice-turned] turn=1", "[tts-takes]", "x[voice-turn]y"} {
		if _, err := Read(line); !errors.Is(err, ErrNotALine) {
			t.Errorf("%q: %v, want ErrNotALine", line, err)
		}
	}
}

func TestPrefixTime(t *testing.T) {
	for p, want := range map[string]string{
		"2026-05-03T07:14:22Z ":                    "2026-05-03T07:14:22Z",
		"2026-05-03T09:14:22.5+02:00 app: ":        "2026-05-03T07:14:22.5Z",
		"<13>1 2026-05-03T07:14:22.003Z host app ": "2026-05-03T07:14:22.003Z",
		"2026-05-03 09:14:22,250 INFO ":            "2026-05-03T09:14:22.25Z",
		"2026-05-03 09:14:22.481234-0700 Pippa ":   "2026-05-03T16:14:22.481234Z",
		"May  3 09:14:21 host app: ":               "",
		"12026-05-03T07:14:22Z":                    "",
	} {
		got := prefixTime(p)
		if want == "" {
			if !got.IsZero() {
				t.Errorf("%q: %v, want none", p, got)
			}
			continue
		}
		w, _ := time.Parse(time.RFC3339Nano, want)
		if !got.Equal(w) {
			t.Errorf("%q: %v, want %v", p, got, w)
		}
	}
}

// FuzzRead: any input reads, is not a line, or is refused with its faults
// (at most MaxFaults, each with a reason from Reasons); never a panic. A line that reads keeps its bounds, and a turn it
// reads prints (canonical) to a line that reads to the same units.
func FuzzRead(f *testing.F) {
	full := exampleTurn()
	full.Changes = []RouteChange{{At: 1.2, Reason: "override", Outputs: []string{"builtin_speaker"}}}
	for _, s := range []string{
		string(AppendTurn(nil, full)), string(AppendTake(nil, exampleTake())), appTurn, appTake,
		"[voice-turn] turn=4 mood=calm +shiny listen_open:grant=0.20,warmup=0.10 units=2 underruns=0\r\n",
		"[voice-turn] live=players:2(1,2,3),takes:0", "[voice-turn] gaps=0.10a(-0.20) broke=1:1/0.50/1.00@-",
		"[tts-take] take=t first_byte=400ms", "[voice-turn]", "x [tts-take] y=z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rec, err := Read(s)
		if err != nil {
			var le *LineError
			if errors.Is(err, ErrNotALine) {
				return
			}
			if !errors.As(err, &le) {
				t.Fatalf("error %v is neither ErrNotALine nor a LineError", err)
			}
			if len(le.Faults) == 0 || len(le.Faults) > MaxFaults || le.Reason != le.Faults[0].Reason {
				t.Fatalf("%d faults, reason %q: %v", len(le.Faults), le.Reason, err)
			}
			for _, f := range le.Faults {
				if !slices.Contains(Reasons, f.Reason) {
					t.Fatalf("reason %q is not one of %v", f.Reason, Reasons)
				}
			}
			return
		}
		tr := rec.Turn
		if len(tr.Units) > MaxUnits || len(tr.Changes) > MaxChanges || len(tr.Live) > MaxLiveKinds || len(rec.UnknownKeys) > MaxUnknownKeys {
			t.Fatalf("bounds: %d units, %d changes, %d live, %d unknown keys", len(tr.Units), len(tr.Changes), len(tr.Live), len(rec.UnknownKeys))
		}
		if rec.Kind != KindTurn {
			return
		}
		for _, u := range tr.Units {
			if math.IsNaN(u.Gap) || math.IsNaN(u.Lead) || math.IsNaN(u.Silent) || math.IsNaN(u.Cushion) {
				t.Fatalf("NaN reading in %+v", u)
			}
		}
	})
}

func BenchmarkRead(b *testing.B) {
	lines := []string{string(AppendTurn(nil, exampleTurn())), string(AppendTake(nil, exampleTake())), appTurn, appTake}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for _, l := range lines {
			if _, err := Read(l); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "lines/s")
}

// TestLinesDocExample keeps docs/lines.md's example true: its canonical line
// is what the formatter prints, and its app line reads to the same readings.
func TestLinesDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "lines.md"))
	if err != nil {
		t.Fatal(err)
	}
	turn := exampleTurn()
	turn.Changes = []RouteChange{{At: 1.2, Reason: "old_device_unavailable", Outputs: []string{"builtin_speaker"}}}
	canon := string(AppendTurn(nil, turn))
	if !strings.Contains(string(doc), canon) {
		t.Fatalf("docs/lines.md does not show the canonical line the formatter prints:\n%s", canon)
	}
	var app string
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.Contains(l, "<Notice> [voice-turn]") {
			app = l
		}
	}
	c, err := Read(canon)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Read(app)
	if err != nil {
		t.Fatal(err)
	}
	if a.Unknown != 0 || !a.App || !reflect.DeepEqual(a.Turn.Changes, c.Turn.Changes) || a.Turn.Units[1] != c.Turn.Units[1] ||
		a.Turn.ListenTotal != c.Turn.ListenTotal || a.Turn.Memory != c.Turn.Memory || a.Turn.Bluetooth != c.Turn.Bluetooth {
		t.Errorf("the app line of docs/lines.md reads differently:\n app %+v\ncanon %+v", a.Turn, c.Turn)
	}
}

// TestReadReportsEveryFault: a refused line names each of its faults, in
// the order of the line, each with the form its field expects; the line is
// counted under the first one's reason.
func TestReadReportsEveryFault(t *testing.T) {
	_, err := Read("[voice-turn] turn=two link=wifi units=3 gaps=0.10,0.20 live=players:x stutter=maybe +stutter listen_open:grant=soon")
	var le *LineError
	if !errors.As(err, &le) {
		t.Fatalf("%v, want a LineError", err)
	}
	want := []string{
		`turn="two": want an int`,
		`live="players:x": the count of players "x" is not an int — want kind:now[(before,…)],… ints, the history oldest first (- for none)`,
		`stutter="maybe": want yes or no`,
		`stutter: given twice`,
		`listen_open:grant="soon": want seconds (0.40, 0.40s or 400ms)`,
		`units=3 but the line lists 2`,
	}
	var got []string
	for _, f := range le.Faults {
		got = append(got, f.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("faults\n got %q\nwant %q", got, want)
	}
	if le.Reason != ReasonBadValue || le.Faults[3].Reason != ReasonDuplicate || le.Faults[5].Reason != ReasonInconsistent {
		t.Errorf("reasons: line %s, faults %+v", le.Reason, le.Faults)
	}
	if !strings.Contains(err.Error(), strings.Join(want, "; ")) {
		t.Errorf("the error does not list every fault: %v", err)
	}

	// Past MaxFaults the rest are counted.
	_, err = Read("[tts-take] take=t" + strings.Repeat(" need=x", MaxFaults+3))
	if !errors.As(err, &le) || len(le.Faults) != MaxFaults || le.More != 3 || !strings.HasSuffix(le.Detail(), "; and 3 more") {
		t.Errorf("%d faults kept, %d more: %v", len(le.Faults), le.More, err)
	}
}

// TestEveryFieldHasAForm: each key of the tables says what its value takes,
// and reads alone (never as an unknown field).
func TestEveryFieldHasAForm(t *testing.T) {
	turn, take := exampleTurn(), exampleTake()
	turn.Changes = []RouteChange{{At: 1.2, Reason: "override", Outputs: []string{"builtin_speaker"}}}
	line := map[Kind]string{KindTurn: string(AppendTurn(nil, turn)), KindTake: string(AppendTake(nil, take))}
	check := func(kind Kind, key, form string) {
		if form == "" {
			t.Errorf("%s %s has no form", kind, key)
		}
		var value string
		for _, tok := range strings.Fields(line[kind]) {
			if k, v, _ := strings.Cut(tok, "="); k == key {
				value = v
			}
		}
		if value == "" {
			t.Errorf("%s %s: the canonical line does not print it", kind, key)
			return
		}
		l := kind.String() + " " + key + "=" + value
		if kind == KindTake && key != "take" {
			l += " take=t" // a take line names its take
		}
		rec, err := Read(l)
		var le *LineError
		if errors.As(err, &le) && le.Reason != ReasonNoReadings && le.Reason != ReasonInconsistent {
			t.Errorf("%s %s=%s alone: %v", kind, key, value, err)
		}
		if err == nil && rec.Unknown != 0 {
			t.Errorf("%s %s read as unknown", kind, key)
		}
	}
	for _, f := range turnFields {
		check(KindTurn, f.key, f.form)
	}
	for _, f := range takeFields {
		check(KindTake, f.key, f.form)
	}
	if got := strings.Join(TurnKeys(), " "); !strings.HasPrefix(got, "turn trace link units") || !strings.HasSuffix(got, "gaps broke changes") {
		t.Errorf("TurnKeys %s", got)
	}
}

func TestPrefixPID(t *testing.T) {
	for p, want := range map[string]int{
		"2026-05-03 09:14:22.481234+0200 Pippa[812:33091] <Notice> ": 812,
		"May  3 09:14:21 engine pippa-tts[4411]: ":                   4411,
		"<14>1 2026-05-03T07:14:22.003Z host pippa 311 turn - ":      311,
		"<14>1 2026-05-03T07:14:22.003Z host pippa - turn - ":        0,
		"2026-05-03T07:14:22Z [INFO] [main] ":                        0,
		"app[x]: ":                                                   0,
		"":                                                           0,
	} {
		if got := prefixPID(p); got != want {
			t.Errorf("%q: pid %d, want %d", p, got, want)
		}
	}
	rec, err := Read(appTurn)
	if err != nil || rec.PID != 812 {
		t.Errorf("the app's line: pid %d, %v", rec.PID, err)
	}
}
