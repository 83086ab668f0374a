package dayreport

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/verdict"
)

// Reading a day: from a traces file, or turn by turn from verdict spans.

// Read reads the traces file: every voice.turn span and every
// percause.verdict span, joined by trace.
func Read(r io.Reader) (*Day, error) {
	byTrace := map[string]*JudgedTurn{}
	get := func(id string) *JudgedTurn {
		t, ok := byTrace[id]
		if !ok {
			t = &JudgedTurn{Trace: id}
			byTrace[id] = t
		}
		return t
	}
	day := &Day{}
	un := &ptrace.JSONUnmarshaler{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		td, err := un.UnmarshalTraces(line)
		if err != nil {
			day.Broken++
			continue
		}
		for res, s := range verdict.Spans(td) {
			switch s.Name() {
			case semconv.SpanVoiceTurn:
				t := get(s.TraceID().String())
				readTurn(t, s)
				readResource(t, res)
			case semconv.SpanVerdict:
				t := get(s.TraceID().String())
				r := verdict.FromSpan(res, s)
				t.readRecord(&r)
			case semconv.SpanLinkStatus:
				day.Links = append(day.Links, LinkFromSpan(res, s))
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("dayreport: %w", err)
	}
	for _, t := range byTrace {
		day.Turns = append(day.Turns, *t)
	}
	SortTurns(day.Turns)
	SortLinks(day.Links)
	return day, nil
}

// TurnFromVerdict reads one turn from its percause.verdict span alone and
// the resource it came under (the phone's): what the verdict says
// (verdict.FromSpan), nothing derived again. A verdict without the turn's
// time is placed at its decision.
func TurnFromVerdict(res pcommon.Resource, s ptrace.Span) JudgedTurn {
	r := verdict.FromSpan(res, s)
	return TurnFromRecord(&r)
}

// TurnFromRecord is the turn a verdict record says.
func TurnFromRecord(r *verdict.Record) JudgedTurn {
	t := JudgedTurn{Trace: r.TraceID.String()}
	t.readRecord(r)
	if t.Start == 0 {
		t.Start = r.Decided
	}
	return t
}

// LinkFromSpan reads one lost-link status change from its
// pippa.link.status span and the phone's resource.
func LinkFromSpan(res pcommon.Resource, s ptrace.Span) LinkChange {
	a := s.Attributes()
	l := LinkChange{
		Time:         s.StartTimestamp(),
		Trace:        s.TraceID().String(),
		Span:         s.SpanID().String(),
		Installation: verdict.AttrString(res.Attributes(), semconv.AppInstallationID),
		Launch:       verdict.AttrString(res.Attributes(), semconv.ServiceInstanceID),
		Status:       verdict.AttrString(a, semconv.LinkStatus),
		Previous:     verdict.AttrString(a, semconv.LinkPrevious),
		Message:      verdict.AttrString(a, semconv.LinkStatusMessage),
		Check:        verdict.AttrString(a, semconv.LinkCheck),
	}
	if v, ok := verdict.AttrNumber(a, semconv.LinkFailingFor); ok {
		l.FailingFor = &v
	}
	if v, ok := verdict.AttrNumber(a, semconv.LinkQuietFor); ok {
		l.QuietFor = &v
	}
	return l
}

func readResource(t *JudgedTurn, res pcommon.Resource) {
	a := res.Attributes()
	if v := verdict.AttrString(a, semconv.AppInstallationID); v != "" {
		t.Installation = v
	}
	if v := verdict.AttrString(a, semconv.ServiceInstanceID); v != "" {
		t.Launch = v
	}
	if v := verdict.AttrString(a, semconv.ServiceVersion); v != "" {
		t.Version = v
	}
}

func readTurn(t *JudgedTurn, s ptrace.Span) {
	a := s.Attributes()
	t.Start = s.EndTimestamp()
	if v, ok := a.Get(semconv.TurnIndex); ok && t.Turn == 0 {
		t.Turn = v.Int()
	}
	if v, ok := a.Get(semconv.NetworkConnectionType); ok && t.Link == "" {
		t.Link = v.AsString()
	}
	readDone(t, a)
}

// readRecord takes what a verdict says: its own readings over what t
// holds, the done reading's only where t lacks them (a voice.turn span,
// when the file has it, says the same).
func (t *JudgedTurn) readRecord(r *verdict.Record) {
	t.Cause, t.Evidence, t.Forced, t.Rules = r.Cause, r.Evidence, r.Forced, r.Rules
	t.Decided = r.Decided
	if r.Causes != nil {
		t.Causes = r.Causes
	}
	if r.Index != 0 {
		t.Turn = r.Index
	}
	if r.Link != "" {
		t.Link = r.Link
	}
	t.Underruns, t.Silent = r.Underruns, r.Silent
	if r.Outputs != nil {
		t.Outputs = r.Outputs
	}
	if r.Bluetooth.OK {
		t.Bluetooth = r.Bluetooth.Ptr()
	}
	if r.PoolBefore.OK {
		t.PoolResetsBefore = r.PoolBefore.Ptr()
	}
	t.Underran = nil
	for _, u := range r.Underran {
		t.Underran = append(t.Underran, Underrun{Unit: u.Unit, Take: u.TakeID, Underruns: u.Underruns,
			Silent: u.Silent, Cushion: u.Cushion, Need: u.Need.Ptr(), Cause: u.Cause})
	}
	// The verdict carries the turn's time and the done reading's readings
	// too, so a file of verdicts alone reads as a day.
	if r.TurnTime != 0 && t.Start == 0 {
		t.Start = r.TurnTime
	}
	if t.SpeechEndToPost == nil {
		t.SpeechEndToPost = r.SpeechEndToPost.Ptr()
	}
	if t.NotSent == nil {
		t.NotSent = r.NotSent.Ptr()
	}
	if t.PoolResets == nil {
		t.PoolResets = r.PoolResets.Ptr()
	}
	if r.Installation != "" {
		t.Installation = r.Installation
	}
	if r.Launch != "" {
		t.Launch = r.Launch
	}
	if r.Version != "" {
		t.Version = r.Version
	}
}

// readDone reads the done reading's readings from the voice.turn span's
// attributes, over what t holds.
func readDone(t *JudgedTurn, a pcommon.Map) {
	if v, ok := verdict.AttrNumber(a, semconv.TurnSpeechEndPost); ok {
		t.SpeechEndToPost = &v
	}
	if v, ok := verdict.AttrNumber(a, semconv.TurnNotSent); ok {
		t.NotSent = &v
	}
	if n, ok := verdict.AttrInt(a, semconv.PoolResets); ok {
		t.PoolResets = &n
	}
}
