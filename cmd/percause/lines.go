package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.uber.org/zap/zapcore"

	"github.com/percause/percause/components/linesconnector"
	"github.com/percause/percause/exporters/textlines"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/assembly/inproc"
	"github.com/percause/percause/internal/leaf/envvars"
	"github.com/percause/percause/internal/leaf/freeport"
	"github.com/percause/percause/internal/leaf/plural"
	"github.com/percause/percause/internal/page/dayreport"
	"github.com/percause/percause/internal/page/verdictpage"
)

func init() {
	register(subcommand{
		name:    "lines",
		summary: "a day's [voice-turn] and [tts-take] lines (FILE… or - for stdin) through the pipeline: per-turn verdicts and the day's summary",
		run: func(ctx context.Context, args []string) int {
			return runLines(ctx, args, os.Stdin, os.Stdout, os.Stderr)
		},
	})
}

// linesPipeline is the collector `percause lines` runs in process: OTLP logs
// in on loopback, the lines connector, the verdict processor, every trace to
// a file in a temporary folder. The input is finite, so nothing waits on a
// clock: a turn still waiting for a take when the input ends is decided at
// shutdown (the connector lets its lines go first, then the processor
// decides, forced, naming what is missing).
const linesPipeline = `
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
connectors:
  lines:
    wait: 1h
    take_window: %s
    max_pending: 1000000
    emitted_cache_size: 100000
processors:
  verdict:
    wait: 1h
    max_age: 2h
    max_pending: 1000000
    end_of_input: true
exporters:
  file/traces:
    path: %q
    format: json
    flush_interval: 100ms
service:
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [lines]
    traces:
      receivers: [lines]
      processors: [verdict]
      exporters: [file/traces]
  telemetry:
    logs:
      level: warn
    metrics:
      level: none
`

// linesPerRequest bounds one OTLP logs request.
const linesPerRequest = 2000

func runLines(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lines", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "one JSON object per turn (trace, turn, link, cause, causes, evidence, …), then one with the summary")
	budget := fs.Duration("post-budget", semconv.DefaultPostBudget, "the done reading's allowance for a turn's speech-end-to-post")
	window := fs.Duration("take-window", linesconnector.DefaultTakeWindow, "how far apart in time a take line without a trace ID and its turn may be")
	htmlOut := fs.String("html", "", "also write the day as the verdict page, one self-contained HTML `FILE` to open in any browser")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: percause lines [--json] [--html FILE] [--post-budget D] [--take-window D] FILE… (- reads standard input)")
		fmt.Fprintln(stderr, "Reads the phone's and the engine's [voice-turn] and [tts-take] lines (canonical or the app's spellings, any prefix)")
		fmt.Fprintln(stderr, "through the collector's lines connector and verdict processor, run in this process on loopback, and prints")
		fmt.Fprintln(stderr, "each turn's verdict, then the day's turns by cause and the done reading, then what it read: lines, turn and")
		fmt.Fprintln(stderr, "take lines, lines refused by reason, unknown fields by name, lines not ours. A refused line is reported on")
		fmt.Fprintln(stderr, "standard error with its file, line number and every fault. The rotations of a log (phone.log.1,")
		fmt.Fprintln(stderr, "phone.log.2.gz) are read oldest first, whatever order they are named in. --html FILE also writes the day")
		fmt.Fprintln(stderr, "as the verdict page. Exit 1 when a tagged line was refused or no [voice-turn] line was found.")
		fs.PrintDefaults()
		envvars.Help(stderr, "lines")
	}
	files, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "lines: name at least one file (or - for standard input)")
		fs.Usage()
		return 2
	}
	if *budget <= 0 || *window <= 0 {
		fmt.Fprintln(stderr, "lines: --post-budget and --take-window must be positive")
		return 2
	}
	stdins := 0
	for _, f := range files {
		if f == "-" {
			stdins++
		}
	}
	if stdins > 1 {
		fmt.Fprintln(stderr, "lines: - (standard input) can be named once")
		return 2
	}

	inputs, err := inspect(files)
	if err != nil {
		fmt.Fprintf(stderr, "lines: %v\n", err)
		return 1
	}
	inputs = inTimeOrder(inputs)
	tally := newTally()
	readFrom := time.Now()
	day, malformed, err := readLines(ctx, inputs, stdin, *window, tally)
	for _, m := range malformed {
		fmt.Fprintln(stderr, m)
	}
	if err != nil {
		fmt.Fprintf(stderr, "lines: %v\n", err)
		return 1
	}
	sum := day.Summarize(budget.Seconds())
	if *htmlOut != "" {
		if err := writeLinesPage(*htmlOut, files, day, budget.Seconds()); err != nil {
			fmt.Fprintf(stderr, "lines: %v\n", err)
			return 1
		}
	}
	if *asJSON {
		if err = dayreport.WriteJSON(stdout, day.Turns, &sum); err == nil {
			err = writeJSONTally(stdout, tally)
		}
	} else {
		if err = dayreport.WriteTable(stdout, ownTimes(day.Turns, readFrom)); err == nil {
			fmt.Fprintln(stdout)
			err = dayreport.WriteSummary(stdout, sum)
		}
		if err == nil {
			err = tally.write(stdout)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "lines: %v\n", err)
		return 1
	}
	return linesExit(tally, stderr)
}

