package sharedstorage

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/percause/percause/components/sharedstorage/internal/metadata"
)

// ErrClosed is what a client's operations, and the committed callback of
// an operation staged on it, get once the client or the extension is
// closed.
var ErrClosed = errors.New("shared_storage: closed")

// staged is what one Stage call left for the next commit: the caller's
// operations, their copies with the namespace's prefix, and the callback.
type staged struct {
	user, inner []*storage.Operation
	committed   func(error)
}

// database is the one database every client shares, through one client
// of its engine (the log, Pebble, or file_storage's for bbolt). Every transaction goes through it one at a time
// (commitMu), and each carries, ahead of its own operations, everything
// staged until it began: staged operations land in the order they were
// staged, before anything asked after them.
type database struct {
	inner storage.Client
	// walker is inner's Walk (every engine's client has one).
	walker storage.Walker
	flush  time.Duration
	tel    *telemetry

	// commitMu is held for the whole of a transaction.
	commitMu sync.Mutex

	// stageMu guards what follows; it is never held across a transaction.
	stageMu   sync.Mutex
	pending   []staged
	timer     *time.Timer
	timerSet  bool // the timer will fire; a Stage does not set it again
	closed    bool
	closedErr error
}

func newDatabase(inner storage.Client, flush time.Duration, tel *telemetry) (*database, error) {
	w, ok := inner.(storage.Walker)
	if !ok {
		return nil, errors.New("shared_storage: file_storage's client cannot walk its keys")
	}
	return &database{inner: inner, walker: w, flush: flush, tel: tel}, nil
}

// stage leaves s for the next transaction and makes sure one comes within
// the flush delay.
func (d *database) stage(s staged) {
	d.stageMu.Lock()
	if d.closed {
		d.stageMu.Unlock()
		if s.committed != nil {
			go s.committed(ErrClosed) // never under the caller's own locks
		}
		return
	}
	d.pending = append(d.pending, s)
	if !d.timerSet {
		d.timerSet = true
		if d.timer == nil {
			d.timer = time.AfterFunc(d.flush, d.flushStaged)
		} else {
			d.timer.Reset(d.flush)
		}
	}
	d.stageMu.Unlock()
}

// flushStaged is the timer's commit: what is staged, when no client's
// batch carried it in time.
func (d *database) flushStaged() {
	d.stageMu.Lock()
	d.timerSet = false
	d.stageMu.Unlock()
	_ = d.commit(context.Background(), metadata.TriggerStageFlush, nil)
}

// take hands over what is staged. The caller holds commitMu.
func (d *database) take() ([]staged, bool) {
	d.stageMu.Lock()
	defer d.stageMu.Unlock()
	p := d.pending
	d.pending = nil
	return p, d.closed
}

// commit runs one transaction: everything staged, then ops (already
// prefixed). It calls the staged callbacks with the transaction's error
// before it returns. Nothing staged and no ops: no transaction.
func (d *database) commit(ctx context.Context, trigger string, ops []*storage.Operation) error {
	d.commitMu.Lock()
	taken, closed := d.take()
	if closed {
		d.commitMu.Unlock()
		done(taken, ErrClosed)
		return ErrClosed
	}
	err := d.write(ctx, trigger, taken, ops)
	d.commitMu.Unlock()
	done(taken, err)
	return err
}

// write is one transaction of taken's operations and then ops. The caller
// holds commitMu.
func (d *database) write(ctx context.Context, trigger string, taken []staged, ops []*storage.Operation) error {
	n := 0
	for _, s := range taken {
		n += len(s.inner)
	}
	if n == 0 && len(ops) == 0 {
		return nil // nothing to write; the callbacks are told so
	}
	all := ops
	if n > 0 {
		all = make([]*storage.Operation, 0, n+len(ops))
		for _, s := range taken {
			all = append(all, s.inner...)
		}
		all = append(all, ops...)
	}
	err := d.inner.Batch(ctx, all...)
	for _, s := range taken {
		copyGets(s.user, s.inner)
	}
	d.tel.committed(ctx, trigger, n, err)
	return err
}

