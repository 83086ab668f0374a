package up

import (
	"fmt"
	"os"
	"strings"
)

// The names each binary goes by on PATH, in the order they are tried:
// upstream's and Homebrew's alertmanager, then Debian's package name.
var (
	prometheusNames   = []string{"prometheus"}
	alertmanagerNames = []string{"alertmanager", "prometheus-alertmanager"}
)

// Install commands, printed when a binary is missing.
const (
	installDebian = "sudo apt-get install prometheus prometheus-alertmanager"
	installMacOS  = "brew install prometheus alertmanager"
)

// MissingError says which binaries were not found and how to install them.
// `percause up` never runs without alerts: it exits 2 instead.
type MissingError struct {
	// Missing names each missing binary with what was looked for.
	Missing []string
}

func (e *MissingError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "alerts need Prometheus and Alertmanager; not found: %s. Install them:\n", strings.Join(e.Missing, "; "))
	fmt.Fprintf(&b, "  Debian, Ubuntu:    %s\n", installDebian)
	fmt.Fprintf(&b, "  macOS (Homebrew):  %s\n", installMacOS)
	b.WriteString("  or name them: percause up --prometheus PATH --alertmanager PATH")
	return b.String()
}

// FindBinaries returns the Prometheus and Alertmanager binaries: the given
// paths (from flags) when set, each checked to be an executable file;
// otherwise the first of their names lookPath (exec.LookPath) finds.
func FindBinaries(prometheus, alertmanager string, lookPath func(string) (string, error)) (promBin, amBin string, err error) {
	var missing []string
	find := func(given, flag string, names []string) string {
		if given != "" {
			if st, err := os.Stat(given); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
				missing = append(missing, fmt.Sprintf("--%s %s (not an executable file)", flag, given))
				return ""
			}
			return given
		}
		for _, n := range names {
			if p, err := lookPath(n); err == nil {
				return p
			}
		}
		missing = append(missing, fmt.Sprintf("%s (looked for %s on PATH)", flag, strings.Join(names, ", ")))
		return ""
	}
	promBin = find(prometheus, "prometheus", prometheusNames)
	amBin = find(alertmanager, "alertmanager", alertmanagerNames)
	if len(missing) > 0 {
		return "", "", &MissingError{Missing: missing}
	}
	return promBin, amBin, nil
}
