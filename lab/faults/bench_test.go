package faults

import (
	"io"
	"net/http"
	"testing"
)

// BenchmarkTransfer compares a 1 MB download straight from the server with
// the same through the proxy (no faults): the proxy's own cost, as a ratio.
func BenchmarkTransfer(b *testing.B) {
	const n = 1 << 20
	srv := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(make([]byte, n))
	})}
	ln, err := listenLoopback()
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	p, err := Listen(ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, c := range []struct{ name, url string }{
		{"direct", "http://" + ln.Addr().String()},
		{"proxied", p.URL()},
	} {
		b.Run(c.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{}}
			b.SetBytes(n)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := client.Get(c.url + "/")
				if err != nil {
					b.Fatal(err)
				}
				got, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if got != n {
					b.Fatalf("%d bytes", got)
				}
			}
		})
	}
}
