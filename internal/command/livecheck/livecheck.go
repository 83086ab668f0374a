// Package livecheck checks a client's turns against the registry
// (instr/semconv), in the manner of OpenTelemetry Weaver's live check: for
// each turn, what is missing, mistyped, out of range or unknown, and the
// verdict the turn got. `percause check` runs it on what a client sends.
package livecheck

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/verdict"
)

// Kinds of problem.
const (
	Missing   = "missing"   // a required attribute is absent
	Mistyped  = "mistyped"  // an attribute of the wrong type
	Range     = "range"     // a value out of range (negative, NaN, infinite, not one of the values)
	Unknown   = "unknown"   // a name under pippa. or percause. the registry does not have
	Structure = "structure" // a span in the wrong place, units that do not add up
	Late      = "late"      // a span that arrived after its turn was decided
	Advice    = "advice"    // a recommended attribute is absent (not a fault)
)

// Problem is one thing wrong with a turn's spans.
type Problem struct {
	Kind      string `json:"kind"`
	Span      string `json:"span"` // "voice.turn", "voice.unit 2", "tts.take t2", "resource of tts.take t2", …
	Attribute string `json:"attribute,omitempty"`
	Detail    string `json:"detail"`
}

func (p Problem) String() string {
	s := fmt.Sprintf("%-9s %s", p.Kind, p.Span)
	if p.Attribute != "" {
		s += ": " + p.Attribute
	}
	return s + " " + p.Detail
}

// Fault reports whether the problem is a fault (advice is not).
func (p Problem) Fault() bool { return p.Kind != Advice }

// Verdict is the verdict the turn got.
type Verdict struct {
	Cause    string   `json:"cause"`
	Causes   []string `json:"causes"`
	Evidence string   `json:"evidence"`
	Forced   string   `json:"forced,omitempty"`
}

// Report is one turn's check.
type Report struct {
	Trace    string    `json:"trace"`
	Turn     int64     `json:"turn"`
	Verdict  *Verdict  `json:"verdict"`
	Problems []Problem `json:"problems"`
	// Clean is true when no problem is a fault.
	Clean bool `json:"clean"`
	// TakesOnly marks the report of a trace that had only tts.take spans
	// when the decision window was over: no turn to decide.
	TakesOnly bool `json:"takes_only,omitempty"`
}

// Span is one span with its resource, as received.
type Span struct {
	Resource pcommon.Resource
	Span     ptrace.Span
}

