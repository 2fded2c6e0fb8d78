package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"strings"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/envnames"
	"github.com/pulka/pulka/services/gateway/internal/auth"
	"github.com/pulka/pulka/services/gateway/internal/connlimit"
	"github.com/pulka/pulka/services/gateway/internal/hub"
)

// Environment variables of the gateway (besides daemon's PULKA_REDIS_* etc.);
// those a launcher or a test sets are named in pkg/envnames.
const (
	EnvHTTPAddr        = envnames.GatewayAddr
	EnvSessionSecret   = envnames.SessionSecret           // environment only
	EnvPreviousSecrets = "PULKA_SESSION_PREVIOUS_SECRETS" // environment only, comma-separated
	EnvSessionTTL      = "PULKA_SESSION_TTL"
	EnvCookieSecure    = "PULKA_COOKIE_SECURE"
	EnvCookieDomain    = "PULKA_COOKIE_DOMAIN"
	EnvAllowedOrigins  = envnames.AllowedOrigins
	EnvTrustedProxies  = "PULKA_TRUSTED_PROXIES"
	EnvStaticDir       = "PULKA_STATIC_DIR"
	EnvInstance        = envnames.GatewayInstance
	EnvLobbyTimeout    = "PULKA_LOBBY_TIMEOUT"
	EnvLoginPerIP      = envnames.LoginPerIP
	EnvLoginPerAccount = "PULKA_LOGIN_PER_ACCOUNT"
	EnvLoginPerAcctIP  = envnames.LoginPerAccountIP
	EnvLoginKnownFor   = "PULKA_LOGIN_KNOWN_FOR"
	EnvLoginWindow     = "PULKA_LOGIN_WINDOW"
	EnvSignupsPerIP    = envnames.SignupsPerIP
	EnvSignupWindow    = "PULKA_SIGNUP_WINDOW"
	EnvHashConcurrency = "PULKA_HASH_CONCURRENCY"
	EnvWSReadLimit     = "PULKA_WS_READ_LIMIT"
	EnvWSSendQueue     = "PULKA_WS_SEND_QUEUE"
	EnvWSRate          = envnames.WSRate
	EnvWSBurst         = envnames.WSBurst
	EnvWSPing          = "PULKA_WS_PING_INTERVAL"
	EnvWSMaxTables     = "PULKA_WS_MAX_TABLES"
	EnvWSAckDelay      = "PULKA_WS_ACK_DELAY"
	EnvPresenceBeat    = envnames.PresenceBeat
	// The lobby watch (docs/limits.md, "Lobby").
	EnvLobbyWindow    = "PULKA_LOBBY_WINDOW"
	EnvLobbyInterval  = "PULKA_LOBBY_UPDATE_INTERVAL"
	EnvWSPerPlayer    = envnames.WSPerPlayer
	EnvWSPerIP        = envnames.WSPerIP
	EnvWSHelloTimeout = "PULKA_WS_HELLO_TIMEOUT"
	EnvFDShedPercent  = "PULKA_FD_SHED_PERCENT"
	EnvSessionSweep   = "PULKA_SESSION_SWEEP"
	EnvConnPerIP      = envnames.ConnPerIP
	EnvGoneCheck      = "PULKA_GONE_CHECK_INTERVAL"
	// The wallet (docs/wallet.md, "The gateway").
	EnvWalletTimeout   = "PULKA_WALLET_TIMEOUT"
	EnvBonusPerAccount = "PULKA_BONUS_CLAIMS_PER_ACCOUNT"
)

// Values of PULKA_COOKIE_SECURE.
const (
	CookieSecureAuto   = "auto"
	CookieSecureAlways = "true"
	CookieSecureNever  = "false"
)

