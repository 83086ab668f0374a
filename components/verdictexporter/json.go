package verdictexporter

import (
	"encoding/base64"
	"encoding/hex"
	"math"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// appendJSON writes td as OTLP/JSON, the form ptrace.JSONMarshaler writes
// and every OTLP/JSON reader reads, for the shapes verdict spans have:
// resources and scopes with attributes, spans with attributes, events and
// a status. It reports false (having written nothing it keeps) for
// anything else (links, trace state, dropped counts, non-finite doubles),
// which the caller writes with ptrace.JSONMarshaler. It is several times
// faster than the general marshaller: a verdict is written per turn.
// TestJSONMatchesMarshaler keeps the two in step.
func appendJSON(b []byte, td ptrace.Traces) ([]byte, bool) {
	start := len(b)
	fail := func() ([]byte, bool) { return b[:start], false }
	b = append(b, `{"resourceSpans":[`...)
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		if rs.SchemaUrl() != "" || rs.Resource().DroppedAttributesCount() != 0 {
			return fail()
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"resource":{`...)
		var ok bool
		if b, ok = appendAttrs(b, rs.Resource().Attributes(), false); !ok {
			return fail()
		}
		b = append(b, `},"scopeSpans":[`...)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			sc := ss.Scope()
			if ss.SchemaUrl() != "" || sc.DroppedAttributesCount() != 0 {
				return fail()
			}
			if j > 0 {
				b = append(b, ',')
			}
			var sep bool
			b, sep = appendField(append(b, `{"scope":{`...), false, `"name":`, sc.Name())
			b, sep = appendField(b, sep, `"version":`, sc.Version())
			if b, ok = appendAttrs(b, sc.Attributes(), sep); !ok {
				return fail()
			}
			b = append(b, `},"spans":[`...)
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				if k > 0 {
					b = append(b, ',')
				}
				if b, ok = appendSpan(b, spans.At(k)); !ok {
					return fail()
				}
			}
			b = append(b, "]}"...)
		}
		b = append(b, "]}"...)
	}
	return append(b, "]}"...), true
}

func appendSpan(b []byte, s ptrace.Span) ([]byte, bool) {
	if s.Links().Len() != 0 || s.TraceState().AsRaw() != "" || s.Flags() != 0 ||
		s.DroppedAttributesCount() != 0 || s.DroppedEventsCount() != 0 || s.DroppedLinksCount() != 0 {
		return b, false
	}
	b = append(b, `{"traceId":"`...)
	tid := s.TraceID()
	b = hex.AppendEncode(b, tid[:])
	b = append(b, `","spanId":"`...)
	sid := s.SpanID()
	b = hex.AppendEncode(b, sid[:])
	b = append(b, '"')
	if p := s.ParentSpanID(); !p.IsEmpty() {
		b = append(b, `,"parentSpanId":"`...)
		b = hex.AppendEncode(b, p[:])
		b = append(b, '"')
	}
	b = appendString(append(b, `,"name":`...), s.Name())
	if s.Kind() != ptrace.SpanKindUnspecified {
		b = strconv.AppendInt(append(b, `,"kind":`...), int64(s.Kind()), 10)
	}
	b = appendTime(b, `,"startTimeUnixNano":`, s.StartTimestamp())
	b = appendTime(b, `,"endTimeUnixNano":`, s.EndTimestamp())
	var ok bool
	if b, ok = appendAttrs(b, s.Attributes(), true); !ok {
		return b, false
	}
	if evs := s.Events(); evs.Len() > 0 {
		b = append(b, `,"events":[`...)
		for i := 0; i < evs.Len(); i++ {
			ev := evs.At(i)
			if ev.DroppedAttributesCount() != 0 {
				return b, false
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			sep := false
			if ev.Timestamp() != 0 {
				b = appendTime(b, `"timeUnixNano":`, ev.Timestamp())
				sep = true
			}
			b, sep = appendField(b, sep, `"name":`, ev.Name())
			if b, ok = appendAttrs(b, ev.Attributes(), sep); !ok {
				return b, false
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	st := s.Status()
	b, sep := appendField(append(b, `,"status":{`...), false, `"message":`, st.Message())
	if st.Code() != ptrace.StatusCodeUnset {
		if sep {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(b, `"code":`...), int64(st.Code()), 10)
	}
	return append(b, "}}"...), true
}

// appendField writes "key":"s" (key given with its quotes and colon), after
// a comma when sep, or nothing for an empty s; sep is returned true once a
// field is written.
func appendField(b []byte, sep bool, key, s string) ([]byte, bool) {
	if s == "" {
		return b, sep
	}
	if sep {
		b = append(b, ',')
	}
	return appendString(append(b, key...), s), true
}

// appendTime writes a timestamp as the marshaller does: a string of
// nanoseconds, left out when zero.
func appendTime(b []byte, key string, t pcommon.Timestamp) []byte {
	if t == 0 {
		return b
	}
	b = append(b, key...)
	b = append(b, '"')
	b = strconv.AppendUint(b, uint64(t), 10)
	return append(b, '"')
}

// appendAttrs writes "attributes":[…] (after a comma when sep), or nothing
// for an empty map.
func appendAttrs(b []byte, m pcommon.Map, sep bool) ([]byte, bool) {
	if m.Len() == 0 {
		return b, true
	}
	if sep {
		b = append(b, ',')
	}
	b = append(b, `"attributes":`...)
	return appendKVs(b, m)
}

func appendKVs(b []byte, m pcommon.Map) ([]byte, bool) {
	b = append(b, '[')
	ok := true
	i := 0
	m.Range(func(k string, v pcommon.Value) bool {
		if i > 0 {
			b = append(b, ',')
		}
		i++
		b = appendString(append(b, `{"key":`...), k)
		b = append(b, `,"value":`...)
		if b, ok = appendValue(b, v); !ok {
			return false
		}
		b = append(b, '}')
		return true
	})
	return append(b, ']'), ok
}

func appendValue(b []byte, v pcommon.Value) ([]byte, bool) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		b = appendString(append(b, `{"stringValue":`...), v.Str())
	case pcommon.ValueTypeBool:
		b = strconv.AppendBool(append(b, `{"boolValue":`...), v.Bool())
	case pcommon.ValueTypeInt:
		b = strconv.AppendInt(append(b, `{"intValue":"`...), v.Int(), 10)
		b = append(b, '"')
	case pcommon.ValueTypeDouble:
		d := v.Double()
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return b, false
		}
		b = strconv.AppendFloat(append(b, `{"doubleValue":`...), d, 'g', -1, 64)
	case pcommon.ValueTypeBytes:
		b = append(b, `{"bytesValue":"`...)
		b = base64.StdEncoding.AppendEncode(b, v.Bytes().AsRaw())
		b = append(b, '"')
	case pcommon.ValueTypeSlice:
		b = append(b, `{"arrayValue":{`...)
		if s := v.Slice(); s.Len() > 0 {
			b = append(b, `"values":[`...)
			for i := 0; i < s.Len(); i++ {
				if i > 0 {
					b = append(b, ',')
				}
				var ok bool
				if b, ok = appendValue(b, s.At(i)); !ok {
					return b, false
				}
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	case pcommon.ValueTypeMap:
		b = append(b, `{"kvlistValue":{`...)
		if m := v.Map(); m.Len() > 0 {
			b = append(b, `"values":`...)
			var ok bool
			if b, ok = appendKVs(b, m); !ok {
				return b, false
			}
		}
		b = append(b, '}')
	default: // empty
		return append(b, "{}"...), true
	}
	return append(b, '}'), true
}

// appendString writes s as a JSON string.
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// One table load a byte: verdict lines are mostly plain ASCII
		// (keys, causes, evidence), and this scan was a third of a line's
		// cost when each byte was tested four times.
		if plainJSON[s[i]] {
			i++
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainJSON marks the bytes a JSON string holds as they are: printable
// ASCII other than the quote and the backslash. Control bytes are escaped;
// bytes from 0x80 up begin a UTF-8 sequence, checked rune by rune.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
