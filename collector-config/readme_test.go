package collectorconfig_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/percause/percause/internal/testsupport/testenv"
)

// readmeGatewayValidate is the README command this file keeps working.
const readmeGatewayValidate = "collector validate --config collector-config/gateway.yaml"

// shellCommands returns the commands of the README's sh blocks, one per
// logical line (continuation lines joined, comments dropped).
func shellCommands(readme string) []string {
	var cmds []string
	inBlock := false
	var cur strings.Builder
	for _, line := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			inBlock = true
			continue
		case strings.HasPrefix(line, "```"):
			inBlock = false
			continue
		case !inBlock:
			continue
		}
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if body, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur.WriteString(body)
			continue
		}
		cur.WriteString(trimmed)
		cmds = append(cmds, cur.String())
		cur.Reset()
	}
	return cmds
}

// envOfCommand returns the VAR=value assignments a shell command starts with.
func envOfCommand(cmd string) map[string]string {
	env := map[string]string{}
	for _, f := range strings.Fields(cmd) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" || strings.ToUpper(k) != k || strings.ContainsAny(k, "-/.") {
			break
		}
		env[k] = v
	}
	return env
}

// TestReadmeGatewayValidate runs the README's gateway validation as written:
// the command that makes the throwaway TLS pair, then the validate command
// with its environment, with bash in a folder laid out like a checkout
// (collector-config/ and bin/percause), and nothing from this test's own
// environment beginning with PERCAUSE_. Without the pair the same command
// must fail, so the README's first step is needed and validate checks it.
// The pair is made by the README's openssl command itself: without openssl
// the test fails.
func TestReadmeGatewayValidate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	readme, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var validate, makePair string
	for _, c := range shellCommands(string(readme)) {
		if strings.Contains(c, readmeGatewayValidate) {
			validate = c
		}
		if strings.Contains(c, "openssl req") && strings.Contains(c, "gateway") {
			makePair = c
		}
	}
	if validate == "" {
		t.Fatalf("the README has no %q command", readmeGatewayValidate)
	}
	env := envOfCommand(validate)
	for _, k := range []string{"PERCAUSE_OTLP_TOKEN", "PERCAUSE_TLS_CERT_FILE", "PERCAUSE_TLS_KEY_FILE"} {
		if env[k] == "" {
			t.Errorf("the README's validate command does not set %s: %s", k, validate)
		}
	}
	if makePair == "" {
		t.Fatal("the README does not say how to make the gateway's TLS pair")
	}

	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		filepath.Join(work, "bin", "percause"):  testenv.PercauseBin(t),
		filepath.Join(work, "collector-config"): filepath.Join(testenv.RepoRoot(), "collector-config"),
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	var clean []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PERCAUSE_") {
			clean = append(clean, kv)
		}
	}
	sh := func(command string) (string, error) {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", command)
		cmd.Dir = work
		cmd.Env = clean
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}

	if out, err := sh(validate); err == nil {
		t.Fatalf("validate passed before the TLS pair was made:\n%s", out)
	} else if !strings.Contains(out, "cert_file") {
		t.Errorf("validate without the pair failed, but not on the certificate:\n%s", out)
	}
	// The README's command makes the pair, as written: a Go-made pair in
	// its place would let the command rot unseen.
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatalf("openssl is not on the PATH, and the README's command for the TLS pair needs it (apt-get install openssl; .ci/run installs it): %s", makePair)
	}
	if out, err := sh(makePair); err != nil {
		t.Fatalf("the README's command for the TLS pair: %v\n%s", err, out)
	}
	if out, err := sh(validate); err != nil {
		t.Fatalf("the README's command, as written:\n%s\n%v\n%s", validate, err, out)
	}
}

func TestShellCommands(t *testing.T) {
	readme := "text\n```sh\n# a comment\nmake demo    # trailing\nA=1 B=2 \\\n  ./bin/x run \\\n  --flag\n\n```\n```go\nnot = shell\n```\n"
	got := shellCommands(readme)
	want := []string{"make demo    # trailing", "A=1 B=2 ./bin/x run --flag"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("shellCommands = %q, want %q", got, want)
	}
	if env := envOfCommand(got[1]); env["A"] != "1" || env["B"] != "2" || len(env) != 2 {
		t.Fatalf("envOfCommand = %v", env)
	}
}
