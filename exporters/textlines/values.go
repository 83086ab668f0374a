package textlines

import (
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The readers of values: each sets its reading and its field bit only when
// the whole value reads, so a refused value leaves nothing half read.

func (r *reader) intTo(dst *int, f Fields, v string) *valueFault {
	n, ok := parseCount(v)
	if !ok {
		return badValue("")
	}
	*dst = n
	r.set(f)
	return nil
}

func (r *reader) int64To(dst *int64, f Fields, v string) *valueFault {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return badValue("")
	}
	*dst = n
	r.set(f)
	return nil
}

func (r *reader) secondsTo(dst *float64, f Fields, v string) *valueFault {
	d, ok := parseSeconds(v)
	if !ok {
		return badValue("")
	}
	*dst = d
	r.set(f)
	return nil
}

func (r *reader) boolTo(dst *bool, f Fields, v string) *valueFault {
	switch v {
	case "yes", "true", "1":
		*dst = true
	case "no", "false", "0":
		*dst = false
	default:
		return badValue("")
	}
	r.set(f)
	return nil
}

func (r *reader) trace(v string) *valueFault {
	if v == "-" {
		return nil
	}
	id, ok := ParseTraceID(v)
	if !ok {
		return &valueFault{reason: ReasonBadTrace}
	}
	r.rec.TraceID = id
	r.set(FTrace)
	return nil
}

func (r *reader) underruns(v string) *valueFault {
	if !strings.Contains(v, ",") {
		return r.intTo(&r.rec.Turn.Underruns, FUnderruns, v)
	}
	// The app's spelling: one count per unit.
	n := strings.Count(v, ",") + 1
	if n > MaxUnits {
		return &valueFault{reason: ReasonTooLong, problem: fmt.Sprintf("%d units, at most %d", n, MaxUnits)}
	}
	per := slices.Grow(r.perUnit[:0], n)
	for p := range strings.SplitSeq(v, ",") {
		c, ok := parseCount(p)
		if !ok {
			return badValue(fmt.Sprintf("unit %d's %q is not an int", len(per)+1, clip(p)))
		}
		per = append(per, c)
	}
	r.perUnit = per
	r.rec.App = true
	r.set(FUnitUnderruns)
	return nil
}

func (r *reader) pool(v string) *valueFault {
	if v == "-" {
		return nil
	}
	now, prior, hasPrior := v, "", false
	if i := strings.IndexByte(v, '('); i >= 0 {
		if !strings.HasSuffix(v, ")") {
			return badValue("no closing parenthesis")
		}
		now, prior, hasPrior = v[:i], v[i+1:len(v)-1], true
	}
	n, ok := parseCount(now)
	if !ok {
		return badValue(fmt.Sprintf("%q is not an int", clip(now)))
	}
	p := 0
	if hasPrior {
		if p, ok = parseCount(prior); !ok {
			return badValue(fmt.Sprintf("%q is not an int", clip(prior)))
		}
	}
	t := &r.rec.Turn
	t.PoolResets, t.HasPoolResets = n, true
	t.PoolResetsBefore, t.HasPoolPrior = p, hasPrior
	r.set(FPool)
	return nil
}

// live reads kind:now[(b,b,b)],… (commas also separate the history inside
// the parentheses).
func (r *reader) live(v string) *valueFault {
	if v == "-" {
		return nil
	}
	var kinds []Live
	for v != "" {
		kind, rest, ok := strings.Cut(v, ":")
		if !ok || kind == "" {
			return badValue(fmt.Sprintf("%q is not kind:count", clip(v)))
		}
		end := strings.IndexAny(rest, ",(")
		if end < 0 {
			end = len(rest)
		}
		now, ok := parseCount(rest[:end])
		if !ok {
			return badValue(fmt.Sprintf("the count of %s %q is not an int", clip(kind), clip(rest[:end])))
		}
		l := Live{Kind: kind, Now: now}
		rest = rest[end:]
		if strings.HasPrefix(rest, "(") {
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				return badValue(fmt.Sprintf("the history of %s has no closing parenthesis", clip(kind)))
			}
			for p := range strings.SplitSeq(rest[1:end], ",") {
				n, ok := parseCount(p)
				if !ok {
					return badValue(fmt.Sprintf("the history of %s: %q is not an int", clip(kind), clip(p)))
				}
				l.Before = append(l.Before, n)
			}
			rest = rest[end+1:]
		}
		for _, o := range kinds {
			if o.Kind == kind {
				return &valueFault{reason: ReasonDuplicate, problem: clip(kind) + " given twice"}
			}
		}
		if len(kinds) >= MaxLiveKinds {
			return &valueFault{reason: ReasonTooLong, problem: fmt.Sprintf("more than %d live kinds", MaxLiveKinds)}
		}
		kinds = append(kinds, l)
		if rest != "" {
			if rest[0] != ',' {
				return badValue(fmt.Sprintf("%q after %s", clip(rest), clip(kind)))
			}
			rest = rest[1:]
			if rest == "" {
				return badValue("ends with a comma")
			}
		}
		v = rest
	}
	r.rec.Turn.Live = kinds
	r.set(FLive)
	return nil
}

