package verdictprocessor

import (
	"context"
	"slices"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// passSpans sends on (emit: verdicts) the spans named in pass_spans,
// at once and on their own: they are rare (a status change), and a refusal
// is the sender's to retry like any other.
func (p *verdictProcessor) passSpans(ctx context.Context, td ptrace.Traces) error {
	if len(p.cfg.PassSpans) == 0 {
		return nil
	}
	if spans, ok := p.copyPassed(td); ok {
		return p.next.ConsumeTraces(ctx, spans)
	}
	return nil
}

// copyPassed copies the spans named in pass_spans out of td, with their
// resources and scopes; ok is false when there are none.
func (p *verdictProcessor) copyPassed(td ptrace.Traces) (ptrace.Traces, bool) {
	var out ptrace.Traces
	found := false
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			var oss ptrace.ScopeSpans
			taken := false
			for k := 0; k < spans.Len(); k++ {
				s := spans.At(k)
				if !slices.Contains(p.cfg.PassSpans, s.Name()) {
					continue
				}
				if !found {
					out, found = ptrace.NewTraces(), true
				}
				if !taken {
					ors := out.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(ors.Resource())
					ors.SetSchemaUrl(rs.SchemaUrl())
					oss = ors.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(oss.Scope())
					oss.SetSchemaUrl(ss.SchemaUrl())
					taken = true
				}
				s.CopyTo(oss.Spans().AppendEmpty())
			}
		}
	}
	return out, found
}
