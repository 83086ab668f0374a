package testenv

import (
	"io"
	"net/http"
	"testing"
)

// GetBody is the body of a GET of url (a metrics endpoint, a page), or the
// test fails.
func GetBody(tb testing.TB, url string) string {
	tb.Helper()
	resp, err := http.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
