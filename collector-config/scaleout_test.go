package collectorconfig_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// The scale-out of gateway.yaml and agent.yaml, through the real binary
// (docs/decisions/0242-scale-out-by-trace-then-by-launch.md). The agents'
// routes are the upstream contrib distribution's and are checked by
// TestAgentRoutesByTraceThenByLaunch; here the gateways run, and the test
// is the agent: it sends each turn's spans to the gateway routing by trace
// ID would pick, and the join gateways send their joined turns straight to
// one deciding gateway (gateway.yaml's setting without agents in between).

const scaleToken = "scale-out-test-token"

// launchTurn is one turn of a launch as the app's own lines and most
// clients report it: the pool tally and the players count as they stand
// now, no .before history.
type launchTurn struct {
	index, pool, players int64
	cause                string
}

// oneLaunch is the launch: pool_reset 0, 0, 2, 2 and players 1, 2, 3, 4.
// Read against its earlier turns, turn 3's tally moved (pool) and turn 4's
// count rose on each of the last 3 turns (state).
var oneLaunch = []launchTurn{
	{1, 0, 1, semconv.CauseNone},
	{2, 0, 2, semconv.CauseNone},
	{3, 2, 3, semconv.CausePool},
	{4, 2, 4, semconv.CauseState},
}

// scaleGateway is a collector running gateway.yaml on loopback.
type scaleGateway struct {
	*testenv.Collector
	join       string // the join stage's OTLP/gRPC way in, host:port
	decideGRPC string // the decide stage's, from agents
	decideHTTP string // the decide stage's, straight from join gateways
}

// startScaleGateway starts gateway.yaml with a throwaway TLS pair (dir's),
// sending its joined turns to joinedTo (an https URL).
func startScaleGateway(t *testing.T, certFile, keyFile, joinedTo string) *scaleGateway {
	t.Helper()
	addr := func() string { return fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)) }
	g := &scaleGateway{join: addr(), decideGRPC: addr(), decideHTTP: addr()}
	g.Collector = testenv.StartCollector(t,
		testenv.WithCollectorConfig(filepath.Join(testenv.RepoRoot(), "collector-config", "gateway.yaml")),
		testenv.WithCollectorEnv("PERCAUSE_OTLP_TOKEN", scaleToken),
		testenv.WithCollectorEnv("PERCAUSE_TLS_CERT_FILE", certFile),
		testenv.WithCollectorEnv("PERCAUSE_TLS_KEY_FILE", keyFile),
		testenv.WithCollectorEnv("PERCAUSE_OTLP_GRPC_ENDPOINT", g.join),
		testenv.WithCollectorEnv("PERCAUSE_JOINED_GRPC_ENDPOINT", g.decideGRPC),
		testenv.WithCollectorEnv("PERCAUSE_JOINED_HTTP_ENDPOINT", g.decideHTTP),
		testenv.WithCollectorEnv("PERCAUSE_JOINED_ENDPOINT", joinedTo),
		testenv.WithCollectorEnv("PERCAUSE_TLS_CA_FILE", certFile),
		testenv.WithCollectorEnv("PERCAUSE_JOINED_TLS_NAME", gatewayTLSName),
		testenv.WithCollectorEnv("PERCAUSE_TELEMETRY_HOST", "127.0.0.1"),
		// Nobody listens there: the raw traces wait in the disk queue.
		testenv.WithCollectorEnv("PERCAUSE_TRACES_ENDPOINT", fmt.Sprintf("http://127.0.0.1:%d", testenv.FreePort(t))),
	)
	return g
}

// exportAsAgent sends td to addr as an agent's load-balancing exporter
// does: OTLP/gRPC over TLS with the bearer token.
func exportAsAgent(t *testing.T, pool *x509.CertPool, addr string, td ptrace.Traces) {
	t.Helper()
	cc, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: gatewayTLSName, MinVersion: tls.VersionTLS12})),
		grpc.WithPerRPCCredentials(bearer(scaleToken)))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := ptraceotlp.NewGRPCClient(cc).Export(ctx, ptraceotlp.NewExportRequestFromTraces(td)); err != nil {
		t.Fatalf("export to %s: %v", addr, err)
	}
}

// turnRequests are turn lt's two requests, as a phone and an engine send
// them: the phone's voice.turn and its one unit under the phone's resource
// (the launch), the engine's take under the engine's, in a trace of the
// turn's own.
func turnRequests(lt launchTurn) (phone, engine ptrace.Traces) {
	return launchTurnRequests(lt, "install-of-the-scale-out-test", "launch-of-the-scale-out-test")
}

