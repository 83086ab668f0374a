package collectorconfig_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// gatewayTLSName is the name agent.yaml checks on the gateways' certificates
// by default (PERCAUSE_GATEWAY_TLS_NAME).
const gatewayTLSName = "percause-gateway"

// bearer is a gRPC per-call credential carrying a bearer token, as the
// agent's bearertokenauth client sends it. Like that one, it requires a
// secure transport.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (bearer) RequireTransportSecurity() bool { return true }

// TestGatewayTokenOverTLS starts the real collector on gateway.yaml and
// exports to it the way an agent does: OTLP/gRPC with a bearer token. Over
// TLS with the token it is accepted; without the token it is refused; and a
// plaintext connection (what agent.yaml once configured) cannot carry the
// token at all. Its Prometheus endpoint answers a scrape only with the
// token.
func TestGatewayTokenOverTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir, gatewayTLSName)
	const token = "gateway-test-token"
	grpcAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	col := testenv.StartCollector(t,
		testenv.WithCollectorConfig(filepath.Join(testenv.RepoRoot(), "collector-config", "gateway.yaml")),
		testenv.WithCollectorEnv("PERCAUSE_OTLP_TOKEN", token),
		testenv.WithCollectorEnv("PERCAUSE_TLS_CERT_FILE", certFile),
		testenv.WithCollectorEnv("PERCAUSE_TLS_KEY_FILE", keyFile),
		testenv.WithCollectorEnv("PERCAUSE_OTLP_GRPC_ENDPOINT", grpcAddr),
		testenv.WithCollectorEnv("PERCAUSE_TELEMETRY_HOST", "127.0.0.1"),
		// Nobody listens there: the traces wait in the disk queue.
		testenv.WithCollectorEnv("PERCAUSE_TRACES_ENDPOINT", fmt.Sprintf("http://127.0.0.1:%d", testenv.FreePort(t))),
	)

	export := func(opts ...grpc.DialOption) error {
		cc, err := grpc.NewClient(grpcAddr, opts...)
		if err != nil {
			return err
		}
		defer cc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr(semconv.ServiceName, semconv.ServicePhone)
		span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		span.SetName(semconv.SpanVoiceTurn)
		span.SetTraceID([16]byte{1, 2, 3})
		span.SetSpanID([8]byte{4, 5, 6})
		_, err = ptraceotlp.NewGRPCClient(cc).Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
		return err
	}
	overTLS := grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: gatewayTLSName, MinVersion: tls.VersionTLS12}))

	if err := export(overTLS, grpc.WithPerRPCCredentials(bearer(token))); err != nil {
		t.Fatalf("export over TLS with the token: %v", err)
	}
	if err := export(overTLS, grpc.WithPerRPCCredentials(bearer("wrong-token"))); status.Code(err) != codes.Unauthenticated {
		t.Errorf("export with a wrong token: %v, want Unauthenticated", err)
	}
	if err := export(overTLS); status.Code(err) != codes.Unauthenticated {
		t.Errorf("export without a token: %v, want Unauthenticated", err)
	}
	err := export(grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(bearer(token)))
	if err == nil || !strings.Contains(err.Error(), "transport") {
		t.Errorf("a token over plaintext: %v, want the client to refuse (gRPC sends tokens over a secure transport only)", err)
	}

	// Prometheus scrapes the verdict counters with the same token.
	scrape := func(authorization string) int {
		req, err := http.NewRequest(http.MethodGet, col.PromURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, a := range []string{"", "Bearer wrong-token"} {
		if code := scrape(a); code != http.StatusUnauthorized {
			t.Errorf("scrape with Authorization %q: %d, want 401", a, code)
		}
	}
	if code := scrape("Bearer " + token); code != http.StatusOK {
		t.Errorf("scrape with the token: %d, want 200", code)
	}
}

// selfSigned writes a self-signed certificate for name and its key under
// dir, and returns their paths and a pool trusting the certificate.
func selfSigned(t *testing.T, dir, name string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		DNSNames:              []string{name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "gateway.crt"), filepath.Join(dir, "gateway.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