// linesExit is 1 when a tagged line was refused or no [voice-turn] line was
// found: the day's verdicts then miss turns the files hold, or there are
// none to give.
func linesExit(t *lineTally, stderr io.Writer) int {
	if n := t.refused(); n > 0 {
		fmt.Fprintf(stderr, "lines: %s refused (above, with %s file, line and faults)\n", plural.N(n, "tagged line"), plural.Word(n, "its", "their"))
		return 1
	}
	if t.TurnLines == 0 {
		var parts []string
		for _, f := range t.Files {
			switch {
			case f.Skipped != "":
				parts = append(parts, f.Name+" ("+f.Skipped+")")
			default:
				parts = append(parts, fmt.Sprintf("%s (%s)", f.Name, plural.N(f.Read, "line")))
			}
		}
		fmt.Fprintf(stderr, "lines: no [voice-turn] line in %s\n", strings.Join(parts, ", "))
		return 1
	}
	return 0
}

// ownTimes is the turns as the table gives them: a turn whose line had no
// time of its own was stamped when it was read, during this run, and its
// time is left out ("-") rather than the run's.
func ownTimes(turns []dayreport.JudgedTurn, readFrom time.Time) []dayreport.JudgedTurn {
	out := slices.Clone(turns)
	from := pcommon.NewTimestampFromTime(readFrom)
	for i := range out {
		if out[i].Start >= from {
			out[i].Start = 0
		}
	}
	return out
}

// writeJSONTally ends the JSON output with what was read: one object.
func writeJSONTally(w io.Writer, t *lineTally) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		Lines *lineTally `json:"lines"`
	}{t})
}

// writeLinesPage writes the day as the verdict page, the same renderer the
// verdicts exporter serves with, as one static file: every turn listed, no
// form, no reloading. The file appears whole or not at all.
func writeLinesPage(path string, files []string, day *dayreport.Day, budget float64) error {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f)
		if f == "-" {
			names[i] = "(stdin)"
		}
	}
	var b bytes.Buffer
	err := verdictpage.Render(&b, verdictpage.Page{
		Title: "percause lines: " + strings.Join(names, ", "), Now: time.Now(), Loc: time.Local,
		RangeLabel: "every turn of the log", Turns: day.Turns, Links: day.Links,
		Budget: budget, Listed: max(len(day.Turns), len(day.Links), 1),
	})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".percause-page-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// parseInterleaved parses flags given before, between or after the files.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return files, nil
		}
		if rest[0] == "--" {
			return append(files, rest[1:]...), nil
		}
		files = append(files, rest[0])
		args = rest[1:]
	}
}

type malformedLine struct {
	file   string
	line   int64
	reason string
	detail string
	// say is what the reader itself says of the line (a refusal, a NUL run
	// skipped), after its file and number; "" for a line the connector
	// refused (reason and detail).
	say string
}

func (m malformedLine) String() string {
	if m.say != "" {
		return fmt.Sprintf("%s:%d: %s", m.file, m.line, m.say)
	}
	return fmt.Sprintf("%s:%d: malformed line (%s): %s", m.file, m.line, m.reason, m.detail)
}

