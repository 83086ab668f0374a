package dashboards

import "testing"

// BenchmarkFiles renders every generated file (what `percause dashboards`
// does before writing).
func BenchmarkFiles(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Files(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOverviewBuild builds the overview dashboard with the SDK's builders.
func BenchmarkOverviewBuild(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Overview().Build(); err != nil {
			b.Fatal(err)
		}
	}
}
