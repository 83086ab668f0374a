package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/otelcol"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/internal/assembly/distro"
	"github.com/percause/percause/internal/leaf/envvars"
)

// version is the distribution's version, set at link time
// (-ldflags "-X main.version=…").
var version = "dev"

func init() {
	register(subcommand{
		name:    "collector",
		summary: "the collector distribution (otelcol flags and subcommands; --config FILE, default: embedded local.yaml)",
		run: func(ctx context.Context, args []string) int {
			return runCollectorTo(ctx, args, os.Stdout, os.Stderr)
		},
	})
}

// cobraDisplayName is cobra's CommandDisplayNameAnnotation: the name help
// and usage print for a command and in front of its subcommands' names.
const cobraDisplayName = "cobra_annotation_command_display_name"

// runCollectorTo hands the remaining arguments to otelcol's own command, so
// every collector flag and subcommand (validate, components, print-config,
// featuregate) works as in any distribution. Without --config it runs the
// embedded default. After otelcol's validate has passed, `validate` also
// checks the TLS files the configuration names (checkTLSFiles).
func runCollectorTo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var defaults []string
	if !hasConfigFlag(args) {
		defaults = []string{"yaml:" + string(collectorconfig.Local)}
	}
	set := distro.Settings(version, defaults...)
	cmd := otelcol.NewCommand(set)
	// cobra names a subcommand after the first word of its parent's Use, so
	// with Use "percause collector" help printed "percause validate".
	// Naming the command "collector" and displaying it as the distribution's
	// command makes it "percause collector validate".
	cmd.Use = "collector"
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[cobraDisplayName] = distro.Command
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.SilenceErrors = true // reported once, below
	markUsageErrors(cmd)
	addEnvironmentHelp(cmd)
	if sub := subcommandOf(args); (sub == "" || sub == "validate") && !asksHelp(args) && !slices.Contains(args, "--version") && !slices.Contains(args, "-v") {
		if err := checkListWords(os.Getenv, args, defaults); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", distro.Command, err)
			return exitFailed
		}
	}
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", distro.Command, err)
		var ue usageError
		if errors.As(err, &ue) {
			return exitUsage
		}
		return exitFailed
	}
	if subcommandOf(args) == "validate" && !asksHelp(args) {
		uris := configURIs(args)
		if len(uris) == 0 {
			uris = defaults
		}
		if err := checkConfigFiles(ctx, set, uris); err != nil {
			fmt.Fprintf(stderr, "%s validate: %v\n", distro.Command, err)
			return 1
		}
	}
	return 0
}

// addEnvironmentHelp ends the collector's own help (not its subcommands')
// with the PERCAUSE_* variables it reads, from envvars' table.
func addEnvironmentHelp(cmd *cobra.Command) {
	help := cmd.HelpFunc()
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		help(c, args)
		if c == cmd {
			envvars.Help(c.OutOrStdout(), "collector")
		}
	})
}

// checkListWords refuses, before the collector starts or validates, a word
// that a list-valued variable the configuration reads does not accept (a
// misspelt exporter in PERCAUSE_FORWARD_EXPORTERS): the collector's own
// error would name the pipeline, not the variable and its words. The
// configurations are the --config files and inline yaml: sources, else
// the embedded default; one that cannot be read is left to the collector.
func checkListWords(getenv func(string) string, args, defaults []string) error {
	uris := configURIs(args)
	if len(uris) == 0 {
		uris = defaults
	}
	var configs [][]byte
	for _, u := range uris {
		scheme, rest, ok := strings.Cut(u, ":")
		switch {
		case ok && scheme == "yaml":
			configs = append(configs, []byte(rest))
		case ok && scheme == "file":
			if b, err := os.ReadFile(rest); err == nil {
				configs = append(configs, b)
			}
		case !ok || len(scheme) == 1: // a path (C:\… on Windows)
			if b, err := os.ReadFile(u); err == nil {
				configs = append(configs, b)
			}
		}
	}
	return envvars.CheckRead(getenv, configs...)
}

// usageError is an error of how the collector was asked (an unknown
// subcommand or flag, a stray argument), told apart from one of running
// it: the one exits exitUsage, the other exitFailed.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// markUsageErrors makes cobra's argument and flag errors usageErrors, for
// cmd and every subcommand: cobra's own errors are untyped strings. A
// command that declares no argument rule takes none when it has
// subcommands (cobra's "unknown command") and any otherwise, as cobra's
// legacy rule does.
func markUsageErrors(cmd *cobra.Command) {
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	var mark func(c *cobra.Command)
	mark = func(c *cobra.Command) {
		check := c.Args
		if check == nil {
			check = cobra.ArbitraryArgs
			if c.HasSubCommands() {
				check = cobra.NoArgs
			}
		}
		c.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				return usageError{err}
			}
			return nil
		}
		for _, sub := range c.Commands() {
			mark(sub)
		}
	}
	mark(cmd)
}