// gapList reads gap[a(lead)],… one per unit.
func (r *reader) gapList(v string) *valueFault {
	if v == "-" {
		r.set(FGaps)
		return nil
	}
	n, f := units(v)
	if f != nil {
		return f
	}
	gaps := slices.Grow(r.gaps[:0], n)
	app := false
	for p := range strings.SplitSeq(v, ",") {
		u := UnitReading{Index: len(gaps) + 1}
		g := p
		if j := strings.Index(p, "a("); j >= 0 {
			if !strings.HasSuffix(p, ")") {
				return badValue(fmt.Sprintf("unit %d's %q is not gap or gap a(lead)", u.Index, clip(p)))
			}
			lead, ok := parseNumber(strings.TrimSuffix(p[j+2:len(p)-1], "s"))
			if !ok {
				return badValue(fmt.Sprintf("unit %d's lead %q is not seconds", u.Index, clip(p[j+2:len(p)-1])))
			}
			u.Lead, u.HasLead, g = lead, true, p[:j]
			if lead >= 0 {
				app = true // the canonical line shows a lead only when it is negative
			}
		}
		gap, ok := parseSeconds(g)
		if !ok {
			return badValue(fmt.Sprintf("unit %d's gap %q is not seconds", u.Index, clip(g)))
		}
		u.Gap, u.HasGap = gap, true
		gaps = append(gaps, u)
	}
	r.gaps = gaps
	r.rec.App = r.rec.App || app
	r.set(FGaps)
	return nil
}

// brokenUnitList reads index:underruns/silent/cushion@take,…
func (r *reader) brokenUnitList(v string) *valueFault {
	if v == "-" {
		r.set(FBroke)
		return nil
	}
	if _, f := units(v); f != nil {
		return f
	}
	underran := r.brokenUnits[:0]
	for p := range strings.SplitSeq(v, ",") {
		idx, rest, ok := strings.Cut(p, ":")
		body, take, ok2 := strings.Cut(rest, "@")
		under, rest, ok3 := strings.Cut(body, "/")
		silentS, cushionS, ok4 := strings.Cut(rest, "/")
		if !ok || !ok2 || !ok3 || !ok4 || strings.Contains(cushionS, "/") {
			return badValue(fmt.Sprintf("%q is not index:underruns/silent/cushion@take", clip(p)))
		}
		i, ok := parseCount(idx)
		if !ok || i < 1 || i > MaxUnits {
			return badValue(fmt.Sprintf("%q: the unit index %q is not 1..%d", clip(p), clip(idx), MaxUnits))
		}
		n, ok := parseCount(under)
		if !ok {
			return badValue(fmt.Sprintf("unit %d's underruns %q are not an int", i, clip(under)))
		}
		silent, ok := parseSeconds(silentS)
		if !ok {
			return badValue(fmt.Sprintf("unit %d's silent %q is not seconds", i, clip(silentS)))
		}
		cushion, ok := parseSeconds(cushionS)
		if !ok {
			return badValue(fmt.Sprintf("unit %d's cushion %q is not seconds", i, clip(cushionS)))
		}
		for _, o := range underran {
			if o.Index == i {
				return &valueFault{reason: ReasonDuplicate, problem: fmt.Sprintf("names unit %d twice", i)}
			}
		}
		underran = append(underran, UnitReading{Index: i, Underruns: n, HasUnderruns: true, Silent: silent, Cushion: cushion,
			HasBrokenUnit: true, TakeID: undash(take)})
	}
	r.brokenUnits = underran
	r.set(FBroke)
	return nil
}

// changes reads the canonical changes=at@reason>out+out,…
func (r *reader) changes(v string) *valueFault {
	if v == "-" {
		r.set(FChanges)
		return nil
	}
	t := &r.rec.Turn
	kept := len(t.Changes)
	for p := range strings.SplitSeq(v, ",") {
		at, rest, ok := strings.Cut(p, "@")
		reason, outs, ok2 := strings.Cut(rest, ">")
		var f *valueFault
		if !ok || !ok2 {
			f = badValue(fmt.Sprintf("%q is not at@reason>outputs", clip(p)))
		} else {
			f = r.addChange(at, reason, list(outs, "+"))
		}
		if f != nil {
			t.Changes = t.Changes[:kept]
			return f
		}
	}
	r.set(FChanges)
	return nil
}

