package load

import (
	"context"
	_ "embed"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/internal/freeport"
)

// Passthrough is the stock pipeline the default is compared with: OTLP/HTTP
// → batch → debug, the collector's own components on the same binary.
//
//go:embed passthrough.yaml
var Passthrough []byte

// Collector is a `percause collector` child process on free loopback ports
// with a data folder of its own.
type Collector struct {
	Name      string
	TracesURL string // OTLP/HTTP traces endpoint
	PromURL   string // Prometheus endpoint (…/metrics); empty for the pass-through
	TelURL    string // the collector's own metrics
	DataDir   string
	Verdicts  string // the verdict file
	cmd       *exec.Cmd
	done      chan struct{}
	ports     [5]int
	bin       string
	configs   []string
	env       []string
}

// Pid is the collector's process id.
func (c *Collector) Pid() int { return c.cmd.Process.Pid }

// StartCollector starts bin as `percause collector` with data under dir:
// on the embedded default when configs is empty, else on those files, each
// layered on the one before (they see the same environment variables as
// local.yaml). extraEnv adds variables (KEY=value).
func StartCollector(ctx context.Context, bin, name, dir string, configs []string, extraEnv ...string) (*Collector, error) {
	c := &Collector{Name: name, DataDir: filepath.Join(dir, "data"), bin: bin, configs: configs}
	ports, err := freeport.Ports(len(c.ports))
	if err != nil {
		return nil, err
	}
	copy(c.ports[:], ports)
	c.Verdicts = filepath.Join(c.DataDir, "verdicts.jsonl")
	c.TracesURL = fmt.Sprintf("http://127.0.0.1:%d/v1/traces", c.ports[0])
	c.PromURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", c.ports[1])
	c.TelURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", c.ports[3])
	addr := func(p int) string { return fmt.Sprintf("127.0.0.1:%d", p) }
	c.env = append(os.Environ(),
		collectorconfig.EnvOTLPEndpoint+"="+addr(c.ports[0]),
		collectorconfig.EnvPromEndpoint+"="+addr(c.ports[1]),
		collectorconfig.EnvHealthEndpoint+"="+addr(c.ports[2]),
		fmt.Sprintf("%s=%d", collectorconfig.EnvTelemetryPort, c.ports[3]),
		collectorconfig.EnvDataDir+"="+c.DataDir,
		collectorconfig.EnvVerdictFile+"="+c.Verdicts,
		collectorconfig.EnvPageEndpoint+"="+addr(c.ports[4]),
	)
	c.env = append(c.env, extraEnv...)
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return nil, err
	}
	return c, c.Start(ctx)
}

// Start (re)starts the process on the same ports and data folder.
func (c *Collector) Start(ctx context.Context) error {
	args := []string{"collector"}
	for _, f := range c.configs {
		args = append(args, "--config", f)
	}
	log, err := os.OpenFile(filepath.Join(filepath.Dir(c.DataDir), c.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Env = c.env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("load: start %s collector: %w", c.Name, err)
	}
	c.cmd, c.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(c.done) }()
	health := fmt.Sprintf("http://127.0.0.1:%d/", c.ports[2])
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-c.done:
			return fmt.Errorf("load: the %s collector exited at start (its log: %s)", c.Name, filepath.Join(filepath.Dir(c.DataDir), c.Name+".log"))
		default:
		}
		if resp, err := http.Get(health); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			c.Kill()
			return fmt.Errorf("load: the %s collector was not healthy within 60 s", c.Name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop ends the process with SIGTERM (SIGKILL after 20 s) and waits.
func (c *Collector) Stop() {
	if c.cmd == nil {
		return
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		c.Kill()
	}
}

// Kill ends the process with SIGKILL, as a crash would, and waits.
func (c *Collector) Kill() {
	if c.cmd == nil {
		return
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.done
}