// Config is the gateway's configuration.
type Config struct {
	daemon.Base

	// HTTPAddr serves the API, the WebSocket and the web client.
	HTTPAddr string
	// SessionSecret signs session tokens (HMAC-SHA256), at least 32 bytes.
	// PreviousSecrets (comma-separated) still verify, for rotation.
	SessionSecret   string
	PreviousSecrets string
	SessionTTL      time.Duration
	// CookieSecure is when the session cookie is marked Secure: "auto"
	// (default) whenever the request came over HTTPS (TLS, or a trusted
	// proxy's X-Forwarded-Proto), "true" always, "false" never (plain-HTTP
	// local use behind a proxy that says https).
	CookieSecure string
	CookieDomain string
	// AllowedOrigins are extra browser origins (host patterns such as
	// "pulka.example" or "*.pulka.example", or "https://host"),
	// comma-separated; the gateway's own host is always allowed.
	AllowedOrigins string
	// TrustedProxies (comma-separated IPs or CIDRs) may set X-Forwarded-For.
	TrustedProxies string
	// StaticDir, when set, is served at / instead of the web client
	// embedded in the binary (a build of web/, e.g. while developing it).
	StaticDir string
	// Instance names this instance (its lobby reply stream); default: the
	// host name (the pod name in Kubernetes).
	Instance     string
	LobbyTimeout time.Duration
	// WalletTimeout bounds a wait for the wallet's answer (opening an
	// account, a daily bonus).
	WalletTimeout time.Duration
	// BonusPerAccount bounds daily bonus claims per account per hour (the
	// wallet pays one a day; each claim is a command in its stream).
	BonusPerAccount int
	LoginPerIP      int
	// LoginPerAccountIP bounds attempts at one account from one address;
	// LoginPerAccount, much higher, those from addresses that have not
	// logged into it within LoginKnownFor (auth.LoginLimits).
	LoginPerAccountIP int
	LoginPerAccount   int
	LoginKnownFor     time.Duration
	LoginWindow       time.Duration
	SignupsPerIP      int
	SignupWindow      time.Duration
	HashConcurrency   int

	WSReadLimit    int
	WSSendQueue    int
	WSRate         int
	WSBurst        int
	WSPingInterval time.Duration
	WSMaxTables    int
	WSAckDelay     time.Duration
	// PresenceBeat is how often the gateway says it is alive; a gateway
	// silent for three beats is taken for dead, and the others report its
	// players away (their reconnect grace starts).
	PresenceBeat time.Duration
	// LobbyWindow and LobbyInterval bound what a lobby watcher is sent:
	// at most this many tables, brought up to date at most this often.
	LobbyWindow   int
	LobbyInterval time.Duration

	// WSPerPlayer and WSPerIP bound the sockets one player, and one client
	// address (IPv6: its /64), holds on this instance; WSHelloTimeout is how
	// long a socket without a session has to authenticate.
	WSPerPlayer    int
	WSPerIP        int
	WSHelloTimeout time.Duration
	// FDShedPercent: with this share of RLIMIT_NOFILE in use, new WebSocket
	// upgrades are refused (503) so that the players already connected,
	// the HTTP API and the probes keep their descriptors.
	FDShedPercent int
	// ConnPerIP bounds the TCP connections (HTTP and WebSocket) one client
	// address holds, closed at accept beyond it; addresses of
	// TrustedProxies are not counted (they carry many clients).
	ConnPerIP int
	// SessionSweep is how often open sockets' sessions are checked against
	// the revocations in Redis, for announcements missed while the
	// subscription was down (revocations are announced at once otherwise).
	SessionSweep time.Duration
	// GoneCheckInterval is how often the hub checks that the followed
	// tables' event streams still exist (Redis lost its data, or their
	// retention ran out): how long a watcher of a vanished table waits for
	// its table_gone at most.
	GoneCheckInterval time.Duration
}

