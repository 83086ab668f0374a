package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/percause/percause/internal/testsupport/testenv"
)

func TestHasConfigFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"validate"}, false},
		{[]string{"--config", "x.yaml"}, true},
		{[]string{"validate", "--config=x.yaml"}, true},
		{[]string{"-config", "x.yaml"}, true},
		{[]string{"--feature-gates", "a"}, false},
		{[]string{"--", "--config", "x"}, false},
	} {
		if got := hasConfigFlag(tc.args); got != tc.want {
			t.Errorf("hasConfigFlag(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

func TestConfigURIsAndSubcommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		uris []string
		sub  string
	}{
		{nil, nil, ""},
		{[]string{"validate"}, nil, "validate"},
		{[]string{"validate", "--config", "a.yaml", "--config=b.yaml"}, []string{"a.yaml", "b.yaml"}, "validate"},
		{[]string{"--config", "a.yaml", "validate"}, []string{"a.yaml"}, "validate"},
		{[]string{"--set", "x=1", "components"}, nil, "components"},
		{[]string{"--feature-gates=a", "--config", "validate"}, []string{"validate"}, ""},
		{[]string{"--config", "a.yaml"}, []string{"a.yaml"}, ""},
		{[]string{"--", "validate"}, nil, ""},
	} {
		if got := configURIs(tc.args); !slices.Equal(got, tc.uris) {
			t.Errorf("configURIs(%q) = %q, want %q", tc.args, got, tc.uris)
		}
		if got := subcommandOf(tc.args); got != tc.sub {
			t.Errorf("subcommandOf(%q) = %q, want %q", tc.args, got, tc.sub)
		}
	}
}

// TestCollectorHelpNamesItsCommand: help and usage name the command a user
// types, `percause collector …`, never `percause validate`.
func TestCollectorHelpNamesItsCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "--help"}, "percause collector validate [flags]"},
		{[]string{"components", "--help"}, "percause collector components [flags]"},
		{[]string{"--help"}, "percause collector [command]"},
	} {
		var out, errb bytes.Buffer
		code := runCollectorTo(context.Background(), c.args, &out, &errb)
		help := out.String() + errb.String()
		if code != 0 || !strings.Contains(help, c.want) {
			t.Errorf("collector %q: exit %d, want 0 and %q in\n%s", c.args, code, c.want, help)
		}
		for _, wrong := range []string{"percause validate", "percause components", "percause [command]"} {
			if strings.Contains(help, wrong) {
				t.Errorf("collector %q prints %q, which is not a command:\n%s", c.args, wrong, help)
			}
		}
	}
}

// TestValidateChecksTLSFiles: `collector validate` on gateway.yaml fails
// when the certificate or key it names does not exist or the two are not a
// pair, and passes with a real pair.
func TestValidateChecksTLSFiles(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSignedPair(t, dir, "percause-gateway")
	otherCert, _ := selfSignedPair(t, filepath.Join(dir, "other"), "someone-else")
	gateway := filepath.Join(testenv.RepoRoot(), "collector-config", "gateway.yaml")
	for _, c := range []struct {
		name      string
		cert, key string
		say       string // "" : passes
	}{
		{"a real pair", cert, key, ""},
		{"no certificate", filepath.Join(dir, "missing.crt"), key, "cert_file: open " + filepath.Join(dir, "missing.crt")},
		{"no key", cert, filepath.Join(dir, "missing.key"), "key_file: open " + filepath.Join(dir, "missing.key")},
		{"a key that is not the certificate's", otherCert, key, "do not load as a pair"},
		{"the certificate as its own key", cert, cert, "do not load as a pair"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("PERCAUSE_OTLP_TOKEN", "test-token")
			t.Setenv("PERCAUSE_TLS_CERT_FILE", c.cert)
			t.Setenv("PERCAUSE_TLS_KEY_FILE", c.key)
			var out, errb bytes.Buffer
			code := runCollectorTo(context.Background(), []string{"validate", "--config", gateway}, &out, &errb)
			switch {
			case c.say == "" && code != 0:
				t.Fatalf("exit %d: %s", code, errb.String())
			case c.say != "" && code != 1:
				t.Fatalf("exit %d, want 1; stderr %q", code, errb.String())
			case c.say != "" && !strings.Contains(errb.String(), c.say):
				t.Fatalf("stderr %q, want it to say %q", errb.String(), c.say)
			}
		})
	}
}

func TestCheckTLSFilesCAFile(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSignedPair(t, dir, "ca")
	conf := func(ca string) map[string]any {
		return map[string]any{"exporters": map[string]any{"otlp": map[string]any{
			"endpoint": "x:4317", "tls": map[string]any{"ca_file": ca, "insecure": false}}}}
	}
	if err := checkTLSFiles(conf(cert)); err != nil {
		t.Errorf("a CA file with a certificate: %v", err)
	}
	if err := checkTLSFiles(conf("")); err != nil {
		t.Errorf("no CA file (the system's roots): %v", err)
	}
	if err := checkTLSFiles(conf(key)); err == nil || !strings.Contains(err.Error(), "exporters::otlp::tls::ca_file") {
		t.Errorf("a key as the CA file: %v, want an error naming the setting", err)
	}
}

// selfSignedPair writes a self-signed certificate for name and its key under
// dir and returns their paths.
func selfSignedPair(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
