package envvars

import (
	"bytes"
	"fmt"
	"strings"
)

// Markdown is docs/environment.md, from the table.
func Markdown() []byte {
	var b bytes.Buffer
	b.WriteString("# The PERCAUSE_* environment variables\n\n")
	b.WriteString("<!-- Generated from internal/leaf/envvars (Table, Markdown) by `go test ./internal/leaf/envvars -run TestEnvironmentDoc -update`. Do not edit by hand. -->\n\n")
	b.WriteString("Every `PERCAUSE_*` variable a percause command, a shipped configuration, Grafana or the tests read, from the one\n")
	b.WriteString("table in `internal/leaf/envvars`. Each command's `--help` lists its own from the same table. Unset, a variable\n")
	b.WriteString("takes its default. A list-valued variable whose words are listed here refuses, at start, a word it does not\n")
	b.WriteString("accept, naming it and the words it accepts.\n\n")
	b.WriteString("## By command\n\n")
	b.WriteString("| command | reads |\n|---|---|\n")
	for _, c := range Commands {
		var names []string
		for _, v := range ForCommand(c.Name) {
			names = append(names, "`"+v.Name+"`")
		}
		fmt.Fprintf(&b, "| `percause %s` | %s: %s |\n", c.Name, cell(c.Reads), strings.Join(names, ", "))
	}
	b.WriteString("\nThe other commands (`check`, `poolsim`) read none.\n\n")
	b.WriteString("## By configuration\n\n")
	b.WriteString("| configuration | reads |\n|---|---|\n")
	for _, path := range ShippedConfigs {
		var names []string
		for _, v := range ForConfig(path) {
			names = append(names, "`"+v.Name+"`")
		}
		fmt.Fprintf(&b, "| `%s`%s | %s |\n", path, configNote(path), strings.Join(names, ", "))
	}
	b.WriteString("\n## Every variable\n\n")
	b.WriteString("| variable | unset | what it sets | read by |\n|---|---|---|---|\n")
	for _, v := range Table {
		unset := "`" + v.Default + "`"
		if v.Default == "" {
			unset = cell(v.Unset)
		}
		means := cell(v.Means)
		if len(v.Words) > 0 {
			means += "; accepts " + cell(v.Accepts())
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", v.Name, unset, means, cell(v.readBy()))
	}
	return b.Bytes()
}

// readBy names every reader of v: its commands, its configurations, the others.
func (v Var) readBy() string {
	var parts []string
	for _, c := range v.Commands {
		parts = append(parts, "percause "+c)
	}
	parts = append(parts, v.Configs...)
	if v.Others != "" {
		parts = append(parts, v.Others)
	}
	return strings.Join(parts, ", ")
}

// cell is s fit for a Markdown table's cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
