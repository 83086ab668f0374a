package poolsim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/percause/percause/internal/testenv"
)

// referenceRows reads the three reference rows from DOMAIN.md itself, so the
// model and the document cannot drift apart.
func referenceRows(t *testing.T) string {
	t.Helper()
	path := filepath.Join(testenv.RepoRoot(), "..", "shared", "design", "DOMAIN.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("DOMAIN.md not beside the repository (%v); the golden file still applies", err)
	}
	var rows []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "checks ") && strings.Contains(line, "| one miss:") {
			rows = append(rows, strings.TrimPrefix(line, "    "))
		}
	}
	if len(rows) != 3 {
		t.Fatalf("found %d reference rows in DOMAIN.md, want 3", len(rows))
	}
	return strings.Join(rows, "\n") + "\n"
}

func TestTableMatchesGolden(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "reference.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if got := Table(); got != string(want) {
		t.Fatalf("reference table differs from testdata/reference.golden\n got:\n%s\nwant:\n%s", got, want)
	}
}

func TestTableMatchesDomain(t *testing.T) {
	want := referenceRows(t)
	if got := Table(); got != want {
		t.Fatalf("reference table differs from DOMAIN.md\n got:\n%q\nwant:\n%q", got, want)
	}
}

func TestCases(t *testing.T) {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	tests := []struct {
		name string
		c    Case
		want string
	}{
		{"one pool, engine gone: misses regardless of the pool",
			Case{EngineGone: true, WordsUntil: -1},
			"one pool, the engine gone    checks  6, missed  6 | one miss:  5.0 s  verdict: 21.0 s"},
		{"one pool, short takes: the burst clears before the check",
			Case{Takes: []time.Duration{sec(1), sec(1), sec(1), sec(1)}, WordsUntil: -1},
			"one pool, a healthy engine   checks 15, missed  0 | one miss: never   verdict: never"},
		{"one pool, her words end at 10 s: the stream's connection frees, the check finds it",
			Case{WordsUntil: sec(10)},
			"one pool, a healthy engine   checks 15, missed  0 | one miss: never   verdict: never"},
		{"one pool, a fifth long take: two checks miss in a row, yet her words keep the verdict away",
			Case{Takes: []time.Duration{sec(14), sec(19), sec(24), sec(30), sec(30)}, WordsUntil: -1},
			"one pool, a healthy engine   checks 11, missed  2 | one miss: 27.4 s  verdict: never"},
		{"two pools, engine gone mid-reply: her words keep the verdict away",
			Case{TwoPools: true, EngineGone: true, WordsUntil: sec(40.4)},
			"two pools, the engine gone   checks  6, missed  6 | one miss:  5.0 s  verdict: never"},
		{"two pools, engine gone with words until 20 s: quiet from 20 s, verdict at 37 s",
			Case{TwoPools: true, EngineGone: true, WordsUntil: sec(20)},
			"two pools, the engine gone   checks  6, missed  6 | one miss:  5.0 s  verdict: 37.0 s"},
		{"two pools, long takes: bulk never touches control",
			Case{TwoPools: true, Takes: []time.Duration{sec(60), sec(60), sec(60), sec(60), sec(60), sec(60)}, WordsUntil: -1},
			"two pools, a healthy engine  checks 15, missed  0 | one miss: never   verdict: never"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Run(tt.c)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Row(); got != tt.want {
				t.Errorf("\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestOnePoolMissIsTheQueuedCheck(t *testing.T) {
	r, err := Run(Case{WordsUntil: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Calls {
		if p.Missed {
			if p.Arrival != 22400*time.Millisecond {
				t.Errorf("missed check asked at %s, want 22.4s (queued behind the burst)", p.Arrival)
			}
			return
		}
	}
	t.Fatal("no missed check in the one-pool case")
}

func TestValidate(t *testing.T) {
	if _, err := Run(Case{Takes: []time.Duration{0}}); err == nil || !strings.Contains(err.Error(), "take 1 length") {
		t.Fatalf("want a take-length error, got %v", err)
	}
}