// appRouteChange reads the app's route_change@<s>=<reason>:<outputs>.
func (r *reader) appRouteChange(v string) {
	r.rec.App = true
	at, rest, ok := strings.Cut(v, "=")
	if !ok {
		r.fail(Fault{Reason: ReasonSyntax, Field: routeChangePrefix + clip(v), Problem: "has no =<reason>:<outputs>", Form: routeChangeForm})
		return
	}
	reason, outs, _ := strings.Cut(rest, ":")
	var outputs []string
	if strings.Contains(outs, ",") {
		outputs = list(outs, ",")
	} else {
		outputs = list(outs, "+")
	}
	if f := r.addChange(at, reason, outputs); f != nil {
		r.fail(f.in(routeChangePrefix+clip(at), rest, routeChangeForm))
		return
	}
	r.set(FChanges)
}

func (r *reader) addChange(at, reason string, outputs []string) *valueFault {
	t := &r.rec.Turn
	if len(t.Changes) >= MaxChanges {
		return &valueFault{reason: ReasonTooLong, problem: fmt.Sprintf("more than %d route changes", MaxChanges)}
	}
	a, ok := parseNumber(strings.TrimSuffix(at, "s"))
	if !ok {
		return badValue(fmt.Sprintf("the time %q is not seconds", clip(at)))
	}
	t.Changes = append(t.Changes, RouteChange{At: a, Reason: undash(reason), Outputs: outputs})
	return nil
}

// ParseTraceID reads a trace ID of 32 hex digits that are not all zeros and
// returns it in lowercase.
func ParseTraceID(v string) (string, bool) {
	if len(v) != 32 {
		return "", false
	}
	var b [16]byte
	if _, err := hex.Decode(b[:], []byte(v)); err != nil || b == [16]byte{} {
		return "", false
	}
	return hex.EncodeToString(b[:]), true
}

// slashed reads a/b[/c] seconds into dst, all or none.
func slashed(v string, dst ...*float64) *valueFault {
	var vals [3]float64
	i := 0
	for p := range strings.SplitSeq(v, "/") {
		if i == len(dst) {
			return badValue(fmt.Sprintf("more than %d parts", len(dst)))
		}
		d, ok := parseSeconds(p)
		if !ok {
			return badValue(fmt.Sprintf("%q is not seconds", clip(p)))
		}
		vals[i] = d
		i++
	}
	if i != len(dst) {
		return badValue(fmt.Sprintf("%d parts, want %d", i, len(dst)))
	}
	for i, d := range dst {
		*d = vals[i]
	}
	return nil
}

// units bounds a per-unit list (gaps, broke) before it is split.
func units(v string) (int, *valueFault) {
	n := strings.Count(v, ",") + 1
	if n > MaxUnits {
		return n, &valueFault{reason: ReasonTooLong, problem: fmt.Sprintf("%d units, at most %d", n, MaxUnits)}
	}
	return n, nil
}

// parseSeconds reads a duration: a finite decimal number, optionally with
// the unit s or ms.
func parseSeconds(v string) (float64, bool) {
	scale := 1.0
	switch {
	case strings.HasSuffix(v, "ms"):
		v, scale = v[:len(v)-2], 0.001
	case strings.HasSuffix(v, "s"):
		v = v[:len(v)-1]
	}
	d, ok := parseNumber(v)
	return d * scale, ok
}

// parseNumber reads a finite decimal number (no hex, no NaN, no
// infinities).
func parseNumber(v string) (float64, bool) {
	if v == "" || strings.ContainsAny(v, "xXpPnNiI_") {
		return 0, false
	}
	d, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(d) || math.IsInf(d, 0) {
		return 0, false
	}
	return d, true
}

// parseCount reads an int (negative ones are read: the rules say they are
// bad).
func parseCount(v string) (int, bool) {
	n, err := strconv.Atoi(v)
	if err != nil || n > math.MaxInt32 || n < math.MinInt32 {
		return 0, false
	}
	return n, true
}

// list splits a value list; "-" and "" are empty.
func list(v, sep string) []string {
	if v == "-" || v == "" {
		return nil
	}
	var out []string
	for p := range strings.SplitSeq(v, sep) {
		if p != "" && p != "-" {
			out = append(out, p)
		}
	}
	return out
}

func undash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
