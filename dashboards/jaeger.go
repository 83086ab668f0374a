package dashboards

import (
	"bytes"
	"encoding/json"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
)

// The foundation SDK has no Jaeger query type, so this file defines one
// the way the SDK's "custom query type" guide does: a Dataquery variant and
// its builder. The fields are those of Grafana's Jaeger datasource search.

// JaegerQuery is a Grafana Jaeger datasource query.
type JaegerQuery struct {
	RefId      string                `json:"refId"`
	Hide       *bool                 `json:"hide,omitempty"`
	Datasource *common.DataSourceRef `json:"datasource,omitempty"`
	// QueryType is "search" (a table of matching traces) or "" (one trace by ID).
	QueryType string `json:"queryType,omitempty"`
	Service   string `json:"service,omitempty"`
	Operation string `json:"operation,omitempty"`
	// Tags filters spans in logfmt: key=value key2=value2.
	Tags  string `json:"tags,omitempty"`
	Limit int64  `json:"limit,omitempty"`
}

// ImplementsDataqueryVariant marks JaegerQuery as a cog Dataquery.
func (JaegerQuery) ImplementsDataqueryVariant() {}

// DataqueryType is the datasource plugin ID.
func (JaegerQuery) DataqueryType() string { return "jaeger" }

// Validate checks the query.
func (q JaegerQuery) Validate() error { return nil }

// Equals compares two queries.
func (q JaegerQuery) Equals(other variants.Dataquery) bool {
	o, ok := other.(JaegerQuery)
	if !ok {
		return false
	}
	a, _ := json.Marshal(q)
	b, _ := json.Marshal(o)
	return string(a) == string(b)
}

// JaegerQueryVariantConfig lets cog unmarshal dashboards holding Jaeger queries.
func JaegerQueryVariantConfig() variants.DataqueryConfig {
	return variants.DataqueryConfig{
		Identifier: "jaeger",
		DataqueryUnmarshaler: func(raw []byte) (variants.Dataquery, error) {
			q := JaegerQuery{}
			if err := json.Unmarshal(raw, &q); err != nil {
				return nil, err
			}
			return q, nil
		},
		StrictDataqueryUnmarshaler: func(raw []byte) (variants.Dataquery, error) {
			q := JaegerQuery{}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&q); err != nil {
				return nil, err
			}
			return q, nil
		},
	}
}

var _ cog.Builder[variants.Dataquery] = (*JaegerQueryBuilder)(nil)

// JaegerQueryBuilder builds a JaegerQuery.
type JaegerQueryBuilder struct{ q JaegerQuery }

// NewJaegerSearch starts a search query for spans of operation in service.
func NewJaegerSearch(service, operation string) *JaegerQueryBuilder {
	return &JaegerQueryBuilder{q: JaegerQuery{QueryType: "search", Service: service, Operation: operation}}
}

// Build returns the query.
func (b *JaegerQueryBuilder) Build() (variants.Dataquery, error) { return b.q, b.q.Validate() }

// RefId sets the query's reference.
func (b *JaegerQueryBuilder) RefId(id string) *JaegerQueryBuilder { b.q.RefId = id; return b }

// Datasource sets the datasource.
func (b *JaegerQueryBuilder) Datasource(ds common.DataSourceRef) *JaegerQueryBuilder {
	b.q.Datasource = &ds
	return b
}

// Tags sets the logfmt tag filter.
func (b *JaegerQueryBuilder) Tags(tags string) *JaegerQueryBuilder { b.q.Tags = tags; return b }

// Limit caps the number of traces.
func (b *JaegerQueryBuilder) Limit(n int64) *JaegerQueryBuilder { b.q.Limit = n; return b }
