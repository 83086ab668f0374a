package sharedstorage

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/percause/percause/components/sharedstorage/internal/metadata"
)

// Stager is what every client of shared_storage has beside storage.Client
// and storage.Walker: a component type-asserts its client to it.
type Stager interface {
	// Stage leaves ops for the next transaction of the shared database
	// and returns at once. The next transaction is the next Batch (or
	// Get, Set, Delete) of any client of the extension, which commits
	// everything staged until then ahead of its own operations, or, when
	// none comes within stage_flush, one the extension makes itself.
	// committed is called once, with that transaction's error, after it
	// (a failed transaction stores none of its operations; staging them
	// again is the caller's choice), on the goroutine that made it; it
	// may call Stage and Batch, and must not wait long. ops and their
	// values belong to the extension until then.
	//
	// Reads see what is committed only, and commit what is staged before
	// they read: a Get or Walk sees everything staged ahead of it.
	Stage(ops []*storage.Operation, committed func(error))
}

// Client is what GetClient returns.
type Client interface {
	storage.Client
	storage.Walker
	Stager
}

// client is one namespace (kind/type/name/storage name) of the shared
// database. Its keys are stored behind its prefix, which it adds and
// strips.
type client struct {
	db     *database
	prefix string
	closed atomic.Bool
}

var _ Client = (*client)(nil)

func (c *client) Get(ctx context.Context, key string) ([]byte, error) {
	op := storage.GetOperation(key)
	if err := c.Batch(ctx, op); err != nil {
		return nil, err
	}
	return op.Value, nil
}

func (c *client) Set(ctx context.Context, key string, value []byte) error {
	return c.Batch(ctx, storage.SetOperation(key, value))
}

func (c *client) Delete(ctx context.Context, key string) error {
	return c.Batch(ctx, storage.DeleteOperation(key))
}

// Batch runs ops in order in one transaction, after everything staged by
// any client until now; Get results are put in place.
func (c *client) Batch(ctx context.Context, ops ...*storage.Operation) error {
	if c.closed.Load() {
		return ErrClosed
	}
	inner := prefixed(c.prefix, ops)
	err := c.db.commit(ctx, metadata.TriggerBatch, inner)
	if err == nil {
		copyGets(ops, inner)
	}
	return err
}

// Walk calls fn for every key of this client (without its prefix), in
// key order, and applies the operations fn returns to this client's keys.
func (c *client) Walk(ctx context.Context, fn storage.WalkFunc) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.db.walk(ctx, c.prefix, fn)
}

func (c *client) Stage(ops []*storage.Operation, committed func(error)) {
	if c.closed.Load() {
		if committed != nil {
			go committed(ErrClosed)
		}
		return
	}
	c.db.stage(staged{user: ops, inner: prefixed(c.prefix, ops), committed: committed})
}

// Close commits what is staged, so a component that staged before
// closing knows the outcome when Close returns, and refuses this client's
// later operations. The shared database stays open for the other clients.
func (c *client) Close(ctx context.Context) error {
	if c.closed.Swap(true) {
		return nil
	}
	if !c.db.hasStaged() {
		return nil
	}
	return c.db.commit(ctx, metadata.TriggerClose, nil)
}
