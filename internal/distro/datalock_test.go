package distro

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/internal/testenv"
)

// TestSecondCollectorNamesTheHolder: two real collectors on one data
// folder. The second does not start, and says which process holds the
// folder; once the first is killed (SIGKILL: its lock file stays behind,
// naming it), the second starts on the same folder.
func TestSecondCollectorNamesTheHolder(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	first := testenv.StartCollector(t)
	pid := first.Cmd.Process.Pid
	sameFolder := []string{
		collectorconfig.EnvDataDir + "=" + first.DataDir,
		collectorconfig.EnvVerdictFile + "=" + filepath.Join(t.TempDir(), "verdicts.jsonl"),
	}
	out, err := runBinary(t, collectorEnv(t, sameFolder...), "collector")
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
	second := testenv.StartCollector(t,
		testenv.WithCollectorEnv(collectorconfig.EnvDataDir, first.DataDir),
		testenv.WithCollectorEnv(collectorconfig.EnvVerdictFile, first.VerdictFile))
	b, err := os.ReadFile(filepath.Join(first.DataDir, dataLockFile))
	if err != nil || !strings.Contains(string(b), fmt.Sprintf("pid %d ", second.Cmd.Process.Pid)) {
		t.Errorf("after the restart the lock file says %q (%v), want pid %d", b, err, second.Cmd.Process.Pid)
	}
}
