package otlp

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
)

// ResourceMetrics transforms one SDK collection into its OTLP form. Metrics of
// an aggregation it does not know are left out and named in the error; the
// rest is returned.
func ResourceMetrics(rm *metricdata.ResourceMetrics) (*metricpb.ResourceMetrics, error) {
	var errs []error
	out := &metricpb.ResourceMetrics{Resource: &resourcepb.Resource{}}
	if rm.Resource != nil {
		out.Resource.Attributes = keyValues(rm.Resource.Iter())
		out.SchemaUrl = rm.Resource.SchemaURL()
	}
	for _, sm := range rm.ScopeMetrics {
		psm := &metricpb.ScopeMetrics{
			Scope: &commonpb.InstrumentationScope{
				Name:       sm.Scope.Name,
				Version:    sm.Scope.Version,
				Attributes: keyValues(sm.Scope.Attributes.Iter()),
			},
			SchemaUrl: sm.Scope.SchemaURL,
			Metrics:   make([]*metricpb.Metric, 0, len(sm.Metrics)),
		}
		for _, m := range sm.Metrics {
			pm, err := metricOf(m)
			if err != nil {
				errs = append(errs, fmt.Errorf("metric %s: %w", m.Name, err))
				continue
			}
			psm.Metrics = append(psm.Metrics, pm)
		}
		if len(psm.Metrics) > 0 {
			out.ScopeMetrics = append(out.ScopeMetrics, psm)
		}
	}
	return out, errors.Join(errs...)
}

func metricOf(m metricdata.Metrics) (*metricpb.Metric, error) {
	out := &metricpb.Metric{Name: m.Name, Description: m.Description, Unit: m.Unit}
	switch a := m.Data.(type) {
	case metricdata.Gauge[int64]:
		out.Data = &metricpb.Metric_Gauge{Gauge: &metricpb.Gauge{DataPoints: numberPoints(a.DataPoints)}}
	case metricdata.Gauge[float64]:
		out.Data = &metricpb.Metric_Gauge{Gauge: &metricpb.Gauge{DataPoints: numberPoints(a.DataPoints)}}
	case metricdata.Sum[int64]:
		out.Data = &metricpb.Metric_Sum{Sum: &metricpb.Sum{
			AggregationTemporality: temporality(a.Temporality), IsMonotonic: a.IsMonotonic, DataPoints: numberPoints(a.DataPoints)}}
	case metricdata.Sum[float64]:
		out.Data = &metricpb.Metric_Sum{Sum: &metricpb.Sum{
			AggregationTemporality: temporality(a.Temporality), IsMonotonic: a.IsMonotonic, DataPoints: numberPoints(a.DataPoints)}}
	case metricdata.Histogram[int64]:
		out.Data = &metricpb.Metric_Histogram{Histogram: &metricpb.Histogram{
			AggregationTemporality: temporality(a.Temporality), DataPoints: histogramPoints(a.DataPoints)}}
	case metricdata.Histogram[float64]:
		out.Data = &metricpb.Metric_Histogram{Histogram: &metricpb.Histogram{
			AggregationTemporality: temporality(a.Temporality), DataPoints: histogramPoints(a.DataPoints)}}
	default:
		return nil, fmt.Errorf("unsupported aggregation %T", a)
	}
	if out.GetSum() != nil && out.GetSum().AggregationTemporality == metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_UNSPECIFIED ||
		out.GetHistogram() != nil && out.GetHistogram().AggregationTemporality == metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_UNSPECIFIED {
		return nil, errors.New("unknown temporality")
	}
	return out, nil
}

func temporality(t metricdata.Temporality) metricpb.AggregationTemporality {
	switch t {
	case metricdata.CumulativeTemporality:
		return metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
	case metricdata.DeltaTemporality:
		return metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
	}
	return metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_UNSPECIFIED
}

func numberPoints[N int64 | float64](pts []metricdata.DataPoint[N]) []*metricpb.NumberDataPoint {
	out := make([]*metricpb.NumberDataPoint, 0, len(pts))
	for _, p := range pts {
		np := &metricpb.NumberDataPoint{
			Attributes:        keyValues(p.Attributes.Iter()),
			StartTimeUnixNano: unixNano(p.StartTime),
			TimeUnixNano:      unixNano(p.Time),
		}
		switch v := any(p.Value).(type) {
		case int64:
			np.Value = &metricpb.NumberDataPoint_AsInt{AsInt: v}
		case float64:
			np.Value = &metricpb.NumberDataPoint_AsDouble{AsDouble: v}
		}
		out = append(out, np)
	}
	return out
}

func histogramPoints[N int64 | float64](pts []metricdata.HistogramDataPoint[N]) []*metricpb.HistogramDataPoint {
	out := make([]*metricpb.HistogramDataPoint, 0, len(pts))
	for _, p := range pts {
		sum := float64(p.Sum)
		hp := &metricpb.HistogramDataPoint{
			Attributes:        keyValues(p.Attributes.Iter()),
			StartTimeUnixNano: unixNano(p.StartTime),
			TimeUnixNano:      unixNano(p.Time),
			Count:             p.Count,
			Sum:               &sum,
			BucketCounts:      p.BucketCounts,
			ExplicitBounds:    p.Bounds,
		}
		if v, ok := p.Min.Value(); ok {
			f := float64(v)
			hp.Min = &f
		}
		if v, ok := p.Max.Value(); ok {
			f := float64(v)
			hp.Max = &f
		}
		out = append(out, hp)
	}
	return out
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(max(0, t.UnixNano()))
}

func keyValues(it attribute.Iterator) []*commonpb.KeyValue {
	if it.Len() == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, 0, it.Len())
	for it.Next() {
		kv := it.Attribute()
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

func anyValue(v attribute.Value) *commonpb.AnyValue {
	switch v.Type() {
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRING:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.AsString()}}
	case attribute.BOOLSLICE:
		return arrayOf(v.AsBoolSlice(), func(b bool) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
		})
	case attribute.INT64SLICE:
		return arrayOf(v.AsInt64Slice(), func(i int64) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
		})
	case attribute.FLOAT64SLICE:
		return arrayOf(v.AsFloat64Slice(), func(f float64) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
		})
	case attribute.STRINGSLICE:
		return arrayOf(v.AsStringSlice(), func(s string) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
		})
	case attribute.BYTESLICE:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}}
	case attribute.SLICE:
		return arrayOf(v.AsSlice(), anyValue)
	case attribute.MAP:
		kvs := v.AsMap()
		list := &commonpb.KeyValueList{Values: make([]*commonpb.KeyValue, len(kvs))}
		for i, kv := range kvs {
			list.Values[i] = &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)}
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: list}}
	case attribute.EMPTY:
		return &commonpb.AnyValue{}
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.String()}}
}

func arrayOf[T any](vs []T, f func(T) *commonpb.AnyValue) *commonpb.AnyValue {
	arr := &commonpb.ArrayValue{Values: make([]*commonpb.AnyValue, len(vs))}
	for i, v := range vs {
		arr.Values[i] = f(v)
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: arr}}
}
