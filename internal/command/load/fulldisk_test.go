package load_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/percause/percause/internal/command/load"
)

// fullDiskSize is the tmpfs the verdict file is written to: room for a few
// hundred turns' verdicts, and quick to fill.
const fullDiskSize = 2 << 20

// TestFullDiskRefusedThenCountedOnce: the verdict file is on a small
// filesystem of its own (a tmpfs mounted for the test). Turns go in while
// there is room; then the filesystem is filled, so every verdict write fails,
// and more turns are sent: the collector answers with a retryable status
// and the client sends them again. Once the filler is deleted, every turn
// sent, before and during, has exactly one verdict in the file, the one its
// cause should get, and is counted exactly once on the Prometheus endpoint.
// Mounting needs root; CI runs as root.
func TestFullDiskRefusedThenCountedOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting the small filesystem the verdict file fills needs root (CI runs as root); without it no write can be made to fail with a full disk")
	}
	disk := mountTmpfs(t, fullDiskSize)
	verdictFile := filepath.Join(disk, "verdicts.jsonl")
	// The wait is long, as in TestRefusalsCountedOnce: a take refused for a
	// while must not make its turn unknown.
	c := startCollectorEnv(t, "fulldisk", []string{"PERCAUSE_VERDICT_FILE=" + verdictFile, "PERCAUSE_VERDICT_WAIT=60s"}, localYAML())
	ctx := context.Background()
	f := load.NewFleet(50, 3, 5)
	s := load.NewSender(c.TracesURL, 16)
	var mu sync.Mutex
	want := map[string]string{}
	accepted := func(tr *load.Turn) {
		mu.Lock()
		want[tr.TraceID.String()] = tr.Cause
		mu.Unlock()
	}

	sent, err := load.Run(ctx, s, f, 100, 16, 0, accepted)
	if err != nil {
		t.Fatal(err)
	}
	filler := fill(t, disk)
	refusedBefore := s.Refused.Load()
	type result struct {
		sent load.Tally
		err  error
	}
	done := make(chan result, 1)
	go func() {
		during, err := load.Run(ctx, s, f, 300, 16, 0, accepted)
		done <- result{during, err}
	}()
	var writeErrors float64
	var r result
	finished := false
	for deadline := time.Now().Add(60 * time.Second); !finished; {
		select {
		case r = <-done:
			finished = true
		case <-time.After(100 * time.Millisecond):
		}
		if e, err := load.Scrape(ctx, c.TelURL, "otelcol_exporter_verdicts_write_errors_total", ""); err == nil {
			writeErrors = e.By[""]
		}
		if writeErrors > 0 && s.Refused.Load() > refusedBefore {
			break
		}
		if finished || time.Now().After(deadline) {
			_ = os.Remove(filler)
			t.Fatalf("with the filesystem full, %v verdict writes failed and %d requests were refused (the turns sent meanwhile all done: %v): the fault never reached the client, so this test proves nothing",
				writeErrors, s.Refused.Load()-refusedBefore, finished)
		}
	}
	// Refused for a while longer, then the room comes back.
	time.Sleep(time.Second)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	select {
	case r = <-done:
	case <-time.After(120 * time.Second):
		t.Fatal("the turns refused while the disk was full were not accepted within 2 minutes of freeing it")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	for k, v := range r.sent {
		sent[k] += v
	}
	e, _ := load.Scrape(ctx, c.TelURL, "otelcol_exporter_verdicts_write_errors_total", "")
	t.Logf("%d turns; while the disk was full %v verdict writes failed and %d requests were refused and sent again",
		sent.Total(), e.By[""], s.Refused.Load()-refusedBefore)

	_, diff, err := load.WaitCounted(ctx, c.PromURL, map[string]float64{}, sent, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(diff) > 0 {
		t.Errorf("counts differ from what was sent: %v", diff)
	}
	var got map[string][]string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if got, _ = readVerdicts(t, verdictFile); len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
	}
	var missing, twice, wrong int
	for id, cause := range want {
		switch vs := got[id]; {
		case len(vs) == 0:
			missing++
		case len(vs) > 1:
			twice++
		case vs[0] != cause:
			wrong++
		}
	}
	if missing+twice+wrong > 0 || len(got) != len(want) {
		t.Fatalf("of %d turns: %d without a verdict, %d with more than one, %d with the wrong one; %d traces in the file",
			len(want), missing, twice, wrong, len(got))
	}
}

// mountTmpfs mounts a tmpfs of size bytes on a new folder and unmounts it
// when the test ends (after what the test starts later has stopped).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("percause-test", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		t.Fatalf("mount -t tmpfs -o size=%d on %s: %v", size, dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	return dir
}

// fill writes a file in dir until the filesystem has no room left, and
// returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Bavail != 0 {
		// A last write smaller than a chunk takes what is left.
		for {
			if _, err := f.Write(chunk[:512]); err != nil {
				break
			}
		}
	}
	return path
}
