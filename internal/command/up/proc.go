package up

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/percause/percause/internal/leaf/follow"
)

// child is one process `up` started: its log file takes both of its
// output streams.
type child struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // cmd.Wait's, once done is closed
	// stopping is closed when `up` itself stops the child, so its exit is
	// not reported as a death.
	stopping chan struct{}
}

// startChild starts bin with args, its output appended to logPath. It runs
// in a process group of its own, so the terminal's Ctrl-C reaches only
// `up`, which then stops every child in order.
func startChild(name, bin string, args, env []string, logPath string) (*child, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	fmt.Fprintf(logf, "--- percause up starts %s at %s: %s %s\n", name, time.Now().Format(time.RFC3339), bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	c := &child{name: name, cmd: cmd, log: logPath, done: make(chan struct{}), stopping: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		logf.Close()
		close(c.done)
	}()
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the child's process ID and waits; after timeout it
// sends SIGKILL. It reports whether the child had to be killed.
func (c *child) stop(timeout time.Duration) (killed bool) {
	select {
	case <-c.stopping:
	default:
		close(c.stopping)
	}
	if c.exited() {
		return false
	}
	_ = syscall.Kill(c.pid(), syscall.SIGTERM)
	select {
	case <-c.done:
		return false
	case <-time.After(timeout):
		_ = syscall.Kill(c.pid(), syscall.SIGKILL)
		<-c.done
		return true
	}
}

// logTail is the last n lines of the child's log.
func (c *child) logTail(n int) string { return follow.LastLines(c.log, n) }

// errExited is a child that ended before it was ready.
var errExited = errors.New("exited")

// waitReady polls url until it answers 200, the child exits, ctx ends or
// timeout passes.
func (c *child) waitReady(ctx context.Context, url string, timeout time.Duration) error {
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for {
		if resp, err := hc.Get(url); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-c.done:
			return fmt.Errorf("%s (pid %d) %w before it was ready (%v); the end of %s:\n%s", c.name, c.pid(), errExited, c.err, c.log, indent(c.logTail(15)))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s (pid %d) did not answer %s within %s; the end of %s:\n%s", c.name, c.pid(), url, timeout, c.log, indent(c.logTail(15)))
		}
	}
}

func indent(s string) string {
	if s == "" {
		return "    (empty)"
	}
	var b bytes.Buffer
	for _, l := range strings.Split(s, "\n") {
		b.WriteString("    ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}
