// Package inproc runs the collector distribution inside the calling process
// on a configuration given as YAML: the same components, the same pipeline,
// the same graceful shutdown (receivers first, so a connector's held data
// still reaches the processors after it), for commands that need the real
// pipeline for a while and no stack.
package inproc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/otelcol"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/percause/percause/internal/assembly/distro"
)

// startTimeout bounds how long the collector may take to be running.
const startTimeout = 30 * time.Second

// Hook sees every log entry the collector writes at warn or above; it
// returns true when it has dealt with the entry (it is then not printed).
type Hook func(e zapcore.Entry, fields map[string]any) bool

// Collector is a running in-process collector.
type Collector struct {
	col  *otelcol.Collector
	done chan error
}

// Start runs the collector on config (YAML) and returns once it is running.
// Log entries at warn and above go to hook, then to the collector's own log
// (stderr) unless hook took them.
func Start(ctx context.Context, version, config string, hook Hook) (*Collector, error) {
	set := distro.Settings(version, "yaml:"+config)
	set.DisableGracefulShutdown = true // the caller decides when it ends
	if hook != nil {
		set.LoggingOptions = []zap.Option{zap.WrapCore(func(c zapcore.Core) zapcore.Core { return &hookCore{Core: c, hook: hook} })}
	}
	col, err := otelcol.NewCollector(set)
	if err != nil {
		return nil, err
	}
	c := &Collector{col: col, done: make(chan error, 1)}
	go func() { c.done <- col.Run(context.WithoutCancel(ctx)) }()
	deadline := time.Now().Add(startTimeout)
	for col.GetState() != otelcol.StateRunning {
		select {
		case err := <-c.done:
			if err == nil {
				err = errors.New("stopped before it was running")
			}
			return nil, fmt.Errorf("collector: %w", err)
		case <-ctx.Done():
			col.Shutdown()
			<-c.done
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			col.Shutdown()
			<-c.done
			return nil, fmt.Errorf("collector: not running after %s", startTimeout)
		}
	}
	return c, nil
}

// Stop shuts the collector down gracefully and waits until it has.
func (c *Collector) Stop() error {
	c.col.Shutdown()
	return <-c.done
}

// hookCore hands warn-and-above entries to a hook before the real core.
type hookCore struct {
	zapcore.Core
	hook   Hook
	fields []zapcore.Field
}

func (h *hookCore) With(fs []zapcore.Field) zapcore.Core {
	return &hookCore{Core: h.Core.With(fs), hook: h.hook, fields: append(append([]zapcore.Field(nil), h.fields...), fs...)}
}

func (h *hookCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Level >= zapcore.WarnLevel {
		return ce.AddCore(e, h)
	}
	return h.Core.Check(e, ce)
}

func (h *hookCore) Write(e zapcore.Entry, fs []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range append(append([]zapcore.Field(nil), h.fields...), fs...) {
		f.AddTo(enc)
	}
	if h.hook(e, enc.Fields) {
		return nil
	}
	if h.Core.Enabled(e.Level) {
		return h.Core.Write(e, fs)
	}
	return nil
}
