package verdictexporter

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/confignet"
	"go.opentelemetry.io/collector/config/configoptional"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/leaf/loopback"
	"github.com/percause/percause/internal/page/verdictpage"
)

// Defaults.
const (
	// DefaultMaxMegabytes is the size at which the file is rotated.
	DefaultMaxMegabytes = 100
	// DefaultMaxBackups is how many rotated files are kept.
	DefaultMaxBackups = 3
	// DefaultRecent is how many recently written verdict span IDs are
	// remembered, so a verdict sent again is not written twice.
	DefaultRecent = 10000
	// tailRead is how much of the file's end is read at start, at least, to
	// remember the spans written last (unless `recent` of them are read
	// first): a verdict is sent again after a crash only if it was written
	// in the moment before the crash.
	tailRead = 4 << 20

	// DefaultPageEndpoint is where the page listens when `http:` names no
	// endpoint: loopback only.
	DefaultPageEndpoint = "127.0.0.1:9465"
	// DefaultKeepAge is how far back the page's store keeps turns and link
	// status changes (by the turn's time).
	DefaultKeepAge = 7 * 24 * time.Hour
	// DefaultKeepTurns bounds the turns the page's store keeps (about
	// 600 bytes each in memory; read back from the verdict file at start).
	DefaultKeepTurns = 10000
	// DefaultKeepLinkChanges bounds the link status changes it keeps.
	DefaultKeepLinkChanges = 2000
	// DefaultPageRefresh is how often the page reloads itself.
	DefaultPageRefresh = 30 * time.Second
	// DefaultPostBudget is the done reading's speech-end-to-post allowance.
	DefaultPostBudget = semconv.DefaultPostBudget
	// DefaultPageTurns is how many of the most recent turns the page lists.
	DefaultPageTurns = verdictpage.DefaultListed
)

// Configuration errors.
var (
	ErrNoPath              = errors.New("path must name the verdict file")
	ErrRotationNegative    = errors.New("rotation.max_megabytes and rotation.max_backups must not be negative")
	ErrRecentNotPositive   = errors.New("recent must be positive")
	ErrNoEndpoint          = errors.New("http.endpoint must name where the page listens")
	ErrExposedWithoutToken = errors.New("the page listens beyond loopback without an authenticator: set http.auth.authenticator (bearertokenauth, its token from the environment)")
	ErrKeepNotPositive     = errors.New("keep.age, keep.turns and keep.link_changes must be positive")
	ErrPageSettings        = errors.New("page.post_budget and page.turns must be positive, page.refresh not negative")
	ErrAlertmanagerURL     = errors.New("page.alertmanager must be an http or https URL with a host (Alertmanager's, e.g. http://127.0.0.1:9093), without user, password, query or fragment")
)

// Config is the verdict exporter's configuration.
type Config struct {
	// Path is the verdict file: OTLP/JSON lines, one per batch of verdicts
	// (or of link status changes).
	Path string `mapstructure:"path"`
	// Rotation bounds the file's size.
	Rotation RotationConfig `mapstructure:"rotation"`
	// Recent is how many recently written verdict span IDs are remembered
	// so a verdict delivered again is written once.
	Recent int `mapstructure:"recent"`
	// FSync flushes each line to the disk before the batch is accepted,
	// so a power loss loses no verdict whose stored turn was let go: set
	// it with shared_storage's fsync (both follow PERCAUSE_FSYNC).
	FSync bool `mapstructure:"fsync"`

	// HTTP serves the verdict page, with the collector's own HTTP server
	// settings (endpoint, tls, auth, …). Absent: no page, and nothing is
	// kept for one. `http:` with no endpoint listens on
	// DefaultPageEndpoint.
	HTTP configoptional.Optional[confighttp.ServerConfig] `mapstructure:"http"`
	// Keep bounds what the page's store holds: in memory, read back from
	// the verdict file at start.
	Keep KeepConfig `mapstructure:"keep"`
	// Page sets what the page shows.
	Page PageConfig `mapstructure:"page"`
}

// RotationConfig bounds the verdict file.
type RotationConfig struct {
	// MaxMegabytes: once the file reaches this size it is renamed to
	// PATH.1 (PATH.1 to PATH.2, …) and a new one is started; 0 never rotates.
	MaxMegabytes int `mapstructure:"max_megabytes"`
	// MaxBackups is how many rotated files are kept; older ones are removed.
	MaxBackups int `mapstructure:"max_backups"`
}