// Check checks the spans of one trace (the verdict span, if there, gives the
// verdict).
func Check(trace string, spans []Span) Report {
	r := Report{Trace: trace}
	c := checker{}
	var turnID pcommon.SpanID
	var turns, units int
	declared := int64(-1)
	for _, s := range spans {
		if s.Span.Name() == semconv.SpanVoiceTurn {
			turnID = s.Span.SpanID()
		}
	}
	for _, s := range spans {
		sp := s.Span
		switch sp.Name() {
		case semconv.SpanVoiceTurn:
			turns++
			c.resource(s.Resource, semconv.SpanVoiceTurn, semconv.ServicePhone)
			c.attrs(semconv.SpanVoiceTurn, semconv.SpanVoiceTurn, sp.Attributes(), nil)
			if v, ok := sp.Attributes().Get(semconv.TurnIndex); ok && v.Type() == pcommon.ValueTypeInt {
				r.Turn = v.Int()
			}
			if v, ok := sp.Attributes().Get(semconv.TurnUnits); ok {
				if n, ok := asInt(v); ok {
					declared = n
				}
			}
			if !sp.ParentSpanID().IsEmpty() {
				c.add(Structure, semconv.SpanVoiceTurn, "", "has a parent: a turn is the root of its trace")
			}
			evs := sp.Events()
			for i := 0; i < evs.Len(); i++ {
				ev := evs.At(i)
				where := fmt.Sprintf("event %s #%d", ev.Name(), i+1)
				if ev.Name() == semconv.EventRouteChange {
					c.attrs(semconv.EventRouteChange, where, ev.Attributes(), nil)
				} else if isOurs(ev.Name()) && !registered(semconv.KindEvent, ev.Name()) {
					c.add(Unknown, semconv.SpanVoiceTurn, ev.Name(), "is not an event of the registry")
				}
			}
		case semconv.SpanVoiceUnit:
			units++
			where := semconv.SpanVoiceUnit
			if v, ok := sp.Attributes().Get(semconv.UnitIndex); ok {
				where += " " + v.AsString()
			}
			c.resource(s.Resource, where, semconv.ServicePhone)
			underran := false
			if v, ok := sp.Attributes().Get(semconv.UnitUnderruns); ok {
				if n, ok := asInt(v); ok && n > 0 {
					underran = true
				}
			}
			c.attrs(semconv.SpanVoiceUnit, where, sp.Attributes(), func(name string) bool {
				switch name {
				case semconv.UnitSilent, semconv.UnitCushion, semconv.TakeID:
					return underran // required when the unit underran
				}
				return true
			})
			if !turnID.IsEmpty() && sp.ParentSpanID() != turnID {
				c.add(Structure, where, "", "is not a child of the turn's voice.turn span")
			}
		case semconv.SpanTTSTake:
			where := semconv.SpanTTSTake
			if v, ok := sp.Attributes().Get(semconv.TakeID); ok {
				where += " " + v.AsString()
			}
			c.resource(s.Resource, where, semconv.ServiceEngine)
			c.attrs(semconv.SpanTTSTake, where, sp.Attributes(), nil)
		case semconv.SpanVerdict:
			v := verdict.FromSpan(s.Resource, sp)
			r.Verdict = &Verdict{Cause: v.Cause, Causes: v.Causes, Evidence: v.Evidence, Forced: v.Forced}
			if r.Turn == 0 {
				r.Turn = v.Index
			}
		default:
			if isOurs(sp.Name()) && !registered(semconv.KindSpan, sp.Name()) {
				c.add(Unknown, sp.Name(), "", "is not a span of the registry")
			}
		}
	}
	switch {
	case turns == 0:
		c.add(Structure, "trace", "", "has no voice.turn span")
	case turns > 1:
		c.add(Structure, "trace", "", fmt.Sprintf("has %d voice.turn spans: one turn is one trace", turns))
	}
	if declared >= 0 && int64(units) != declared {
		c.add(Structure, semconv.SpanVoiceTurn, semconv.TurnUnits, fmt.Sprintf("says %d units, %d voice.unit spans arrived", declared, units))
	}
	r.Problems = c.problems
	sort.SliceStable(r.Problems, func(i, j int) bool { return rank(r.Problems[i].Kind) < rank(r.Problems[j].Kind) })
	if r.Problems == nil {
		r.Problems = []Problem{}
	}
	r.Clean = true
	for _, p := range r.Problems {
		if p.Fault() {
			r.Clean = false
		}
	}
	return r
}

func rank(kind string) int {
	for i, k := range []string{Missing, Mistyped, Range, Unknown, Structure, Late, Advice} {
		if k == kind {
			return i
		}
	}
	return 99
}

type checker struct{ problems []Problem }

func (c *checker) add(kind, span, attr, detail string) {
	c.problems = append(c.problems, Problem{Kind: kind, Span: span, Attribute: attr, Detail: detail})
}

func (c *checker) resource(res pcommon.Resource, where, service string) {
	a := res.Attributes()
	v, ok := a.Get(semconv.ServiceName)
	switch {
	case !ok:
		c.add(Missing, "resource of "+where, semconv.ServiceName, "(required: "+service+")")
	case v.AsString() != service:
		c.add(Range, "resource of "+where, semconv.ServiceName, fmt.Sprintf("is %q, want %q", v.AsString(), service))
	}
	a.Range(func(k string, v pcommon.Value) bool {
		if !isOurs(k) {
			return true
		}
		if _, ok := semconv.Lookup(k); !ok {
			c.add(Unknown, "resource of "+where, k, "is not in the registry")
		}
		return true
	})
}

// attrs checks a span's (or an event's) attributes: each registered one
// carried there has its type and range; each required one absent is
// missing (needed says whether a conditional one is needed here); each
// recommended one absent is advice; names under pippa. and percause. that
// the registry does not have are unknown.
func (c *checker) attrs(carrier, where string, attrs pcommon.Map, needed func(string) bool) {
	for _, n := range semconv.Registry {
		if n.Kind != semconv.KindAttribute || !n.CarriedBy(carrier) {
			continue
		}
		if _, ok := attrs.Get(n.Name); ok {
			continue
		}
		if carrier == semconv.EventRouteChange && n.Name == semconv.RouteOutputs {
			continue // the new outputs, for people
		}
		if strings.HasPrefix(n.Name, semconv.LivePrefix) && strings.HasSuffix(n.Name, semconv.LiveBeforeSuffix) {
			continue // absent on a launch's first turn
		}
		if n.Name == semconv.PoolResetsBefore {
			continue // absent on a launch's first turn
		}
		switch n.Requirement {
		case semconv.Required:
			if needed == nil || needed(n.Name) {
				c.add(Missing, where, n.Name, "(required: "+n.When+")")
			}
		case semconv.Recommended:
			c.add(Advice, where, n.Name, "absent (recommended: "+n.When+")"+heldElsewhere(n, attrs))
		}
	}
	attrs.Range(func(k string, v pcommon.Value) bool {
		n, ok := semconv.Lookup(k)
		if !ok {
			if isOurs(k) {
				c.add(Unknown, where, k, "is not in the registry"+suggest(k))
			}
			return true
		}
		if !n.CarriedBy(carrier) && isOurs(k) {
			c.add(Structure, where, k, "belongs on "+strings.Join(n.Where, ", "))
			return true
		}
		c.value(where, n, v)
		return true
	})
}

