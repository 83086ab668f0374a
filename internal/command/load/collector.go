package load

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/internal/leaf/freeport"
)

// Passthrough is the stock pipeline the default is compared with: OTLP/HTTP
// → batch → debug, the collector's own components on the same binary.
//
//go:embed passthrough.yaml
var Passthrough []byte

// DurablePeer is the stock pipeline that keeps what it accepted, the
// default's durable peer: OTLP/HTTP → the otlphttp exporter with its
// sending queue in file_storage, exporting to PERCAUSE_TRACES_FORWARD (a
// Sink). The file says why it is a fair peer and what its 200 promises.
//
//go:embed durablepeer.yaml
var DurablePeer []byte

// stopWait is how long Stop waits after SIGTERM before SIGKILL.
const stopWait = 20 * time.Second

// Collector is a `percause collector` child process on free loopback ports
// with a data folder of its own.
type Collector struct {
	Name      string
	TracesURL string // OTLP/HTTP traces endpoint
	PromURL   string // Prometheus endpoint (…/metrics); empty for the pass-through
	TelURL    string // the collector's own metrics
	DataDir   string
	Verdicts  string // the verdict file
	// Sink is where the collector exports, when it is the load tool's: a
	// side-by-side round waits until it has every span of the round before
	// the collector's CPU is read.
	Sink *Sink
	// With WithProfile: the pprof extension's base URL, and where the CPU
	// profile is saved (at a graceful stop) and the heap profile written
	// (by WriteHeapProfile).
	PprofURL    string
	CPUProfile  string
	HeapProfile string

	cmd     *exec.Cmd
	done    chan struct{}
	ports   [5]int
	bin     string
	configs []string
	env     []string
}

// Pid is the collector's process id.
func (c *Collector) Pid() int { return c.cmd.Process.Pid }

// A StartOption changes how StartCollector starts a collector.
type StartOption func(*startOptions)

type startOptions struct {
	env        []string
	profileDir string
}

// WithEnv adds environment variables (KEY=value).
func WithEnv(kv ...string) StartOption {
	return func(o *startOptions) { o.env = append(o.env, kv...) }
}

// WithProfile starts the collector with the pprof extension on a free
// loopback port, saving its CPU profile to DIR/<name>.cpu.pprof when it
// stops gracefully; WriteHeapProfile writes DIR/<name>.heap.pprof. The
// extension is added by one more configuration layered on the collector's
// (ProfileOverlay).
func WithProfile(dir string) StartOption {
	return func(o *startOptions) { o.profileDir = dir }
}

// StartCollector starts bin as `percause collector` with data under dir:
// on the embedded default when configs is empty, else on those files, each
// layered on the one before (they see the same environment variables as
// local.yaml).
func StartCollector(ctx context.Context, bin, name, dir string, configs []string, opts ...StartOption) (*Collector, error) {
	var o startOptions
	for _, opt := range opts {
		opt(&o)
	}
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
	c.env = append(c.env, o.env...)
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return nil, err
	}
	if o.profileDir != "" {
		if err := c.addProfiling(dir, o.profileDir); err != nil {
			return nil, err
		}
	}
	return c, c.Start(ctx)
}

// WriteEmbeddedDefault writes the embedded default to dir/local.yaml, for
// configurations to be layered over it (a collector started with --config
// no longer reads the embedded one), and returns the file's path.
func WriteEmbeddedDefault(dir string) (string, error) {
	local := filepath.Join(dir, "local.yaml")
	if err := os.WriteFile(local, collectorconfig.Local, 0o644); err != nil {
		return "", fmt.Errorf("load: %w", err)
	}
	return local, nil
}

// addProfiling layers the pprof overlay on the collector's configurations
// (the embedded default written out first, when it runs on that: with a
// --config the collector no longer reads it).
func (c *Collector) addProfiling(dir, profileDir string) error {
	abs, err := filepath.Abs(profileDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("load: the profile folder: %w", err)
	}
	c.CPUProfile = filepath.Join(abs, c.Name+".cpu.pprof")
	c.HeapProfile = filepath.Join(abs, c.Name+".heap.pprof")
	// A command never deletes what it did not make: profiles already there
	// are kept, and the run refused.
	for _, f := range []string{c.CPUProfile, c.HeapProfile} {
		if _, err := os.Stat(f); err == nil {
			return fmt.Errorf("load: %s exists; name another --profile folder or move it away", f)
		}
	}
	if len(c.configs) == 0 {
		local, err := WriteEmbeddedDefault(dir)
		if err != nil {
			return err
		}
		c.configs = []string{local}
	}
	layers := make([][]byte, len(c.configs))
	for i, f := range c.configs {
		if layers[i], err = os.ReadFile(f); err != nil {
			return fmt.Errorf("load: reading the configuration to profile: %w", err)
		}
	}
	exts, err := ServiceExtensions(layers...)
	if err != nil {
		return err
	}
	port, err := freeport.Port()
	if err != nil {
		return err
	}
	endpoint := fmt.Sprintf("127.0.0.1:%d", port)
	overlay, err := ProfileOverlay(exts, endpoint, c.CPUProfile)
	if err != nil {
		return err
	}
	f := filepath.Join(dir, c.Name+".pprof.yaml")
	if err := os.WriteFile(f, overlay, 0o644); err != nil {
		return err
	}
	c.configs = append(c.configs, f)
	c.PprofURL = "http://" + endpoint
	return nil
}

