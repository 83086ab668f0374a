package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/percause/percause/internal/leaf/freeport"
)

// EnvPercauseBin names the environment variable through which the test script
// hands every package the percause binary it built once for the whole run.
const EnvPercauseBin = "PERCAUSE_BIN"

// RepoRoot is the module's root folder (where go.mod lives).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// PercauseBin returns the path of the percause binary. The test script builds
// it once and passes it in PERCAUSE_BIN; when a package's tests run on their
// own, it is built here once per test process (the collector takes minutes
// cold and seconds warm, so the build cache carries most of the cost).
func PercauseBin(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv(EnvPercauseBin); p != "" {
		if _, err := os.Stat(p); err != nil {
			tb.Fatalf("%s=%s: %v", EnvPercauseBin, p, err)
		}
		return p
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "percause-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "percause")
		cmd := exec.Command("go", "build", "-o", buildPath, "./cmd/percause")
		cmd.Dir = RepoRoot()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/percause: %v\n%s", err, out.String())
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return buildPath
}

// FreePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func FreePort(tb testing.TB) int {
	tb.Helper()
	p, err := freeport.Port()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// Process is a child process started for a test.
type Process struct {
	Cmd  *exec.Cmd
	Name string
	out  *syncBuffer
	done chan struct{}
}

// Output is everything the process wrote to stdout and stderr so far.
func (p *Process) Output() string { return p.out.String() }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Start runs name with args as a child process and stops it by its process id
// (SIGTERM, then SIGKILL after 10 s) when the test ends. Its output is kept
// and printed when the test fails.
func Start(tb testing.TB, dir, name string, args ...string) *Process {
	tb.Helper()
	return startWithEnv(tb, dir, name, nil, args...)
}

// startWithEnv is Start with extra environment variables for the child,
// added in key order so a failing test's command line reads the same each run.
func startWithEnv(tb testing.TB, dir, name string, env map[string]string, args ...string) *Process {
	tb.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = os.Environ()
		keys := make([]string, 0, len(env))
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			cmd.Env = append(cmd.Env, k+"="+env[k])
		}
	}
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	p := &Process{Cmd: cmd, Name: filepath.Base(name), out: out, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	tb.Cleanup(func() {
		p.Stop()
		if tb.Failed() {
			tb.Logf("--- output of %s (pid %d) ---\n%s", p.Name, cmd.Process.Pid, out.String())
		}
	})
	return p
}

// Stop ends the process (its whole process group) and waits for it.
func (p *Process) Stop() {
	if p.Exited() {
		return
	}
	_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// Kill ends the process (its whole process group) with SIGKILL, as a
// crash would: nothing of it runs a shutdown. It waits for it to end.
func (p *Process) Kill() {
	if p.Exited() {
		return
	}
	_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// WaitFor polls cond every 50 ms until it returns true or timeout passes.
func WaitFor(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("timed out after %s waiting for %s", timeout, what)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
