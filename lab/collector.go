package lab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/internal/leaf/follow"
	"github.com/percause/percause/internal/leaf/freeport"
)

// Defaults of the collector the lab starts.
const (
	// DefaultCollectorStart bounds the collector's start (a cold start
	// loads every component; it is seconds, not minutes).
	DefaultCollectorStart = 60 * time.Second
	// DefaultCollectorStop is how long the collector gets to flush and exit
	// after SIGTERM before it is killed.
	DefaultCollectorStop = 10 * time.Second
	// DefaultVerdictWait is the collector's bounded wait for a turn's takes
	// (PERCAUSE_VERDICT_WAIT): every take is flushed with its turn here, so
	// a short wait only bounds the verdict's delay.
	DefaultVerdictWait = "3s"
	// CollectorLog is the collector's log file under its data folder.
	CollectorLog = "collector.log"
)

// Collector is a `percause collector` child process on the embedded
// default configuration, with free loopback ports and its own data folder.
type Collector struct {
	// OTLP is the OTLP/HTTP base URL the phone and the engine export to.
	OTLP string
	// Prometheus is the host:port of its Prometheus endpoint.
	Prometheus string
	// Page is the host:port of its verdict page.
	Page string
	// VerdictFile is where its verdicts exporter writes every verdict span.
	VerdictFile string
	// DataDir is its data folder; the log is DataDir/CollectorLog.
	DataDir string

	cmd  *exec.Cmd
	done chan error
}

// StartCollector starts bin (the percause binary) as `percause collector`
// with data under dataDir and waits until its health check answers.
func StartCollector(ctx context.Context, bin, dataDir string) (*Collector, error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("lab: collector data folder: %w", err)
	}
	ports, err := freeport.Ports(5)
	if err != nil {
		return nil, err
	}
	addr := func(p int) string { return fmt.Sprintf("127.0.0.1:%d", p) }
	c := &Collector{
		OTLP:        "http://" + addr(ports[0]),
		Prometheus:  addr(ports[1]),
		Page:        addr(ports[4]),
		VerdictFile: filepath.Join(dataDir, "verdicts.jsonl"),
		DataDir:     dataDir,
		done:        make(chan error, 1),
	}
	health := addr(ports[2])
	logf, err := os.Create(filepath.Join(dataDir, CollectorLog))
	if err != nil {
		return nil, fmt.Errorf("lab: collector log: %w", err)
	}
	cmd := exec.Command(bin, "collector")
	cmd.Env = append(os.Environ(),
		collectorconfig.EnvOTLPEndpoint+"="+addr(ports[0]),
		collectorconfig.EnvPromEndpoint+"="+c.Prometheus,
		collectorconfig.EnvPageEndpoint+"="+c.Page,
		collectorconfig.EnvHealthEndpoint+"="+health,
		fmt.Sprintf("%s=%d", collectorconfig.EnvTelemetryPort, ports[3]),
		collectorconfig.EnvDataDir+"="+dataDir,
		collectorconfig.EnvVerdictFile+"="+c.VerdictFile,
		collectorconfig.EnvVerdictWait+"="+DefaultVerdictWait,
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: an interrupt of the lab reaches the lab, which
	// then stops the collector by its pid after the last flush.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("lab: start %s collector: %w", bin, err)
	}
	c.cmd = cmd
	go func() { c.done <- cmd.Wait(); logf.Close() }()

	deadline := time.Now().Add(DefaultCollectorStart)
	hc := &http.Client{Timeout: time.Second}
	for {
		resp, err := hc.Get("http://" + health + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c, nil
			}
		}
		select {
		case err := <-c.done:
			c.done <- err
			return nil, fmt.Errorf("lab: the collector exited before it was ready (%v):\n%s", err, c.LogTail(20))
		case <-ctx.Done():
			_ = c.Stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = c.Stop()
			return nil, fmt.Errorf("lab: the collector's health check did not answer within %s:\n%s", DefaultCollectorStart, c.LogTail(20))
		}
	}
}

// LogTail is the last n lines of the collector's log.
func (c *Collector) LogTail(n int) string {
	return follow.LastLines(filepath.Join(c.DataDir, CollectorLog), n)
}

// Stop ends the collector: SIGTERM (it flushes its exporters), then SIGKILL
// after DefaultCollectorStop.
func (c *Collector) Stop() error {
	if c.cmd == nil || c.cmd.Process == nil {
		return nil
	}
	select {
	case err := <-c.done:
		c.done <- err
		return nil
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-c.done:
		c.done <- err
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			return err
		}
		return nil
	case <-time.After(DefaultCollectorStop):
		_ = c.cmd.Process.Kill()
		err := <-c.done
		c.done <- err
		return fmt.Errorf("lab: the collector did not stop within %s; killed", DefaultCollectorStop)
	}
}
