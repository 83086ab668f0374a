package sharedstorage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

const testPebble = "shared_storage"

func openTestPebble(t testing.TB, fs pebblevfs.FS, dir string, fsync bool) *pebbleStore {
	t.Helper()
	s, err := openPebble(fs, dir, testPebble, fsync)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func closePebble(t testing.TB, s *pebbleStore) {
	t.Helper()
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// pebbleHeld is every key the store holds.
func pebbleHeld(t testing.TB, s *pebbleStore) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := s.Walk(context.Background(), func(k string, v []byte) ([]*storage.Operation, error) {
		out[k] = string(v)
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// walBytes is how much Pebble has written to its write-ahead log.
func walBytes(s *pebbleStore) uint64 { return s.db.Metrics().WAL.BytesWritten }

// TestPebbleOneBatchOneTransaction: a batch is one transaction: a Get in
// it reads what the batch set before it, a Get of a key there is not
// reads nil, a batch of reads only writes nothing, and a reopen reads
// back what was committed, in the store's directory (NAME.pebble).
func TestPebbleOneBatchOneTransaction(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := openTestPebble(t, nil, dir, false)
	get, missing := storage.GetOperation("a"), storage.GetOperation("none")
	if err := s.Batch(ctx, set("a", "1"), get, set("b", "2"), storage.DeleteOperation("a"), missing); err != nil {
		t.Fatal(err)
	}
	if string(get.Value) != "1" || missing.Value != nil {
		t.Errorf("Gets in the batch read %q and %q, want 1 and nothing", get.Value, missing.Value)
	}
	before := walBytes(s)
	if v, err := s.Get(ctx, "b"); err != nil || string(v) != "2" {
		t.Fatalf("Get b: %q, %v", v, err)
	}
	if v, err := s.Get(ctx, "a"); err != nil || v != nil {
		t.Fatalf("Get of a deleted key: %q, %v", v, err)
	}
	if after := walBytes(s); after != before {
		t.Errorf("reads wrote %d bytes to the write-ahead log", after-before)
	}
	if err := s.Set(ctx, "c", []byte("3")); err != nil {
		t.Fatal(err)
	}
	closePebble(t, s)
	if desc, err := pebble.Peek(filepath.Join(dir, testPebble+".pebble"), pebblevfs.Default); err != nil || !desc.Exists {
		t.Errorf("no database in %s.pebble: %v", testPebble, err)
	}
	again := openTestPebble(t, nil, dir, false)
	defer closePebble(t, again)
	if got := pebbleHeld(t, again); !maps.Equal(got, map[string]string{"b": "2", "c": "3"}) {
		t.Fatalf("after a reopen: %v", got)
	}
	if err := s.Set(ctx, "late", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Set on a closed store: %v, want ErrClosed", err)
	}
}

// TestPebbleHandsOutCopies: what Get returns and what Walk hands to fn
// are the caller's: changing them changes nothing stored.
func TestPebbleHandsOutCopies(t *testing.T) {
	ctx := context.Background()
	s := openTestPebble(t, nil, t.TempDir(), false)
	defer closePebble(t, s)
	if err := s.Set(ctx, "a", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	copy(got, "XXXX")
	if err := s.Walk(ctx, func(_ string, v []byte) ([]*storage.Operation, error) {
		copy(v, "YYYY")
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Get(ctx, "a"); string(again) != "kept" {
		t.Fatalf("after the caller changed what it was handed, a reads %q", again)
	}
}

// TestPebbleWalkInKeyOrder: Walk visits every key in key order and
// applies what fn returns as one batch; on storage.SkipAll it stops and
// still applies what was returned so far; on an error, nothing.
func TestPebbleWalkInKeyOrder(t *testing.T) {
	ctx := context.Background()
	s := openTestPebble(t, nil, t.TempDir(), false)
	defer closePebble(t, s)
	for _, k := range []string{"c", "a", "d", "b"} {
		if err := s.Set(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	err := s.Walk(ctx, func(k string, _ []byte) ([]*storage.Operation, error) {
		seen = append(seen, k)
		if k == "c" {
			return []*storage.Operation{storage.DeleteOperation("a")}, storage.SkipAll
		}
		return []*storage.Operation{set(k, k+k)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []string{"a", "b", "c"}) {
		t.Errorf("walked %v", seen)
	}
	if got := pebbleHeld(t, s); !maps.Equal(got, map[string]string{"b": "bb", "c": "c", "d": "d"}) {
		t.Errorf("after the walk: %v", got)
	}
	boom := errors.New("boom")
	if err := s.Walk(ctx, func(string, []byte) ([]*storage.Operation, error) {
		return []*storage.Operation{storage.DeleteOperation("d")}, boom
	}); !errors.Is(err, boom) {
		t.Errorf("a walk whose fn fails: %v", err)
	}
	if _, ok := pebbleHeld(t, s)["d"]; !ok {
		t.Error("a failed walk applied its operations")
	}
}

// commitTurns commits n batches on s, batch i setting turn/i and
// pair/i to a 600-byte value: what a crash keeps of them must be whole
// batches (both keys or neither) and a prefix of them.
func commitTurns(t testing.TB, s *pebbleStore, n int) {
	t.Helper()
	v := bytes.Repeat([]byte("v"), 600)
	for i := range n {
		if err := s.Batch(context.Background(), storage.SetOperation(fmt.Sprintf("turn/%05d", i), v),
			storage.SetOperation(fmt.Sprintf("pair/%05d", i), v)); err != nil {
			t.Fatal(err)
		}
	}
}

// keptTurns checks that what s holds is whole batches of commitTurns, a
// prefix of them, and returns how many.
func keptTurns(t testing.TB, s *pebbleStore) int {
	t.Helper()
	held := pebbleHeld(t, s)
	kept := 0
	for ; ; kept++ {
		_, turn := held[fmt.Sprintf("turn/%05d", kept)]
		_, pair := held[fmt.Sprintf("pair/%05d", kept)]
		if turn != pair {
			t.Fatalf("batch %d kept in part: turn %v, pair %v", kept, turn, pair)
		}
		if !turn {
			break
		}
	}
	if len(held) != 2*kept {
		t.Fatalf("%d keys kept, want the %d of the first %d batches and no later one", len(held), 2*kept, kept)
	}
	return kept
}

// TestPebbleCrashKeepsWhatItShould: n batches committed, then a crash,
// simulated on Pebble's crashable in-memory files: a kill keeps what was
// written to the files and loses only what the process held; a power
// loss keeps what was flushed to the disk, and a random part of the
// rest. Reopened, the store holds whole batches, a prefix of them, and:
//   - with fsync, every batch, whatever the crash;
//   - without, every batch after a kill (each commit was written to the
//     file before it returned, as the log's record is), and after a
//     power loss opens without an error, what it lost the tail;
//   - pebble.NoSync (what the engine does not use) can lose the last
//     batches even to a kill, those Pebble still held in its buffer
//     (logged: how many depends on how far its flush goroutine got;
//     1,095 to 2,011 of 6,000 in seven of eight runs, none in the
//     eighth).
func TestPebbleCrashKeepsWhatItShould(t *testing.T) {
	const n = 6000                     // 7.2 MB: write-ahead logs closed and flushed to tables, and one open
	rng := rand.New(rand.NewPCG(1, 0)) // CrashClone asks for one
	kill := pebblevfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rng}
	powerLoss := pebblevfs.CrashCloneCfg{RNG: rng}
	for _, c := range []struct {
		name   string
		fsync  bool
		noSync bool
		crash  func(seed int64) pebblevfs.CrashCloneCfg
		want   string // "all", "prefix", "lost" (may lose, logged)
	}{
		{"fsync, kill", true, false, func(int64) pebblevfs.CrashCloneCfg { return kill }, "all"},
		{"fsync, power loss", true, false, func(int64) pebblevfs.CrashCloneCfg { return powerLoss }, "all"},
		{"fsync, power loss keeping half the unflushed", true, false, half, "all"},
		{"no fsync, kill", false, false, func(int64) pebblevfs.CrashCloneCfg { return kill }, "all"},
		{"no fsync, power loss", false, false, func(int64) pebblevfs.CrashCloneCfg { return powerLoss }, "prefix"},
		{"no fsync, power loss keeping half the unflushed", false, false, half, "prefix"},
		{"pebble.NoSync, kill", false, true, func(int64) pebblevfs.CrashCloneCfg { return kill }, "lost"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for seed := range int64(3) {
				fs := pebblevfs.NewCrashableMem()
				s, err := pebbleOpening{fs: fs, dir: "/data", name: testPebble, fsync: c.fsync, noSync: c.noSync}.open()
				if err != nil {
					t.Fatal(err)
				}
				commitTurns(t, s, n)
				// The memtables filled are flushed in the background: a
				// crash after that tries tables and logs.
				for deadline := time.Now().Add(10 * time.Second); tables(s) == 0; time.Sleep(10 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("no table was written: the crash would try only the write-ahead logs")
					}
				}
				crashed := fs.CrashClone(c.crash(seed))
				closePebble(t, s)

				s, err = openPebble(crashed, "/data", testPebble, c.fsync)
				if err != nil {
					t.Fatalf("seed %d: reopening after the crash: %v", seed, err)
				}
				kept := keptTurns(t, s)
				closePebble(t, s)
				t.Logf("seed %d: %d of %d batches kept", seed, kept, n)
				switch {
				case c.want == "all" && kept != n:
					t.Fatalf("seed %d: %d of %d batches kept, want all", seed, kept, n)
				case c.want == "lost" && kept < n:
					t.Logf("seed %d: pebble.NoSync lost %d committed batches to a kill", seed, n-kept)
				}
				if c.want != "prefix" {
					return // the crash is not random: once is enough
				}
			}
		})
	}
}

// tables is how many tables the store has.
func tables(s *pebbleStore) int64 {
	n := int64(0)
	for _, l := range s.db.Metrics().Levels {
		n += l.TablesCount
	}
	return n
}

func half(seed int64) pebblevfs.CrashCloneCfg {
	return pebblevfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rand.New(rand.NewPCG(uint64(seed), 0))}
}

// TestPebbleRefusedWriteIsFatal: a write-ahead write the disk refuses
// (a full disk) is an error Pebble cannot go on after: it says so through
// its logger's Fatalf, which ends the process (here, the test's fatal),
// where the log engine fails the one batch and goes on
// (TestLogFailedWriteChangesNothing). What was committed before is kept.
func TestPebbleRefusedWriteIsFatal(t *testing.T) {
	for _, fsync := range []bool{true, false} {
		t.Run(fmt.Sprint("fsync ", fsync), func(t *testing.T) {
			mem := pebblevfs.NewCrashableMem()
			refuse := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
				if strings.HasSuffix(op.Path, ".log") && (op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFileWriteAt) {
					return errorfs.ErrInjected
				}
				return nil
			})}
			type fatal struct{ msg string }
			s, err := pebbleOpening{fs: errorfs.Wrap(mem, refuse), dir: "/data", name: testPebble, fsync: fsync,
				fatal: func(msg string) { panic(fatal{msg}) }}.open()
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := s.Set(ctx, "a", []byte("1")); err != nil {
				t.Fatal(err)
			}
			crashed := mem.CrashClone(pebblevfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(1, 0))})
			refuse.On()
			var got any
			func() {
				defer func() { got = recover() }()
				err = s.Set(ctx, "b", []byte("2"))
			}()
			f, ok := got.(fatal)
			if !ok || !strings.Contains(f.msg, "fatal commit error") {
				t.Fatalf("a refused write: %v (recovered %v), want Pebble's fatal commit error", err, got)
			}
			// The store is not closed: Pebble's commits cannot go on. What
			// was committed before the refusal is on the files.
			again := openTestPebble(t, crashed, "/data", fsync)
			defer closePebble(t, again)
			if got := pebbleHeld(t, again); !maps.Equal(got, map[string]string{"a": "1"}) {
				t.Fatalf("after the refusal, reopened: %v", got)
			}
		})
	}
}

// TestPebbleBeginsWithWhatWasKept: the extension on the log engine, or
// on bbolt with no log beside it, stores keys and stops; started again on
// pebble it holds them all, the old files left as they were. Started a
// third time, pebble is not seeded again: what it changed stays.
func TestPebbleBeginsWithWhatWasKept(t *testing.T) {
	for _, from := range []string{EngineLog, EngineBbolt} {
		t.Run(from, func(t *testing.T) {
			dir := t.TempDir()
			ctx := context.Background()
			h := start(t, dir, func(c *Config) { c.Engine = from })
			if err := h.client(component.KindProcessor, verdictID, "").Batch(ctx, set("turn", "held"), set("turn2", "held")); err != nil {
				t.Fatal(err)
			}
			if err := h.client(component.KindConnector, countID, "").Set(ctx, "id", []byte("counted")); err != nil {
				t.Fatal(err)
			}
			h.stop()
			before := fileSizes(t, dir)

			onPebble := func(c *Config) { c.Engine = EnginePebble }
			h = start(t, dir, onPebble)
			proc := h.client(component.KindProcessor, verdictID, "")
			if got := contents(t, proc); !equal(got, map[string]string{"turn": "held", "turn2": "held"}) {
				t.Fatalf("the processor's keys on pebble: %v", got)
			}
			if got := contents(t, h.client(component.KindConnector, countID, "")); !equal(got, map[string]string{"id": "counted"}) {
				t.Fatalf("the connector's keys on pebble: %v", got)
			}
			if err := proc.Delete(ctx, "turn2"); err != nil {
				t.Fatal(err)
			}
			h.stop()
			after := fileSizes(t, dir)
			for name, size := range before {
				if after[name] != size {
					t.Errorf("%s was %d bytes before pebble started, %d after", name, size, after[name])
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "shared_storage.pebble.tmp")); !os.IsNotExist(err) {
				t.Errorf("the seeding's directory is left: %v", err)
			}

			h = start(t, dir, onPebble)
			if got := contents(t, h.client(component.KindProcessor, verdictID, "")); !equal(got, map[string]string{"turn": "held"}) {
				t.Fatalf("on pebble's second start: %v, want its own change kept, not seeded again", got)
			}
		})
	}
}

// fileSizes is the size of every file directly in dir but pebble's.
func fileSizes(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = info.Size()
	}
	return out
}

// TestPebbleSeedingACrashCutShort: a seeding a crash cut short (its
// directory left, never renamed into place) is done again in full.
func TestPebbleSeedingACrashCutShort(t *testing.T) {
	dir := t.TempDir()
	seed := func() ([]*storage.Operation, error) { return []*storage.Operation{set("a", "1"), set("b", "2")}, nil }
	tmp := filepath.Join(dir, testPebble+".pebble.tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "000002.log"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := pebbleOpening{dir: dir, name: testPebble, seed: seed}.open()
	if err != nil {
		t.Fatal(err)
	}
	defer closePebble(t, s)
	if got := pebbleHeld(t, s); !maps.Equal(got, map[string]string{"a": "1", "b": "2"}) {
		t.Fatalf("after seeding again: %v", got)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatalf("the cut-short seeding's directory: %v, want it removed", err)
	}
}

// TestPebbleFormatIsPinned: a new database is made in pebbleFormat, below
// the format whose write-ahead records claim an offset synced.
func TestPebbleFormatIsPinned(t *testing.T) {
	s := openTestPebble(t, nil, t.TempDir(), false)
	defer closePebble(t, s)
	if got := s.db.FormatMajorVersion(); got != pebbleFormat || got >= pebble.FormatWALSyncChunks {
		t.Fatalf("format %s, want %s (below %s)", got, pebbleFormat, pebble.FormatWALSyncChunks)
	}
}
