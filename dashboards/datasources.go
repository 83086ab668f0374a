package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// Datasource UIDs are fixed: the provisioning files create the datasources
// with these UIDs and every panel and alert rule refers to them, so the
// dashboards work the moment Grafana starts.
const (
	PrometheusUID = "percause-prometheus"
	JaegerUID     = "percause-jaeger"
)

func ptr[T any](v T) *T { return &v }

func promDS() common.DataSourceRef {
	return common.DataSourceRef{Type: ptr("prometheus"), Uid: ptr(PrometheusUID)}
}

func jaegerDS() common.DataSourceRef {
	return common.DataSourceRef{Type: ptr("jaeger"), Uid: ptr(JaegerUID)}
}

// promRange is a range query drawn as a series per label set.
func promRange(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Datasource(promDS()).Expr(expr).Range().LegendFormat(legend)
}

// promInstant is an instant query (stat, pie and table panels).
func promInstant(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Datasource(promDS()).Expr(expr).Instant().LegendFormat(legend)
}
