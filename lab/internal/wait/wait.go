// Package wait holds the one way the lab's engine and phone sleep on their
// scaled clocks: until a wall time, or until their work is cancelled.
package wait

import (
	"context"
	"time"
)

// Until sleeps until at, or returns ctx's error as soon as ctx is done. A time
// already past returns at once (with ctx's error, if any), so a late caller
// never waits to find out it was cancelled.
func Until(ctx context.Context, at time.Time) error {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
