package spool

import (
	"context"
	"testing"
)

// BenchmarkPut is one durable batch write (temporary file, fsync, rename,
// folder fsync): the cost the exporter goroutine pays per batch, never the
// recording path.
func BenchmarkPut(b *testing.B) {
	s, err := Open(b.TempDir(), func(context.Context, string, []byte) error { return nil }, WithBusy(func() bool { return true }))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	payload := make([]byte, 8<<10)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Put("traces", payload); err != nil {
			b.Fatal(err)
		}
	}
}