// heldElsewhere names an attribute that holds what an absent one should:
// a link type ("wifi", "cell", …) under a name of the client's own.
func heldElsewhere(n semconv.Name, attrs pcommon.Map) string {
	if n.Name != semconv.NetworkConnectionType {
		return ""
	}
	held := ""
	attrs.Range(func(k string, v pcommon.Value) bool {
		if _, known := semconv.Lookup(k); !known && v.Type() == pcommon.ValueTypeStr && slices.Contains(n.Values, v.Str()) {
			held = fmt.Sprintf("; %s holds %q: name it %s", k, v.Str(), n.Name)
			return false
		}
		return true
	})
	return held
}

// value checks one value's type and range as the verdict's readers judge
// it, in their words (verdict.ValueFault: one place says what is bad, for
// the evidence and for the check), then whether a string is one of the
// registry's values.
func (c *checker) value(where string, n semconv.Name, v pcommon.Value) {
	if kind, detail := verdict.ValueFault(n, v); detail != "" {
		k := Range
		if kind == verdict.FaultMistyped {
			k = Mistyped
		}
		c.add(k, where, n.Name, detail)
		return
	}
	if n.Type == "string" && len(n.Values) > 0 && !slices.Contains(n.Values, v.Str()) {
		c.add(Range, where, n.Name, fmt.Sprintf("is %q, not one of %s", v.Str(), strings.Join(n.Values, ", ")))
	}
}

func registered(kind semconv.Kind, name string) bool {
	for _, n := range semconv.Registry {
		if n.Kind == kind && n.Name == name {
			return true
		}
	}
	return false
}

func isOurs(name string) bool {
	return strings.HasPrefix(name, "pippa.") || strings.HasPrefix(name, "percause.") ||
		strings.HasPrefix(name, "voice.") || strings.HasPrefix(name, "tts.")
}

// linkWords are what a name says when it means the turn's link: a client
// that names it after its own code (pippa.link, pippa.link.type,
// pippa.turn.network) means network.connection.type, the OpenTelemetry
// name, however far its spelling is from it.
var linkWords = []string{"link", "network", "connection", "net", "conn"}

// linkName is the registered name an unknown one means when it names the
// link: it ends in a link word (pippa.link, pippa.turn.network), or in
// type or subtype after one (pippa.link.type, pippa.connection_subtype);
// "" when it does not.
func linkName(name string) string {
	w := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '.' || r == '_' || r == '-' })
	n := len(w)
	switch {
	case n >= 1 && slices.Contains(linkWords, w[n-1]):
		return semconv.NetworkConnectionType
	case n >= 2 && w[n-1] == "type" && slices.Contains(linkWords, w[n-2]):
		return semconv.NetworkConnectionType
	case n >= 2 && w[n-1] == "subtype" && slices.Contains(linkWords, w[n-2]):
		return semconv.NetworkConnectionSubtype
	}
	return ""
}

// suggest names the registered attribute an unknown one most likely means:
// the link's name for a name that says link, else the closest spelling.
func suggest(name string) string {
	if l := linkName(name); l != "" {
		return " (did you mean " + l + "? the link is named as in OpenTelemetry)"
	}
	best, bestD := "", 4
	for _, n := range semconv.Registry {
		if n.Kind != semconv.KindAttribute {
			continue
		}
		if d := distance(name, n.Name); d < bestD {
			best, bestD = n.Name, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// distance is the Levenshtein distance, for short names.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func asInt(v pcommon.Value) (int64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int(), true
	case pcommon.ValueTypeDouble:
		if d := v.Double(); d == math.Trunc(d) && !math.IsInf(d, 0) {
			return int64(d), true
		}
	}
	return 0, false
}