// readLines runs the files through the in-process pipeline and reads the day
// back.
func readLines(ctx context.Context, files []inputFile, stdin io.Reader, window time.Duration, tally *lineTally) (*dayreport.Day, []malformedLine, error) {
	dir, err := os.MkdirTemp("", "percause-lines-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	port, err := freeport.Port()
	if err != nil {
		return nil, nil, err
	}
	tracesPath := filepath.Join(dir, "traces.jsonl")
	var mu sync.Mutex
	var malformed []malformedLine
	hook := func(e zapcore.Entry, f map[string]any) bool {
		if e.Message != "lines connector: malformed line" {
			return false
		}
		m := malformedLine{reason: fmt.Sprint(f["reason"]), detail: fmt.Sprint(f["error"])}
		m.file, _ = f["file"].(string)
		m.line, _ = f["line"].(int64)
		if i := strings.Index(m.detail, "): "); i >= 0 {
			m.detail = m.detail[i+3:]
		}
		mu.Lock()
		malformed = append(malformed, m)
		mu.Unlock()
		return true
	}
	col, err := inproc.Start(ctx, version, fmt.Sprintf(linesPipeline, port, window, tracesPath), hook)
	if err != nil {
		return nil, nil, err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/logs", port)
	sendErr := func() error {
		for _, f := range files {
			if err := sendFile(ctx, url, f, stdin, tally); err != nil {
				return err
			}
		}
		return nil
	}()
	if err := col.Stop(); err != nil && sendErr == nil {
		sendErr = err
	}
	malformed = append(malformed, tally.notes...)
	if sendErr != nil {
		return nil, sortMalformed(malformed, files), sendErr
	}
	f, err := os.Open(tracesPath)
	if errors.Is(err, os.ErrNotExist) {
		return &dayreport.Day{}, sortMalformed(malformed, files), nil
	}
	if err != nil {
		return nil, malformed, err
	}
	defer f.Close()
	day, err := dayreport.Read(f)
	return day, sortMalformed(malformed, files), err
}

// sortMalformed orders the reports by file (in the order read) and line.
func sortMalformed(ms []malformedLine, files []inputFile) []malformedLine {
	order := map[string]int{}
	for i, f := range files {
		if _, ok := order[f.label]; !ok {
			order[f.label] = i
		}
	}
	sort.SliceStable(ms, func(i, j int) bool {
		if a, b := order[ms[i].file], order[ms[j].file]; a != b {
			return a < b
		}
		return ms[i].line < ms[j].line
	})
	return ms
}

// sendFile sends a file's lines as OTLP log records, with the attributes
// the filelog receiver would set (the file's name as given, the line
// number), in requests of linesPerRequest, and counts each line. A file
// that is empty or binary is not sent, and the tally says so.
func sendFile(ctx context.Context, url string, in inputFile, stdin io.Reader, tally *lineTally) error {
	tally.Files = append(tally.Files, fileTally{Name: in.label, Skipped: in.skip})
	ft := &tally.Files[len(tally.Files)-1]
	if in.skip != "" {
		return nil
	}
	var r io.Reader
	label := in.label
	if in.name == "-" {
		br := bufio.NewReaderSize(stdin, sniffBytes)
		head, err := br.Peek(sniffBytes)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("reading %s: %w", label, err)
		}
		if why := notText(head); why != "" {
			ft.Skipped = why
			return nil
		}
		r = br
	} else {
		f, closeFile, err := openText(in.name)
		if err != nil {
			return err
		}
		defer closeFile()
		r = f
	}
	lines := newLineReader(r)
	now := pcommon.NewTimestampFromTime(time.Now())
	var ld plog.Logs
	var lrs plog.LogRecordSlice
	flush := func() error {
		if lrs.Len() == 0 {
			return nil
		}
		body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("sending %s's lines to the pipeline: %w", label, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("sending %s's lines to the pipeline: HTTP %d", label, resp.StatusCode)
		}
		return nil
	}
	reset := func() {
		ld = plog.NewLogs()
		lrs = ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	}
	reset()
	for {
		l, err := lines.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading %s: line %d: %w", label, lines.number+1, err)
		}
		for _, run := range l.nulRuns {
			tally.NULRuns++
			tally.notes = append(tally.notes, malformedLine{file: label, line: l.number,
				say: fmt.Sprintf("skipped a run of %d NUL bytes", run)})
		}
		if l.tooLong > 0 {
			tally.refuse(ft, textlines.ReasonTooLong)
			tally.notes = append(tally.notes, malformedLine{file: label, line: l.number, reason: textlines.ReasonTooLong,
				say: fmt.Sprintf("refused (%s): the line has %d bytes, at most %d; the lines after it are read", textlines.ReasonTooLong, l.tooLong, maxLineBytes)})
			continue
		}
		if len(l.parts) == 0 {
			tally.Read++ // NUL bytes and nothing else
			ft.Read++
		}
		for _, line := range l.parts {
			tally.count(ft, line)
			if strings.TrimSpace(line) == "" {
				continue
			}
			lr := lrs.AppendEmpty()
			lr.Body().SetStr(line)
			lr.SetObservedTimestamp(now)
			lr.Attributes().PutStr(linesconnector.AttrFileName, label)
			lr.Attributes().PutInt(linesconnector.AttrRecordNumber, l.number)
			if lrs.Len() >= linesPerRequest {
				if err := flush(); err != nil {
					return err
				}
				reset()
			}
		}
	}
	return flush()
}