// hasConfigFlag reports whether the arguments name a configuration.
func hasConfigFlag(args []string) bool { return len(configURIs(args)) > 0 }

// valueFlags are otelcol's flags that take a value.
var valueFlags = map[string]bool{"config": true, "set": true, "feature-gates": true}

// flagName is the name of a flag argument (without dashes and "=value"), and
// whether the value is in the same argument; "" when arg is not a flag.
func flagName(arg string) (name string, inline bool) {
	if len(arg) < 2 || arg[0] != '-' {
		return "", false
	}
	name = strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-")
	if n, _, ok := strings.Cut(name, "="); ok {
		return n, true
	}
	return name, false
}

// configURIs are the values of every --config in args.
func configURIs(args []string) []string {
	var uris []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		name, inline := flagName(a)
		if name != "config" {
			if valueFlags[name] && !inline {
				i++
			}
			continue
		}
		if inline {
			_, v, _ := strings.Cut(a, "=")
			uris = append(uris, v)
		} else if i+1 < len(args) {
			uris = append(uris, args[i+1])
			i++
		}
	}
	return uris
}

// subcommandOf is the first argument that is neither a flag nor a flag's
// value: the otelcol subcommand ("" when the collector is to run).
func subcommandOf(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return ""
		}
		name, inline := flagName(a)
		if name == "" {
			return a
		}
		if valueFlags[name] && !inline {
			i++
		}
	}
	return ""
}

func asksHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "--help" || a == "-help" {
			return true
		}
	}
	return false
}

// checkConfigFiles resolves the configuration the way the collector does
// (the same providers, environment variables expanded) and checks the TLS
// files it names: otelcol's validate passes with certificate paths that do
// not exist, and the collector would then fail only when it starts
// (docs/decisions/0208-validate-reads-the-tls-files.md). --set overrides
// are not applied here.
func checkConfigFiles(ctx context.Context, set otelcol.CollectorSettings, uris []string) error {
	rs := set.ConfigProviderSettings.ResolverSettings
	rs.URIs = uris
	if rs.DefaultScheme == "" {
		rs.DefaultScheme = "env"
	}
	r, err := confmap.NewResolver(rs)
	if err != nil {
		return err
	}
	defer func() { _ = r.Shutdown(ctx) }()
	conf, err := r.Resolve(ctx)
	if err != nil {
		return err
	}
	return checkTLSFiles(conf.ToStringMap())
}

// tlsFileKeys are the file settings of the collector's TLS configuration.
var tlsFileKeys = []string{"ca_file", "client_ca_file", "cert_file", "key_file"}

// checkTLSFiles walks a resolved configuration and, wherever a section names
// TLS files, checks that each can be read, that a certificate and its key
// load as a pair, and that a CA file holds at least one PEM certificate.
// Empty settings are skipped (they mean "none" or "the system's roots").
func checkTLSFiles(conf map[string]any) error {
	var errs []error
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			errs = append(errs, checkTLSSection(path, v)...)
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(join(path, k), v[k])
			}
		case []any:
			for i, e := range v {
				walk(join(path, fmt.Sprint(i)), e)
			}
		}
	}
	walk("", conf)
	return errors.Join(errs...)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "::" + key
}

func checkTLSSection(path string, section map[string]any) []error {
	files := map[string]string{}
	for _, k := range tlsFileKeys {
		if s, ok := section[k].(string); ok && s != "" {
			files[k] = s
		}
	}
	var errs []error
	for _, k := range tlsFileKeys {
		f, ok := files[k]
		if !ok {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", join(path, k), err))
			delete(files, k)
			continue
		}
		if (k == "ca_file" || k == "client_ca_file") && !x509.NewCertPool().AppendCertsFromPEM(b) {
			errs = append(errs, fmt.Errorf("%s: %s holds no PEM certificate", join(path, k), f))
		}
	}
	cert, hasCert := files["cert_file"]
	key, hasKey := files["key_file"]
	if hasCert && hasKey {
		if _, err := tls.LoadX509KeyPair(cert, key); err != nil {
			errs = append(errs, fmt.Errorf("%s: the certificate %s and the key %s do not load as a pair: %w", path, cert, key, err))
		}
	}
	return errs
}
