// Package envvars is the one table of the PERCAUSE_* environment variables
// (Table): for each, its default, what it sets, the percause commands that
// read it (Commands) and the shipped configurations that read it with
// ${env:…}. Every command's --help lists its own from it (Help), and
// docs/environment.md is generated from it (Markdown; `go test
// ./internal/leaf/envvars -run TestEnvironmentDoc -update` rewrites it).
// Its tests fail when Go code or a configuration reads a PERCAUSE_*
// variable the table does not list, and when the table lists one nothing
// reads.
//
// A list-valued variable with words the table knows is checked at start
// (CheckWords): a word it does not accept, a misspelt "otpl", is refused by
// name with the words it accepts, rather than ignored.
//
// It imports nothing of this module: the constants the packages read
// (collectorconfig.Env*, up.Env*, …) stay beside their readers, and the
// tests hold them to this table.
package envvars

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// DocPath is the generated reference, from the repository's root.
const DocPath = "docs/environment.md"

// A Var is one PERCAUSE_* variable.
type Var struct {
	Name string
	// Default is the value an unset variable stands for, as the commands
	// and the embedded default (collector-config/local.yaml) take it; a
	// shipped configuration that takes another says so after it, in
	// parentheses. Empty when unset means none: then Unset says what.
	Default string
	// Unset is what an unset variable means when it has no Default.
	Unset string
	// Means is what it sets, in a phrase.
	Means string
	// List is how a list-valued variable is written (NotAList otherwise).
	List List
	// Words are the words a list accepts, when the table knows them; each
	// may name an instance ("otlp/2") when Instances is set.
	Words     []string
	Instances bool
	// Commands are the percause commands that read it, themselves or in
	// the collector they start (Commands has each command's own wording).
	Commands []string
	// Configs are the shipped configurations that read it with ${env:…},
	// by their paths from the repository's root.
	Configs []string
	// Others names who else reads it (Grafana, the tests).
	Others string
}

// List is how a list-valued variable is written.
type List int

const (
	NotAList List = iota
	// Commas: words separated by commas ("otlp,prometheus").
	Commas
	// YAMLList: a YAML flow list ("[otlphttp/traces, nop]").
	YAMLList
)

// A Command is a percause command that reads variables of the table, with
// what its help says of them.
type Command struct {
	Name string
	// Reads completes "environment: …": how the command reads them.
	Reads string
	// Configs: its help also lists what each shipped configuration reads
	// beyond the command's own (the collector's --config).
	Configs bool
}

// Lookup is the table's row for name.
func Lookup(name string) (Var, bool) {
	for _, v := range Table {
		if v.Name == name {
			return v, true
		}
	}
	return Var{}, false
}

// ForCommand is, in the table's order, every variable the command reads.
func ForCommand(name string) []Var {
	return rowsWhere(func(v Var) bool { return slices.Contains(v.Commands, name) })
}

// ForConfig is, in the table's order, every variable the configuration
// (its path from the repository's root) reads.
func ForConfig(path string) []Var {
	return rowsWhere(func(v Var) bool { return slices.Contains(v.Configs, path) })
}

// rowsWhere is, in the table's order, every row keep keeps.
func rowsWhere(keep func(Var) bool) []Var {
	var out []Var
	for _, v := range Table {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

func command(name string) (Command, bool) {
	for _, c := range Commands {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// Accepts describes the words a list accepts: "nop, otlphttp/traces".
func (v Var) Accepts() string {
	s := strings.Join(v.Words, ", ")
	if v.Instances {
		s += " (each may name an instance: " + v.Words[0] + "/NAME)"
	}
	return s
}

// Help writes, for a command's --help, the variables it reads from the
// table, each with its default; nothing for a command that reads none.
func Help(w io.Writer, commandName string) {
	c, ok := command(commandName)
	if !ok {
		return
	}
	fmt.Fprintf(w, "\nenvironment: %s (%s has every PERCAUSE_* variable):\n", c.Reads, DocPath)
	own := ForCommand(commandName)
	for _, v := range own {
		if v.Default != "" {
			fmt.Fprintf(w, "  %s=%s\n", v.Name, v.Default)
		} else {
			fmt.Fprintf(w, "  %s  (unset: %s)\n", v.Name, v.Unset)
		}
		fmt.Fprintf(w, "        %s\n", v.meansWithWords())
	}
	if !c.Configs {
		return
	}
	fmt.Fprintln(w, "  with --config, a shipped configuration reads these too:")
	for _, path := range ShippedConfigs {
		var more []string
		for _, v := range ForConfig(path) {
			if !slices.Contains(v.Commands, commandName) {
				more = append(more, v.Name)
			}
		}
		if len(more) > 0 {
			fmt.Fprintf(w, "    %s%s: %s\n", path, configNote(path), strings.Join(more, ", "))
		}
	}
}

// configNote is " (who runs it)" for a configuration the collector does
// not run as shipped, "" otherwise.
func configNote(path string) string {
	if n, ok := configNotes[path]; ok {
		return " (" + n + ")"
	}
	return ""
}

// meansWithWords is Means, with the words a list accepts.
func (v Var) meansWithWords() string {
	if len(v.Words) == 0 {
		return v.Means
	}
	return v.Means + "; accepts " + v.Accepts()
}

// Words splits a list-valued variable's value into its words: a YAML flow
// list's brackets taken off, split at commas, each word trimmed of spaces
// (and of a YAML list's quotes), empty ones dropped.
func Words(value string) []string {
	s := strings.TrimSpace(value)
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	var out []string
	for w := range strings.SplitSeq(s, ",") {
		w = strings.Trim(strings.TrimSpace(w), `"'`)
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// CheckWords refuses a value of the list-valued variable name with a word
// the table's row does not accept: the error names every such word and the
// words it accepts. A variable without words in the table accepts any.
func CheckWords(name, value string) error { return CheckList(name, Words(value)) }

// CheckList is CheckWords on the words of a value already split.
func CheckList(name string, words []string) error {
	v, ok := Lookup(name)
	if !ok || len(v.Words) == 0 {
		return nil
	}
	var unknown []string
	for _, w := range words {
		if !v.accepts(w) {
			unknown = append(unknown, strconv.Quote(w))
		}
	}
	switch len(unknown) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%s: %s is not a word it accepts; it accepts %s", name, unknown[0], v.Accepts())
	}
	return fmt.Errorf("%s: %s are not words it accepts; it accepts %s", name, strings.Join(unknown, ", "), v.Accepts())
}

func (v Var) accepts(w string) bool {
	if slices.Contains(v.Words, w) {
		return true
	}
	// An instance's name is the component's to check ("otlp/" is not an ID).
	base, _, ok := strings.Cut(w, "/")
	return v.Instances && ok && slices.Contains(v.Words, base)
}

// CheckRead checks, with CheckWords, the value getenv gives each variable
// with words that a configuration reads (configs: their text; a variable
// is read where ${env:NAME} or ${env:NAME:-…} appears).
func CheckRead(getenv func(string) string, configs ...[]byte) error {
	var errs []error
	for _, v := range Table {
		if len(v.Words) == 0 || !readIn(v.Name, configs) {
			continue
		}
		if val := getenv(v.Name); val != "" {
			if err := CheckWords(v.Name, val); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func readIn(name string, configs [][]byte) bool {
	for _, c := range configs {
		s := string(c)
		for _, end := range []string{"}", ":-"} {
			if strings.Contains(s, "${env:"+name+end) {
				return true
			}
		}
	}
	return false
}
