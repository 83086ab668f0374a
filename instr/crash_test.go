package instr

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/percause/percause/instr/semconv"
)

// Environment of the child process TestSpoolChild runs as.
const (
	envChildDir      = "PERCAUSE_TEST_SPOOL_DIR"
	envChildEndpoint = "PERCAUSE_TEST_ENDPOINT"
	envChildTurns    = "PERCAUSE_TEST_TURNS"
	envChildMode     = "PERCAUSE_TEST_MODE" // "hang": wait to be killed; "exit": deliver and exit
)

// TestSpoolChild is not a test of its own: TestSpoolSurvivesKill runs the test
// binary again with this test selected to play a phone process.
func TestSpoolChild(t *testing.T) {
	dir := os.Getenv(envChildDir)
	if dir == "" {
		t.Skip("runs only as the child of TestSpoolSurvivesKill")
	}
	turns, _ := strconv.Atoi(os.Getenv(envChildTurns))
	sdk, err := Setup(context.Background(), WithServiceName(semconv.ServicePhone), WithInstallationID(testInstallation),
		WithEndpoint(os.Getenv(envChildEndpoint)), WithSpoolDir(dir), WithFlushInterval(10*time.Millisecond),
		WithMetricInterval(time.Hour), failOnRefusal(t))
	if err != nil {
		t.Fatal(err)
	}
	for range turns {
		_, turn := sdk.StartTurn(context.Background())
		turn.SetLink(semconv.LinkWifi, "")
		turn.Unit(Unit{TakeID: "t1", Cushion: 1})
		turn.End()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	switch os.Getenv(envChildMode) {
	case "loop":
		// Keep recording and spooling until killed; after each round, say
		// which turns are on disk.
		for {
			_, turn := sdk.StartTurn(context.Background())
			turn.Unit(Unit{TakeID: "t1", Cushion: 1})
			turn.End()
			if err := sdk.tp.ForceFlush(ctx); err != nil {
				t.Fatal(err)
			}
			fmt.Printf("SPOOLED instance=%s through=%d\n", sdk.InstanceID(), turn.Index())
		}
	case "hang":
		// The collector is down: put every finished span and the metrics in
		// the spool (on disk when these return), without waiting for delivery.
		if err := sdk.tp.ForceFlush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := sdk.mp.ForceFlush(ctx); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("SPOOLED instance=%s queued=%d\n", sdk.InstanceID(), sdk.ExportStats().Queued)
		select {} // until killed
	default:
		if err := sdk.ForceFlush(ctx); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("DELIVERED instance=%s\n", sdk.InstanceID())
		_ = sdk.Shutdown(ctx)
	}
}

func startChild(t *testing.T, dir, endpoint, mode string, turns int) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSpoolChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envChildDir+"="+dir, envChildEndpoint+"="+endpoint,
		envChildTurns+"="+strconv.Itoa(turns), envChildMode+"="+mode)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, bufio.NewScanner(out)
}

// waitLine reads the child's output until a line starting with prefix.
func waitLine(t *testing.T, sc *bufio.Scanner, prefix string) string {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), prefix) {
				done <- sc.Text()
				return
			}
		}
		done <- ""
	}()
	select {
	case l := <-done:
		if l == "" {
			t.Fatalf("child ended without printing %s", prefix)
		}
		return l
	case <-time.After(60 * time.Second):
		t.Fatalf("child did not print %s", prefix)
	}
	return ""
}

func TestSpoolSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	spoolDir := filepath.Join(dir, "spool")

	// The collector is down: a loopback port nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	// First launch: five turns while the collector is down, then SIGKILL.
	cmd, sc := startChild(t, spoolDir, "http://"+addr, "hang", 5)
	line := waitLine(t, sc, "SPOOLED")
	first := strings.TrimPrefix(strings.Fields(line)[1], "instance=")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	files, _ := filepath.Glob(filepath.Join(spoolDir, "*.batch"))
	if len(files) == 0 {
		t.Fatalf("nothing on disk after the kill (%s)", line)
	}

	// The collector comes back; the second launch sends what the first left,
	// and two turns of its own.
	recv := newReceiver(t)
	cmd2, sc2 := startChild(t, spoolDir, recv.URL(), "exit", 2)
	second := strings.TrimPrefix(strings.Fields(waitLine(t, sc2, "DELIVERED"))[1], "instance=")
	if err := cmd2.Wait(); err != nil {
		t.Fatalf("second launch: %v", err)
	}

	seen := map[string]int{}
	for _, s := range recv.spans() {
		if s.span.Name != semconv.SpanVoiceTurn {
			continue
		}
		seen[fmt.Sprintf("%v#%v", s.res[semconv.ServiceInstanceID], attrMap(s.span.Attributes)[semconv.TurnIndex])]++
	}
	want := map[string]int{}
	for i := 1; i <= 5; i++ {
		want[fmt.Sprintf("%s#%d", first, i)] = 1
	}
	for i := 1; i <= 2; i++ {
		want[fmt.Sprintf("%s#%d", second, i)] = 1
	}
	for k, n := range want {
		if seen[k] != n {
			t.Errorf("turn %s arrived %d times, want exactly once", k, seen[k])
		}
	}
	for k := range seen {
		if want[k] == 0 {
			t.Errorf("unexpected turn %s", k)
		}
	}
	rest, _ := filepath.Glob(filepath.Join(spoolDir, "*.batch"))
	torn, _ := filepath.Glob(filepath.Join(spoolDir, ".tmp-*"))
	if rest = append(rest, torn...); len(rest) != 0 {
		t.Errorf("spool not empty after delivery: %v", rest)
	}
}

// TestSpoolSurvivesKillMidWrite kills a phone while it is writing batches
// as fast as it can: whatever it reported on disk arrives after the
// relaunch, nothing arrives twice, and a write cut short is never sent.
func TestSpoolSurvivesKillMidWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	spoolDir := filepath.Join(t.TempDir(), "spool")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	cmd, sc := startChild(t, spoolDir, "http://"+addr, "loop", 0)
	var instance string
	through := 0
	for through < 20 { // let it write a while, then kill it mid-stream
		f := strings.Fields(waitLine(t, sc, "SPOOLED"))
		instance = strings.TrimPrefix(f[1], "instance=")
		through, _ = strconv.Atoi(strings.TrimPrefix(f[2], "through="))
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	recv := newReceiver(t)
	cmd2, sc2 := startChild(t, spoolDir, recv.URL(), "exit", 0)
	waitLine(t, sc2, "DELIVERED")
	if err := cmd2.Wait(); err != nil {
		t.Fatalf("second launch: %v", err)
	}
	seen := map[int64]int{}
	for _, s := range recv.spans() {
		if s.span.Name == semconv.SpanVoiceTurn && s.res[semconv.ServiceInstanceID] == instance {
			seen[attrMap(s.span.Attributes)[semconv.TurnIndex].(int64)]++
		}
	}
	for i := 1; i <= through; i++ {
		if seen[int64(i)] != 1 {
			t.Errorf("turn %d (reported on disk before the kill) arrived %d times, want once", i, seen[int64(i)])
		}
	}
	for i, n := range seen {
		if n > 1 {
			t.Errorf("turn %d arrived %d times", i, n)
		}
	}
	if len(recv.bad) > 0 {
		t.Errorf("the receiver refused: %v", recv.bad)
	}
	t.Logf("killed after turn %d was on disk; %d turns of that launch arrived", through, len(seen))
}