// launchTurnRequests is turnRequests for the launch of an installation.
func launchTurnRequests(lt launchTurn, installation, launch string) (phone, engine ptrace.Traces) {
	var trace pcommon.TraceID
	_, _ = rand.Read(trace[:])
	span := func(rs ptrace.ResourceSpans, name string, id byte, attrs map[string]any) {
		s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		s.SetTraceID(trace)
		s.SetSpanID(pcommon.SpanID{0xAB, 0, 0, 0, 0, 0, 0, id})
		if id != 1 {
			s.SetParentSpanID(pcommon.SpanID{0xAB, 0, 0, 0, 0, 0, 0, 1})
		}
		s.SetName(name)
		now := time.Now()
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-3 * time.Second)))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
		if err := s.Attributes().FromRaw(attrs); err != nil {
			panic(err)
		}
	}
	phone = ptrace.NewTraces()
	rs := phone.ResourceSpans().AppendEmpty()
	_ = rs.Resource().Attributes().FromRaw(map[string]any{
		semconv.ServiceName: semconv.ServicePhone, semconv.ServiceInstanceID: launch,
		semconv.AppInstallationID: installation,
	})
	span(rs, semconv.SpanVoiceTurn, 1, map[string]any{
		semconv.TurnIndex: lt.index, semconv.TurnUnits: int64(1), semconv.NetworkConnectionType: semconv.LinkWifi,
		semconv.PoolResets: lt.pool, semconv.LiveAttr(semconv.LivePlayers): lt.players,
	})
	span(rs, semconv.SpanVoiceUnit, 2, map[string]any{
		semconv.UnitIndex: int64(1), semconv.TakeID: "t1", semconv.UnitUnderruns: int64(0),
		semconv.UnitCushion: 1.5, semconv.UnitLead: 0.2,
	})
	engine = ptrace.NewTraces()
	rs = engine.ResourceSpans().AppendEmpty()
	_ = rs.Resource().Attributes().FromRaw(map[string]any{semconv.ServiceName: semconv.ServiceEngine, semconv.ServiceInstanceID: "engine-1"})
	span(rs, semconv.SpanTTSTake, 3, map[string]any{semconv.TakeID: "t1", semconv.TakeNeed: 0.3, semconv.TakeFirstByte: 0.2})
	return phone, engine
}

var causeLabel = regexp.MustCompile(`percause_cause="([^"]*)"`)

// turnsByCause scrapes percause_turns_total of a gateway, with the token
// Prometheus presents, by cause.
func turnsByCause(t *testing.T, g *scaleGateway) map[string]int {
	t.Helper()
	return scrapeTurnsByCause(t, g.PromURL, scaleToken)
}

// scrapeTurnsByCause scrapes percause_turns_total at url, by cause,
// presenting token unless it is empty.
func scrapeTurnsByCause(t *testing.T, url, token string) map[string]int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s", url, resp.Status)
	}
	out := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "percause_turns_total{") {
			continue
		}
		m := causeLabel.FindStringSubmatch(line)
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if m == nil || err != nil {
			t.Fatalf("cannot read %q", line)
		}
		out[m[1]] += int(v)
	}
	return out
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestScaleOutKeepsALaunchTogether: two join gateways feed one deciding
// gateway, all three on gateway.yaml. One launch's four turns, each its own
// trace, without history of their own, go alternately to the two join
// gateways (as routing by trace ID spreads them), each turn as two
// requests, the phone's and the engine's (the engine's first on even
// turns). The deciding gateway reads every turn against the launch's
// earlier ones: its verdicts, turn by turn, are none, none, pool, state.
func TestScaleOutKeepsALaunchTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary three times")
	}
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir, gatewayTLSName)
	decide := startScaleGateway(t, certFile, keyFile, fmt.Sprintf("https://127.0.0.1:%d", testenv.FreePort(t)))
	joinedTo := "https://" + decide.decideHTTP
	joins := []*scaleGateway{startScaleGateway(t, certFile, keyFile, joinedTo), startScaleGateway(t, certFile, keyFile, joinedTo)}

	var got []string
	for i, lt := range oneLaunch {
		before := turnsByCause(t, decide)
		phone, engine := turnRequests(lt)
		first, second := phone, engine
		if i%2 == 1 {
			first, second = engine, phone
		}
		join := joins[i%2]
		exportAsAgent(t, pool, join.join, first)
		exportAsAgent(t, pool, join.join, second)
		var after map[string]int
		testenv.WaitFor(t, 30*time.Second, fmt.Sprintf("turn %d's verdict at the deciding gateway", lt.index), func() bool {
			after = turnsByCause(t, decide)
			return sum(after) > sum(before)
		})
		cause := ""
		for c, n := range after {
			if n > before[c] {
				cause = c
			}
		}
		if sum(after) != sum(before)+1 {
			t.Fatalf("turn %d: counts went from %v to %v, want one more verdict", lt.index, before, after)
		}
		got = append(got, cause)
	}
	var want []string
	for _, lt := range oneLaunch {
		want = append(want, lt.cause)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("verdicts %v, want %v", got, want)
	}
	for _, j := range joins {
		if n := sum(turnsByCause(t, j)); n != 0 {
			t.Errorf("a join gateway counted %d verdicts of its own", n)
		}
	}
}

// TestScaleOutByTraceAloneSplitsALaunch is the shape the two stages
// replace, and what TestScaleOutKeepsALaunchTogether would see without the
// join: the same sends straight into two gateways' deciding pipeline, as
// gateways routed by trace ID alone decided. Neither sees any turn's
// previous turn but the first's, so each later turn is decided after its
// wait without it, and pool and state are missed: four times none.
func TestScaleOutByTraceAloneSplitsALaunch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary twice")
	}
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir, gatewayTLSName)
	nowhere := fmt.Sprintf("https://127.0.0.1:%d", testenv.FreePort(t))
	gws := []*scaleGateway{startScaleGateway(t, certFile, keyFile, nowhere), startScaleGateway(t, certFile, keyFile, nowhere)}
	for i, lt := range oneLaunch {
		phone, engine := turnRequests(lt)
		exportAsAgent(t, pool, gws[i%2].decideGRPC, phone)
		exportAsAgent(t, pool, gws[i%2].decideGRPC, engine)
	}
	all := map[string]int{}
	testenv.WaitFor(t, 60*time.Second, "a verdict for each of the four turns", func() bool {
		all = map[string]int{}
		for _, g := range gws {
			for c, n := range turnsByCause(t, g) {
				all[c] += n
			}
		}
		return sum(all) >= len(oneLaunch)
	})
	if all[semconv.CauseNone] != len(oneLaunch) {
		t.Fatalf("verdicts by cause %v: want none for all %d turns (each gateway saw half the launch)", all, len(oneLaunch))
	}
}