// KeepConfig bounds the page's store: whichever bound is reached first
// lets the oldest go.
type KeepConfig struct {
	// Age: turns and link changes older than this (by the turn's time)
	// are let go.
	Age time.Duration `mapstructure:"age"`
	// Turns is the most turns kept.
	Turns int `mapstructure:"turns"`
	// LinkChanges is the most link status changes kept.
	LinkChanges int `mapstructure:"link_changes"`
}

// PageConfig sets what the page shows.
type PageConfig struct {
	// PostBudget is the done reading's speech-end-to-post allowance.
	PostBudget time.Duration `mapstructure:"post_budget"`
	// Refresh is how often the page reloads itself; 0 never.
	Refresh time.Duration `mapstructure:"refresh"`
	// Turns is how many of the most recent turns (and link changes) the
	// page lists, a page of the list at a time.
	Turns int `mapstructure:"turns"`
	// Alertmanager is the base URL of the Alertmanager the alerts go to
	// ("" none): the page then lists what is firing, asking its API at
	// each rendering (AlertmanagerTimeout at most).
	Alertmanager string `mapstructure:"alertmanager"`
}

var _ component.Config = (*Config)(nil)

func defaultServerConfig() confighttp.ServerConfig {
	sc := confighttp.NewDefaultServerConfig()
	sc.NetAddr.Endpoint = DefaultPageEndpoint
	sc.NetAddr.Transport = confignet.TransportTypeTCP
	return sc
}

func createDefaultConfig() component.Config {
	return &Config{
		Rotation: RotationConfig{MaxMegabytes: DefaultMaxMegabytes, MaxBackups: DefaultMaxBackups},
		Recent:   DefaultRecent,
		HTTP:     configoptional.Default(defaultServerConfig()),
		Keep:     KeepConfig{Age: DefaultKeepAge, Turns: DefaultKeepTurns, LinkChanges: DefaultKeepLinkChanges},
		Page:     PageConfig{PostBudget: DefaultPostBudget, Refresh: DefaultPageRefresh, Turns: DefaultPageTurns},
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs error
	if c.Path == "" {
		errs = errors.Join(errs, ErrNoPath)
	}
	if c.Rotation.MaxMegabytes < 0 || c.Rotation.MaxBackups < 0 {
		errs = errors.Join(errs, fmt.Errorf("%w: max_megabytes %d, max_backups %d", ErrRotationNegative, c.Rotation.MaxMegabytes, c.Rotation.MaxBackups))
	}
	if c.Recent <= 0 {
		errs = errors.Join(errs, fmt.Errorf("%w: recent is %d", ErrRecentNotPositive, c.Recent))
	}
	if !c.HTTP.HasValue() {
		return errs
	}
	sc := c.HTTP.Get()
	switch {
	case sc.NetAddr.Endpoint == "":
		errs = errors.Join(errs, ErrNoEndpoint)
	case !sc.Auth.HasValue() && !loopback.Addr(sc.NetAddr):
		errs = errors.Join(errs, fmt.Errorf("%w (http.endpoint is %s)", ErrExposedWithoutToken, sc.NetAddr.Endpoint))
	}
	if c.Keep.Age <= 0 || c.Keep.Turns <= 0 || c.Keep.LinkChanges <= 0 {
		errs = errors.Join(errs, fmt.Errorf("%w: age %s, turns %d, link_changes %d", ErrKeepNotPositive, c.Keep.Age, c.Keep.Turns, c.Keep.LinkChanges))
	}
	if c.Page.PostBudget <= 0 || c.Page.Turns <= 0 || c.Page.Refresh < 0 {
		errs = errors.Join(errs, fmt.Errorf("%w: post_budget %s, turns %d, refresh %s", ErrPageSettings, c.Page.PostBudget, c.Page.Turns, c.Page.Refresh))
	}
	if c.Page.Alertmanager != "" && !alertmanagerURL(c.Page.Alertmanager) {
		errs = errors.Join(errs, fmt.Errorf("%w: got %q", ErrAlertmanagerURL, c.Page.Alertmanager))
	}
	return errs
}

// alertmanagerURL reports whether s can be Alertmanager's base URL: http
// or https, a host, a path at most (Alertmanager's --web.route-prefix),
// and no credentials, which would then be printed on errors.
func alertmanagerURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Hostname() != "" &&
		u.User == nil && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery
}
