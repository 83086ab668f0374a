package textlines

import (
	"errors"
	"strings"
	"testing"
)

func TestParseReadsWhatIsWritten(t *testing.T) {
	turn, err := Parse(string(AppendTurn(nil, exampleTurn())))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := turn.Get("gaps"); v != "0.12,0.56a(-0.30),0.12" {
		t.Errorf("gaps = %q", v)
	}
	take, err := ParseTake(string(AppendTake(nil, exampleTake())))
	if err != nil {
		t.Fatal(err)
	}
	if take.ID != "t2" || take.Need != 1 || take.Rate != 0.68 || take.Total != 4.4 {
		t.Errorf("take %+v", take)
	}
}

func TestParseRefusesWithAReason(t *testing.T) {
	for line, want := range map[string]string{
		"":                    "prefix",
		"[voice-turn] turn=1": "1 fields, want 22",
		"[tts-take] take=t trace=- first_byte=0.10 total=1.00 audio=2.00 rate=2.00 need=0.00 beside":     "not key=value",
		"[tts-take] take=t trace=- total=1.00 first_byte=0.10 audio=2.00 rate=2.00 need=0.00 beside=0":   `field 3 is "total"`,
		"[tts-take] take=t trace=- first_byte=x total=1.00 audio=2.00 rate=2.00 need=0.00 beside=0":      `first_byte="x": want seconds`,
		"[tts-take] take=t trace=- first_byte=NaN total=1.00 audio=2.00 rate=2.00 need=0.00 beside=0":    `first_byte="NaN": want seconds`,
		"[tts-take] take=t trace=- first_byte=0.10 total=1.00 audio=2.00 rate=2.00 need=0.00 beside=1.5": `beside="1.5": want an int`,
	} {
		_, err := ParseTake(line)
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", line, err, want)
		}
	}
}

// FuzzParse: any input parses or is refused with ErrSyntax, never a panic;
// a take that parses prints back to a line that parses to the same take;
// and the two parsers read by one table, so a line Parse accepts is one
// Read reads, unless the line contradicts itself (which only Read checks)
// or names no take (take=-, which the writer prints for a take without
// one).
func FuzzParse(f *testing.F) {
	f.Add(string(AppendTurn(nil, exampleTurn())))
	f.Add(string(AppendTake(nil, exampleTake())))
	f.Add("[tts-take] take=- trace=- first_byte=0.00 total=0.00 audio=0.00 rate=0.00 need=0.00 beside=0")
	f.Add("[voice-turn]")
	f.Fuzz(func(t *testing.T, s string) {
		_, err := Parse(s)
		if err != nil && !errors.Is(err, ErrSyntax) {
			t.Fatalf("error %v does not wrap ErrSyntax", err)
		}
		if err == nil {
			var le *LineError
			if _, rerr := Read(s); rerr != nil && (!errors.As(rerr, &le) || !readOnlyFaults(le)) {
				t.Fatalf("Parse accepts %q, Read refuses it: %v", s, rerr)
			}
		}
		take, err := ParseTake(s)
		if err != nil {
			return
		}
		again, err := ParseTake(string(AppendTake(nil, take)))
		if err != nil {
			t.Fatalf("a parsed take prints as an unparsable line: %v", err)
		}
		if once := AppendTake(nil, again); string(once) != string(AppendTake(nil, take)) {
			t.Fatalf("round trip changed the line:\n%s%s", once, AppendTake(nil, take))
		}
	})
}

// readOnlyFaults: every fault is one Parse does not look for.
func readOnlyFaults(le *LineError) bool {
	for _, f := range le.Faults {
		if f.Reason != ReasonInconsistent && !(f.Field == "take" && f.Value == "") {
			return false
		}
	}
	return true
}
