package verdictexporter

import "testing"

func TestAcceptsGzip(t *testing.T) {
	for ae, want := range map[string]bool{
		"": false, "gzip": true, "GZIP": true, "br, gzip;q=0.8": true, "deflate": false,
		"gzip;q=0": false, "gzip; q=0.0": false, "gzip;q=0.001": true, "identity, gzip;q=1": true, "gzipx": false,
	} {
		if got := acceptsGzip(ae); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", ae, got, want)
		}
	}
}
