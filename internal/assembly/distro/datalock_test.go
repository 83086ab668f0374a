package distro

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	filestorage "github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/components/sharedstorage"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// TestSecondCollectorNamesTheHolder: two real collectors on one data
// folder. The second does not start, and says which process holds the
// folder; once the first is killed (SIGKILL: its lock file stays behind,
// naming it), the second starts on the same folder. The embedded default
// keeps the folder in file_storage and shared_storage at once; the other
// configuration in shared_storage alone.
func TestSecondCollectorNamesTheHolder(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	for name, config := range map[string]string{
		"the embedded default": "",
		"shared_storage alone": filepath.Join("testdata", "shared-storage-only.yaml"),
	} {
		t.Run(name, func(t *testing.T) {
			var opts []testenv.CollectorOption
			args := []string{"collector"}
			if config != "" {
				abs, err := filepath.Abs(config)
				if err != nil {
					t.Fatal(err)
				}
				opts = append(opts, testenv.WithCollectorConfig(abs))
				args = append(args, "--config", abs)
			}
			first := testenv.StartCollector(t, opts...)
			pid := first.Cmd.Process.Pid
			sameFolder := []string{
				collectorconfig.EnvDataDir + "=" + first.DataDir,
				collectorconfig.EnvVerdictFile + "=" + filepath.Join(t.TempDir(), "verdicts.jsonl"),
			}
			out, err := runBinary(t, collectorEnv(t, sameFolder...), args...)
			if err == nil {
				t.Fatalf("a second collector on %s started:\n%s", first.DataDir, out)
			}
			want := fmt.Sprintf("the data folder %s is in use by percause pid %d (started ", first.DataDir, pid)
			if !strings.Contains(out, want) {
				t.Fatalf("the second collector failed without naming the holder (want %q):\n%s", want, out)
			}
			if !first.Exited() {
				if b, err := os.ReadFile(filepath.Join(first.DataDir, dataLockFile)); err != nil || !strings.Contains(string(b), fmt.Sprint(pid)) {
					t.Errorf("the lock file: %q, %v; want it to name pid %d", b, err, pid)
				}
			} else {
				t.Fatalf("the first collector exited:\n%s", first.Output())
			}

			// A crash leaves the file, not the lock.
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			testenv.WaitFor(t, 10*time.Second, "the first collector to die", first.Exited)
			second := testenv.StartCollector(t, append(opts,
				testenv.WithCollectorEnv(collectorconfig.EnvDataDir, first.DataDir),
				testenv.WithCollectorEnv(collectorconfig.EnvVerdictFile, first.VerdictFile))...)
			b, err := os.ReadFile(filepath.Join(first.DataDir, dataLockFile))
			if err != nil || !strings.Contains(string(b), fmt.Sprintf("pid %d ", second.Cmd.Process.Pid)) {
				t.Errorf("after the restart the lock file says %q (%v), want pid %d", b, err, second.Cmd.Process.Pid)
			}
		})
	}
}

// storageOn makes one of the distribution's storage extensions on dir for
// the collector whose service.instance.id is instance.
func storageOn(t *testing.T, f extension.Factory, dir, instance string) extension.Extension {
	t.Helper()
	cfg := f.CreateDefaultConfig()
	switch c := cfg.(type) {
	case *sharedstorage.Config:
		c.Directory = dir
	case *filestorage.Config:
		c.Directory = dir
	default:
		t.Fatalf("%s: config %T", f.Type(), cfg)
	}
	set := extensiontest.NewNopSettings(f.Type())
	set.ID = component.NewID(f.Type())
	set.Resource.Attributes().PutStr("service.instance.id", instance)
	ext, err := f.Create(context.Background(), set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ext
}

// TestOneCollectorSharesItsFolder: in one collector, file_storage and
// shared_storage on the same folder share its lock (flock alone would
// refuse the second); another collector in the same process is refused,
// naming the holder, until the last of the first one's extensions stops.
func TestOneCollectorSharesItsFolder(t *testing.T) {
	ctx, host := context.Background(), componenttest.NewNopHost()
	dir := t.TempDir()
	files := storageOn(t, lockedFileStorageFactory(), dir, "collector-a")
	shared := storageOn(t, lockedSharedStorageFactory(), dir, "collector-a")
	other := storageOn(t, lockedSharedStorageFactory(), dir, "collector-b")
	for _, e := range []extension.Extension{files, shared} {
		if err := e.Start(ctx, host); err != nil {
			t.Fatalf("one collector's storage extensions on one folder: %v", err)
		}
	}
	want := fmt.Sprintf("the data folder %s is in use by percause pid %d (started ", dir, os.Getpid())
	if err := other.Start(ctx, host); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("another collector started on the folder: %v (want %q)", err, want)
	}
	if err := files.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.Start(ctx, host); err == nil {
		t.Fatal("another collector started while shared_storage still held the folder")
	}
	if err := shared.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.Start(ctx, host); err != nil {
		t.Fatalf("the folder let go, another collector: %v", err)
	}
	if err := other.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