// RegisterFlags declares the base flags and the gateway's.
func (c *Config) RegisterFlags(f *daemon.Flags) {
	c.Base.RegisterFlags(f)
	f.String(&c.HTTPAddr, "http-addr", EnvHTTPAddr, ":8080", "address of the HTTP API, the WebSocket (/ws) and the web client")
	f.Env(&c.SessionSecret, EnvSessionSecret)
	f.Env(&c.PreviousSecrets, EnvPreviousSecrets)
	f.Duration(&c.SessionTTL, "session-ttl", EnvSessionTTL, 7*24*time.Hour, "how long a session token lives")
	f.String(&c.CookieSecure, "cookie-secure", EnvCookieSecure, CookieSecureAuto,
		"mark the session cookie Secure: auto (when the request came over HTTPS or a trusted proxy says so), true, or false (plain-HTTP local use)")
	f.String(&c.CookieDomain, "cookie-domain", EnvCookieDomain, "", "Domain of the session cookie (default: the request host)")
	f.String(&c.AllowedOrigins, "allowed-origins", EnvAllowedOrigins, "", "extra browser origins allowed (comma-separated host patterns)")
	f.String(&c.TrustedProxies, "trusted-proxies", EnvTrustedProxies, "", "proxies whose X-Forwarded-For is trusted (comma-separated IPs/CIDRs)")
	f.String(&c.StaticDir, "static-dir", EnvStaticDir, "", "directory of a web client build to serve at / instead of the embedded one")
	f.String(&c.Instance, "instance", EnvInstance, "", "this instance's name (default: the host name)")
	f.Duration(&c.LobbyTimeout, "lobby-timeout", EnvLobbyTimeout, 10*time.Second, "how long to wait for the lobby's answer")
	f.Duration(&c.WalletTimeout, "wallet-timeout", EnvWalletTimeout, 5*time.Second, "how long to wait for the wallet's answer")
	f.Int(&c.BonusPerAccount, "bonus-claims-per-account", EnvBonusPerAccount, 10, "daily bonus claims per account per hour")
	f.Int(&c.LoginPerIP, "login-per-ip", EnvLoginPerIP, 30, "login attempts per client IP per login window")
	f.Int(&c.LoginPerAccountIP, "login-per-account-ip", EnvLoginPerAcctIP, 5, "login attempts at one account from one client address per login window")
	f.Int(&c.LoginPerAccount, "login-per-account", EnvLoginPerAccount, 100, "login attempts at one account from addresses that never logged into it, per login window")
	f.Duration(&c.LoginKnownFor, "login-known-for", EnvLoginKnownFor, 30*24*time.Hour, "how long a successful login exempts its address from the account-wide login limit")
	f.Duration(&c.LoginWindow, "login-window", EnvLoginWindow, 15*time.Minute, "the login rate-limit window")
	f.Int(&c.SignupsPerIP, "signups-per-ip", EnvSignupsPerIP, 30, "guest sessions and registrations per client IP per signup window")
	f.Duration(&c.SignupWindow, "signup-window", EnvSignupWindow, time.Hour, "the signup rate-limit window")
	f.Int(&c.HashConcurrency, "hash-concurrency", EnvHashConcurrency, 4, "password hashes computed at once (each takes 19 MiB)")
	f.Int(&c.WSReadLimit, "ws-read-limit", EnvWSReadLimit, 4096, "largest WebSocket frame handled, in bytes")
	f.Int(&c.WSSendQueue, "ws-send-queue", EnvWSSendQueue, 1024, "frames queued for one client before it is dropped as too slow")
	f.Int(&c.WSRate, "ws-rate", EnvWSRate, 20, "frames per second a client may send (token bucket rate)")
	f.Int(&c.WSBurst, "ws-burst", EnvWSBurst, 40, "token bucket size")
	f.Duration(&c.WSPingInterval, "ws-ping-interval", EnvWSPing, 20*time.Second, "how often the server pings each client")
	f.Int(&c.WSMaxTables, "ws-max-tables", EnvWSMaxTables, 8, "tables one connection may follow")
	f.Duration(&c.WSAckDelay, "ws-ack-delay", EnvWSAckDelay, 20*time.Millisecond, "how long a command's ack may wait to leave with the table's answer in one write (0: at once)")
	f.Int(&c.WSPerPlayer, "ws-per-player", EnvWSPerPlayer, 8, "WebSocket connections one player may hold on this instance")
	f.Int(&c.WSPerIP, "ws-per-ip", EnvWSPerIP, 64, "WebSocket connections one client address (IPv6: its /64) may hold on this instance, authenticated or not")
	f.Duration(&c.WSHelloTimeout, "ws-hello-timeout", EnvWSHelloTimeout, 5*time.Second, "how long a WebSocket without a session cookie has to send hello")
	f.Int(&c.ConnPerIP, "conn-per-ip", EnvConnPerIP, 128, "TCP connections one client address (IPv6: its /64) may hold; more are closed at accept (trusted proxies are exempt)")
	f.Int(&c.FDShedPercent, "fd-shed-percent", EnvFDShedPercent, 90, "share of RLIMIT_NOFILE in use from which new WebSocket upgrades are refused with 503")
	f.Duration(&c.SessionSweep, "session-sweep", EnvSessionSweep, 30*time.Second, "how often open sockets' sessions are checked against revocations (besides the instant Pub/Sub announcement)")
	f.Duration(&c.GoneCheckInterval, "gone-check-interval", EnvGoneCheck, hub.DefaultGoneCheck, "how often the followed tables' event streams are checked to still exist (a vanished table's watchers get table_gone within it)")
	f.Duration(&c.PresenceBeat, "presence-beat", EnvPresenceBeat, 5*time.Second, "how often the gateway says it is alive; after three missed beats the others report its players away")
	f.Int(&c.LobbyWindow, "lobby-window", EnvLobbyWindow, 100, "most tables a lobby watcher is shown (the newest matching its filter)")
	f.Duration(&c.LobbyInterval, "lobby-update-interval", EnvLobbyInterval, 250*time.Millisecond, "how often a lobby watcher's window is brought up to date at most")
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	errs := []error{c.Base.Validate()}
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{daemon.ErrConfig}, args...)...))
	}
	if _, _, err := net.SplitHostPort(c.HTTPAddr); err != nil {
		bad("http-addr %q: %v", c.HTTPAddr, err)
	}
	if len(c.SessionSecret) < auth.MinSecretLen {
		bad("%s must be set to at least %d bytes (e.g. openssl rand -hex 32)", EnvSessionSecret, auth.MinSecretLen)
	}
	for _, s := range splitList(c.PreviousSecrets) {
		if len(s) < auth.MinSecretLen {
			bad("every %s must be at least %d bytes", EnvPreviousSecrets, auth.MinSecretLen)
			break
		}
	}
	if c.SessionTTL < time.Minute {
		bad("session-ttl must be at least 1m")
	}
	for _, p := range splitList(c.AllowedOrigins) {
		if _, err := path.Match(p, ""); err != nil || p == "*" {
			bad("allowed-origins: %q is not a host pattern (and * is refused: it would allow every site)", p)
		}
	}
	if _, err := connlimit.ParseNetworks(splitList(c.TrustedProxies)); err != nil {
		bad("trusted-proxies: %v", err)
	}
	if c.StaticDir != "" {
		if st, err := os.Stat(c.StaticDir); err != nil || !st.IsDir() {
			bad("static-dir %q is not a directory", c.StaticDir)
		}
	}
	if c.LobbyTimeout <= 0 {
		bad("lobby-timeout must be positive")
	}
	if c.WalletTimeout <= 0 {
		bad("wallet-timeout must be positive")
	}
	if c.GoneCheckInterval < 10*time.Millisecond {
		bad("gone-check-interval must be at least 10ms")
	}
	if c.PresenceBeat < 10*time.Millisecond {
		bad("presence-beat must be at least 10ms")
	}
	positive := map[string]int{"login-per-ip": c.LoginPerIP, "login-per-account": c.LoginPerAccount,
		"login-per-account-ip": c.LoginPerAccountIP,
		"signups-per-ip":       c.SignupsPerIP, "hash-concurrency": c.HashConcurrency, "ws-send-queue": c.WSSendQueue,
		"ws-rate": c.WSRate, "ws-burst": c.WSBurst, "ws-max-tables": c.WSMaxTables,
		"ws-per-player": c.WSPerPlayer, "ws-per-ip": c.WSPerIP, "bonus-claims-per-account": c.BonusPerAccount}
	for _, name := range []string{"login-per-ip", "login-per-account", "login-per-account-ip", "signups-per-ip", "hash-concurrency",
		"ws-send-queue", "ws-rate", "ws-burst", "ws-max-tables", "ws-per-player", "ws-per-ip", "bonus-claims-per-account"} {
		if positive[name] < 1 {
			bad("%s must be at least 1", name)
		}
	}
	if c.LoginWindow < time.Second || c.SignupWindow < time.Second {
		bad("login-window and signup-window must be at least 1s")
	}
	if c.WSReadLimit < 256 || c.WSReadLimit > 1<<20 {
		bad("ws-read-limit must be 256..1048576 bytes")
	}
	if c.WSPingInterval < time.Second {
		bad("ws-ping-interval must be at least 1s")
	}
	switch c.CookieSecure {
	case CookieSecureAuto, CookieSecureAlways, CookieSecureNever:
	default:
		bad("cookie-secure %q: auto, true or false", c.CookieSecure)
	}
	if c.LoginKnownFor < time.Minute {
		bad("login-known-for must be at least 1m")
	}
	if c.WSHelloTimeout < 100*time.Millisecond || c.WSHelloTimeout > time.Minute {
		bad("ws-hello-timeout must be 100ms..1m")
	}
	if c.FDShedPercent < 10 || c.FDShedPercent > 100 {
		bad("fd-shed-percent must be 10..100")
	}
	if c.ConnPerIP < c.WSPerIP {
		bad("conn-per-ip (%d) must be at least ws-per-ip (%d): every socket is a connection", c.ConnPerIP, c.WSPerIP)
	}
	if c.SessionSweep < time.Second {
		bad("session-sweep must be at least 1s")
	}
	if c.WSAckDelay < 0 || c.WSAckDelay > time.Second {
		bad("ws-ack-delay must be 0..1s")
	}
	if c.LobbyWindow < 1 || c.LobbyWindow > 1000 {
		bad("lobby-window must be 1..1000")
	}
	if c.LobbyInterval < 10*time.Millisecond || c.LobbyInterval > 10*time.Second {
		bad("lobby-update-interval must be 10ms..10s")
	}
	return errors.Join(errs...)
}

// splitList splits a comma-separated setting, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// instanceName is Instance, or the host name (the pod's in Kubernetes).
func (c *Config) instanceName() string {
	if c.Instance != "" {
		return c.Instance
	}
	h, _ := os.Hostname()
	return h
}
