package up

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"time"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/verdict"
)

// maxVerdictLine bounds one line of the verdict file the finder reads (one
// export request); a longer line is skipped, never held.
const maxVerdictLine = 16 << 20

// LinkedTurn is the turn a notification names: the latest turn of the alert's
// installation whose verdict implicated the alert's cause.
type LinkedTurn struct {
	// TraceID is the turn's trace, in hex: the page's link to it.
	TraceID string
	// Turn is the turn's index in its launch.
	Turn     int64
	Causes   []string
	Evidence string

	Installation string
	// Ended is when the turn ended (the verdict's percause.turn.time).
	Ended time.Time
	Link  string
	// PoolAfter and PoolBefore are the launch's pool_reset tally at the end
	// of the turn and of its previous turn; HasPoolBefore is false on a
	// launch's first turn.
	PoolAfter, PoolBefore int64
	HasPool               bool
	HasPoolBefore         bool
}

// findTurn scans the verdict file for the latest turn of installation that
// ended at or after since and whose verdict implicated cause. The file is
// streamed, and a line is parsed only if it names the installation, so a
// scan of the whole file (100 MB before it rotates) takes a fraction of a
// second. A file that does not exist yet has no turn.
func findTurn(path, installation, cause string, since time.Time) (LinkedTurn, bool, error) {
	all, err := findTurns(path, installation, cause, since)
	if len(all) == 0 {
		return LinkedTurn{}, false, err
	}
	return all[len(all)-1], true, err
}

// findTurns is every turn findTurn considers, by the time each ended (the
// latest last), each trace once.
func findTurns(path, installation, cause string, since time.Time) ([]LinkedTurn, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []LinkedTurn
	seen := map[string]bool{}
	needle := []byte(`"` + installation + `"`)
	err = eachLine(f, func(line []byte) {
		if !bytes.Contains(line, needle) {
			return
		}
		for _, t := range turnsOf(line) {
			if t.Installation != installation || t.Ended.Before(since) || !slices.Contains(t.Causes, cause) || seen[t.TraceID] {
				continue
			}
			seen[t.TraceID] = true
			out = append(out, t)
		}
	})
	slices.SortStableFunc(out, func(a, b LinkedTurn) int { return a.Ended.Compare(b.Ended) })
	return out, err
}

// movements is how much a cause moved over turns: for the pool, the heals
// (each turn's tally after less before; a launch's first turn its tally);
// for any other cause, the turns.
func movements(turns []LinkedTurn, cause string) int64 {
	var n int64
	for _, t := range turns {
		switch {
		case cause == semconv.CausePool && t.HasPool && t.HasPoolBefore:
			n += max(t.PoolAfter-t.PoolBefore, 0)
		case cause == semconv.CausePool && t.HasPool:
			n += t.PoolAfter
		default:
			n++
		}
	}
	return n
}

// eachLine calls fn with each whole line of r, skipping lines longer than
// maxVerdictLine and a last line without its newline (still being
// written).
func eachLine(r io.Reader, fn func([]byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			if !tooLong {
				if long != nil {
					fn(append(long, chunk...))
				} else {
					fn(chunk)
				}
			}
			long, tooLong = nil, false
		case errors.Is(err, bufio.ErrBufferFull):
			if !tooLong {
				long = append(long, chunk...)
				if len(long) > maxVerdictLine {
					long, tooLong = nil, true
				}
			}
		case errors.Is(err, io.EOF):
			return nil
		default:
			return err
		}
	}
}

// turnsOf reads the verdict spans of one line of the verdict file (an OTLP
// JSON export request); a line that does not parse has none.
func turnsOf(line []byte) []LinkedTurn {
	records, err := verdict.Parse(line)
	if err != nil {
		return nil
	}
	var out []LinkedTurn
	for _, r := range records {
		if r.TraceID.IsEmpty() {
			continue // a turn without its trace ID has no page to link
		}
		t := LinkedTurn{TraceID: r.TraceID.String(), Turn: r.Index, Causes: r.Causes, Evidence: r.Evidence,
			Installation: r.Installation, Link: r.Link,
			PoolAfter: r.PoolResets.V, HasPool: r.PoolResets.OK, PoolBefore: r.PoolBefore.V, HasPoolBefore: r.PoolBefore.OK}
		if r.TurnTime != 0 {
			t.Ended = r.TurnTime.AsTime()
		}
		out = append(out, t)
	}
	return out
}