// pprofExtension is the pprof extension's name in a configuration.
const pprofExtension = "pprof"

// ServiceExtensions is the service::extensions list of configurations
// layered in order, as the collector merges them: a list is not merged but
// replaced, so the last configuration that sets it gives it.
func ServiceExtensions(layers ...[]byte) ([]string, error) {
	var exts []string
	for i, b := range layers {
		var doc struct {
			Service struct {
				Extensions yaml.Node `yaml:"extensions"`
			} `yaml:"service"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("load: configuration %d of %d: %w", i+1, len(layers), err)
		}
		n := doc.Service.Extensions
		if n.Kind == 0 {
			continue // not set here: the earlier list stands
		}
		var list []string
		if n.Kind != yaml.SequenceNode || n.Decode(&list) != nil {
			return nil, fmt.Errorf("load: configuration %d of %d: service::extensions is not a list of names (line %d), so the extensions a profiling overlay must keep cannot be read", i+1, len(layers), n.Line)
		}
		exts = list
	}
	return exts, nil
}

// ProfileOverlay is a configuration to layer on one whose service lists
// extensions: it adds the pprof extension on endpoint (host:port), saving
// the CPU profile to cpuFile, and lists extensions and pprof. The
// collector replaces a list of an earlier configuration with a later one's,
// so the overlay must name every extension of the configuration it extends.
func ProfileOverlay(extensions []string, endpoint, cpuFile string) ([]byte, error) {
	for _, e := range extensions {
		if e == pprofExtension || strings.HasPrefix(e, pprofExtension+"/") {
			return nil, fmt.Errorf("load: the configuration already has the %s extension", e)
		}
	}
	doc := map[string]any{
		"extensions": map[string]any{
			pprofExtension: map[string]any{
				"endpoint": endpoint,
				// $ starts an expansion in a collector configuration.
				"save_to_file": strings.ReplaceAll(cpuFile, "$", "$$"),
			},
		},
		"service": map[string]any{
			"extensions": append(append([]string{}, extensions...), pprofExtension),
		},
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return append([]byte("# Layered by `percause load --profile` on the collector's configuration.\n"), b...), nil
}

// WriteHeapProfile fetches the heap profile from the pprof extension
// (after a garbage collection, so it shows what is live) and writes it to
// HeapProfile.
func (c *Collector) WriteHeapProfile(ctx context.Context) error {
	if c.PprofURL == "" {
		return fmt.Errorf("load: the %s collector runs without the pprof extension", c.Name)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.PprofURL+"/debug/pprof/heap?gc=1", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("load: the %s collector's heap profile: %w", c.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("load: the %s collector's heap profile: %s", c.Name, resp.Status)
	}
	f, err := os.OpenFile(c.HeapProfile, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Start (re)starts the process on the same ports and data folder.
func (c *Collector) Start(ctx context.Context) error {
	args := []string{"collector"}
	for _, f := range c.configs {
		args = append(args, "--config", f)
	}
	log, err := os.OpenFile(c.LogFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
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
			return fmt.Errorf("load: the %s collector exited at start (its log: %s)", c.Name, c.LogFile())
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

// LogFile is where the collector's output goes.
func (c *Collector) LogFile() string {
	return filepath.Join(filepath.Dir(c.DataDir), c.Name+".log")
}

// ErrKilled is Stop's answer when the collector had to be killed: what it
// writes at a graceful stop (a CPU profile, among others) is not written.
var ErrKilled = errors.New("load: the collector did not stop within 20 s of SIGTERM and was killed")

// Stop ends the process with SIGTERM (SIGKILL after 20 s) and waits. It
// returns ErrKilled when SIGKILL was needed; stopping a collector that
// has stopped already does nothing.
func (c *Collector) Stop() error {
	if c.cmd == nil {
		return nil
	}
	select {
	case <-c.done:
		return nil
	default:
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-c.done:
		return nil
	case <-time.After(stopWait):
		c.Kill()
		return fmt.Errorf("%w (the %s collector)", ErrKilled, c.Name)
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
