package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/percause/percause/internal/assembly/inproc"
	"github.com/percause/percause/internal/command/livecheck"
)

func init() {
	register(subcommand{
		name:    "check",
		summary: "a live conformance check: listens for OTLP on loopback and reports each turn's faults against the registry, and its verdict",
		run: func(ctx context.Context, args []string) int {
			return runCheck(ctx, args, os.Stdout, os.Stderr)
		},
	})
}

// checkPipeline is the collector `percause check` runs in process: OTLP/HTTP
// in (traces, and logs for apps that send their lines), the lines connector,
// the verdict processor, and every span to a file the check follows.
const checkPipeline = `
receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
connectors:
  lines: {}
processors:
  verdict:
    wait: %s
exporters:
  file/traces:
    path: %q
    format: json
    flush_interval: 50ms
service:
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [lines]
    traces:
      receivers: [otlp, lines]
      processors: [verdict]
      exporters: [file/traces]
  telemetry:
    logs:
      level: warn
    metrics:
      level: none
`

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:4318", "where to listen for OTLP/HTTP, `HOST:PORT` (loopback unless you mean otherwise)")
	asJSON := fs.Bool("json", false, "one JSON object per report")
	turns := fs.Int("turns", 0, "stop after reporting this many turns (0: until interrupted)")
	wait := fs.Duration("verdict-wait", 5*time.Second, "how long a turn waits for its units and takes (the verdict processor's wait)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: percause check [--listen HOST:PORT] [--json] [--turns N] [--verdict-wait D]")
		fmt.Fprintln(stderr, "Listens for OTLP/HTTP (/v1/traces, and /v1/logs for an app's lines) and, for each turn a client sends,")
		fmt.Fprintln(stderr, "reports what is missing, mistyped, out of range or unknown against the registry (docs/semconv.md) and the")
		fmt.Fprintln(stderr, "verdict the turn got; a trace that has only tts.take spans once --verdict-wait is over is reported too.")
		fmt.Fprintln(stderr, "Point the app's OTLP exporter here and fix it until every turn is clean. It ends with a summary.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if *turns < 0 || *wait <= 0 {
		fmt.Fprintln(stderr, "check: --turns must not be negative and --verdict-wait must be positive")
		return 2
	}
	if _, _, err := net.SplitHostPort(*listen); err != nil {
		fmt.Fprintf(stderr, "check: --listen %q: %v\n", *listen, err)
		return 2
	}
	dir, err := os.MkdirTemp("", "percause-check-")
	if err != nil {
		fmt.Fprintf(stderr, "check: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "traces.jsonl")
	col, err := inproc.Start(ctx, version, fmt.Sprintf(checkPipeline, *listen, *wait, path), nil)
	if err != nil {
		fmt.Fprintf(stderr, "check: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "percause check: listening for OTLP/HTTP on http://%s (/v1/traces, /v1/logs); a report per turn as its verdict is made\n", *listen)

	w := livecheck.NewWatcher(path, livecheck.WithDecisionWindow(*wait))
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	reported, faulty := 0, false
	var sum livecheck.Summary
	emit := func() error {
		rs, err := w.Refresh()
		if err != nil {
			return err
		}
		for _, r := range rs {
			sum.Add(r)
			if !r.Clean {
				faulty = true
			}
			if *asJSON {
				err = enc.Encode(r)
			} else {
				err = livecheck.WriteText(stdout, r)
			}
			if err != nil {
				return err
			}
			if r.Verdict != nil {
				reported++
			}
		}
		return nil
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var loopErr error
	for loopErr == nil && (*turns == 0 || reported < *turns) {
		select {
		case <-ctx.Done():
			loopErr = ctx.Err()
		case <-tick.C:
			loopErr = emit()
		}
	}
	// Stopping decides every turn still held (forced: shutdown); report them.
	stopErr := col.Stop()
	if *turns == 0 || reported < *turns {
		if err := emit(); err != nil && loopErr == nil {
			loopErr = err
		}
	}
	if loopErr != nil && loopErr != context.Canceled {
		fmt.Fprintf(stderr, "check: %v\n", loopErr)
		return 1
	}
	// What it reported, at the end: when stopped, or after --turns.
	if *asJSON {
		err = enc.Encode(struct {
			Summary livecheck.Summary `json:"summary"`
		}{sum})
	} else {
		err = livecheck.WriteSummary(stdout, sum)
	}
	if err != nil {
		fmt.Fprintf(stderr, "check: %v\n", err)
		return 1
	}
	if stopErr != nil {
		fmt.Fprintf(stderr, "check: %v\n", stopErr)
		return 1
	}
	if faulty {
		return 1
	}
	return 0
}