// walk runs fn over the keys under prefix, in one transaction with the
// operations fn returns, after committing what was staged before it (so a
// walk sees everything staged ahead of it, and nothing uncommitted).
func (d *database) walk(ctx context.Context, prefix string, fn storage.WalkFunc) error {
	d.commitMu.Lock()
	taken, closed := d.take()
	if closed {
		d.commitMu.Unlock()
		done(taken, ErrClosed)
		return ErrClosed
	}
	flushErr := d.write(ctx, metadata.TriggerWalk, taken, nil)
	var returned [][2][]*storage.Operation
	err := d.walker.Walk(ctx, func(key string, value []byte) ([]*storage.Operation, error) {
		if !strings.HasPrefix(key, prefix) {
			// Every engine walks its keys in order: past the prefix,
			// none of this namespace's is left.
			if key > prefix {
				return nil, storage.SkipAll
			}
			return nil, nil
		}
		ops, err := fn(key[len(prefix):], value)
		if len(ops) == 0 {
			return nil, err
		}
		inner := prefixed(prefix, ops)
		returned = append(returned, [2][]*storage.Operation{ops, inner})
		return inner, err
	})
	d.tel.committed(ctx, metadata.TriggerWalk, 0, err)
	d.commitMu.Unlock()
	done(taken, flushErr)
	if err == nil {
		for _, r := range returned {
			copyGets(r[0], r[1])
		}
	}
	return err
}

// shutdown commits what is staged, refuses every later operation and
// closes the engine's client.
func (d *database) shutdown(ctx context.Context) error {
	d.commitMu.Lock()
	d.stageMu.Lock()
	if d.closed {
		d.stageMu.Unlock()
		d.commitMu.Unlock()
		return d.closedErr
	}
	d.closed = true
	taken := d.pending
	d.pending = nil
	if d.timer != nil {
		d.timer.Stop()
	}
	d.stageMu.Unlock()
	err := d.write(ctx, metadata.TriggerClose, taken, nil)
	d.closedErr = errors.Join(err, d.inner.Close(ctx))
	d.commitMu.Unlock()
	done(taken, err)
	return d.closedErr
}

// hasStaged reports whether anything waits for a commit.
func (d *database) hasStaged() bool {
	d.stageMu.Lock()
	defer d.stageMu.Unlock()
	return len(d.pending) > 0
}

// done calls the callbacks of what one transaction carried, each once.
func done(taken []staged, err error) {
	for _, s := range taken {
		if s.committed != nil {
			s.committed(err)
		}
	}
}

// prefixed copies ops with prefix ahead of each key; the values are the
// caller's, not copied.
func prefixed(prefix string, ops []*storage.Operation) []*storage.Operation {
	out := make([]*storage.Operation, len(ops))
	inner := make([]storage.Operation, len(ops)) // one allocation, not one an operation
	for i, op := range ops {
		inner[i] = storage.Operation{Type: op.Type, Key: prefix + op.Key, Value: op.Value}
		out[i] = &inner[i]
	}
	return out
}

// copyGets hands the results of inner's Get operations to the caller's.
func copyGets(user, inner []*storage.Operation) {
	for i, op := range user {
		if op.Type == storage.Get {
			op.Value = inner[i].Value
		}
	}
}

// telemetry is the extension's own, with the attribute sets made once.
type telemetry struct {
	b       *metadata.TelemetryBuilder
	trigger map[string]metric.MeasurementOption
}

func newTelemetry(b *metadata.TelemetryBuilder) *telemetry {
	t := &telemetry{b: b, trigger: map[string]metric.MeasurementOption{}}
	for _, v := range []string{metadata.TriggerBatch, metadata.TriggerStageFlush, metadata.TriggerWalk, metadata.TriggerClose, metadata.TriggerImport} {
		t.trigger[v] = metric.WithAttributeSet(attribute.NewSet(attribute.String(metadata.AttributeTrigger, v)))
	}
	return t
}

// committed counts one transaction that carried stagedOps staged
// operations.
func (t *telemetry) committed(ctx context.Context, trigger string, stagedOps int, err error) {
	t.b.ExtensionSharedStorageCommits.AddFor(trigger, 1)
	if err != nil {
		t.b.ExtensionSharedStorageCommitErrors.Add(ctx, 1, t.trigger[trigger])
	}
	if stagedOps > 0 {
		t.b.ExtensionSharedStorageStaged.AddFor(trigger, int64(stagedOps))
	}
}
