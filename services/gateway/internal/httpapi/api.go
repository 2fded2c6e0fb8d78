package httpapi

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pulka/pulka/services/gateway/internal/apierr"
	"github.com/pulka/pulka/services/gateway/internal/auth"
	"github.com/pulka/pulka/services/gateway/internal/connlimit"
	"github.com/pulka/pulka/services/gateway/internal/ports"
)

// Config is the API's policy.
type Config struct {
	// CookieName, CookieSecure and CookieDomain describe the session cookie
	// (HttpOnly, SameSite=Lax, Path=/). CookieSecure is SecureAuto (the
	// default: Secure whenever the request came over HTTPS), SecureAlways
	// or SecureNever.
	CookieName   string
	CookieSecure string
	CookieDomain string
	// AllowedOrigins are the browser origins (host patterns, as for the
	// WebSocket) that may send state-changing requests besides the
	// request's own host.
	AllowedOrigins []string
	// TrustedProxies are the proxies whose X-Forwarded-For is believed
	// when finding a client's IP (for the per-IP limits); none by default.
	TrustedProxies connlimit.Networks
	// LobbyTimeout bounds waiting for the lobby's answer.
	LobbyTimeout time.Duration
	// MaxBodyBytes bounds request bodies.
	MaxBodyBytes int64
	// WalletTimeout bounds waiting for the wallet's answer.
	WalletTimeout time.Duration
}

// Deps is what the API talks to.
type Deps struct {
	Signer   *auth.Signer
	Accounts *auth.Accounts
	Login    *auth.LoginGuard
	// Signups limits guest sessions and registrations per IP.
	Signups *auth.Limiter
	// SignupCounted, when set, is told of each signup the limit counted:
	// "allowed" or "refused".
	SignupCounted func(result string)
	// Revocations, when set, refuses revoked sessions and lets logout
	// revoke one everywhere.
	Revocations *auth.Revocations
	Lobby       ports.LobbyCommands
	View        ports.LobbyView
	// Sheets is optional: without it the history endpoints answer 503.
	Sheets ports.Sheets
	// Wallet is optional: without it the wallet endpoints answer 503 and
	// registration opens no wallet.
	Wallet ports.Wallet
	// Bonuses limits daily bonus claims per account.
	Bonuses *auth.Limiter
	// WalletCounted, when set, is told of each wallet request: op (open,
	// balance, ledger, daily_bonus) and result (ok, refused, limited, error).
	WalletCounted func(op, result string)
	Logger        *slog.Logger
	Now           func() time.Time
	// NewID makes idempotency keys.
	NewID func() string
}

// API holds the handlers.
type API struct {
	cfg  Config
	deps Deps
}

// Values of Config.CookieSecure.
const (
	SecureAuto   = "auto"
	SecureAlways = "true"
	SecureNever  = "false"
)

// Mount adds the API's routes to engine (and its middleware to the group).
func Mount(engine *gin.Engine, cfg Config, d Deps) error {
	if cfg.CookieName == "" {
		cfg.CookieName = "pulka_session"
	}
	if cfg.LobbyTimeout <= 0 {
		cfg.LobbyTimeout = 10 * time.Second
	}
	if cfg.WalletTimeout <= 0 {
		cfg.WalletTimeout = 5 * time.Second
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 64 << 10
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if cfg.CookieSecure == "" {
		cfg.CookieSecure = SecureAuto
	}
	if err := engine.SetTrustedProxies(cfg.TrustedProxies.Strings()); err != nil {
		return err
	}
	a := &API{cfg: cfg, deps: d}
	v1 := engine.Group("/api/v1", a.limitBody, a.checkOrigin)
	v1.POST("/session/guest", a.guest)
	v1.POST("/register", a.register)
	v1.POST("/login", a.login)
	v1.POST("/logout", a.logout)
	v1.GET("/session", a.currentSession)

	authed := v1.Group("", a.requireSession)
	authed.GET("/me", a.me)
	authed.GET("/me/games", a.myGames)
	authed.GET("/me/wallet", a.balance)
	authed.GET("/me/wallet/ledger", a.ledger)
	authed.POST("/me/wallet/daily-bonus", a.dailyBonus)
	authed.GET("/players/:id/games", a.playerGames)
	authed.GET("/tables", a.listTables)
	authed.GET("/tables/:id", a.getTable)
	authed.POST("/tables", a.createTable)
	authed.POST("/tables/:id/sit", a.sit)
	authed.POST("/tables/:id/stand", a.stand)
	authed.POST("/tables/:id/leave", a.leave)
	authed.POST("/tables/:id/bots", a.fillWithBots)
	return nil
}

// NotFound answers an unknown API path (for the engine's NoRoute).
func NotFound(c *gin.Context) { Fail(c, apierr.ErrNotFound) }

// Fail answers with err's problem: status from apierr, JSON body, and
// Retry-After for rate limits.
func Fail(c *gin.Context, err error) {
	p := apierr.From(err)
	if p.RetryAfter > 0 {
		c.Header("Retry-After", strconv.Itoa(int((p.RetryAfter+time.Second-1)/time.Second)))
	}
	c.AbortWithStatusJSON(p.Status, p.Body())
}

// limitBody caps request bodies.
func (a *API) limitBody(c *gin.Context) {
	if c.Request.Body != nil {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, a.cfg.MaxBodyBytes)
	}
	c.Next()
}

// checkOrigin refuses state-changing requests a browser sent from a page of
// another origin (cross-site request forgery with the session cookie). A
// request without an Origin header (curl, a native client) passes: it
// cannot carry a victim's cookie.
func (a *API) checkOrigin(c *gin.Context) {
	switch c.Request.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		c.Next()
		return
	}
	origin := c.GetHeader("Origin")
	if origin == "" || a.originAllowed(origin, c.Request.Host) {
		c.Next()
		return
	}
	c.AbortWithStatusJSON(http.StatusForbidden, apierr.Problem{Code: "origin_not_allowed", Message: "requests from this origin are not allowed"}.Body())
}

// originAllowed matches like coder/websocket's OriginPatterns: the request's
// own host, or a host pattern (path.Match), or a scheme://host pattern.
func (a *API) originAllowed(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	for _, p := range a.cfg.AllowedOrigins {
		target := u.Host
		if strings.Contains(p, "://") {
			target = u.Scheme + "://" + u.Host
		}
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(target)); ok {
			return true
		}
	}
	return false
}

const claimsKey = "pulka.claims"

// requireSession reads the session from the bearer token or the cookie.
func (a *API) requireSession(c *gin.Context) {
	tok := a.requestToken(c)
	if tok == "" {
		Fail(c, apierr.ErrAuthRequired)
		return
	}
	claims, err := auth.VerifySession(c.Request.Context(), a.deps.Signer, a.deps.Revocations, tok)
	if err != nil {
		Fail(c, err)
		return
	}
	c.Set(claimsKey, claims)
	c.Next()
}

// requestToken is the session token of the request: the bearer header's,
// else the cookie's.
func (a *API) requestToken(c *gin.Context) string {
	if h := c.GetHeader("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return strings.TrimPrefix(h, "Bearer ")
	}
	if ck, err := c.Cookie(a.cfg.CookieName); err == nil {
		return ck
	}
	return ""
}

// overHTTPS reports whether the client reached us over HTTPS: TLS on this
// connection, or a trusted proxy's X-Forwarded-Proto (anyone else's is
// ignored: a client could say anything).
func (a *API) overHTTPS(c *gin.Context) bool {
	if c.Request.TLS != nil {
		return true
	}
	if !strings.EqualFold(strings.TrimSpace(strings.Split(c.GetHeader("X-Forwarded-Proto"), ",")[0]), "https") {
		return false
	}
	host, _, err := net.SplitHostPort(c.Request.RemoteAddr)
	if err != nil {
		host = c.Request.RemoteAddr
	}
	return a.cfg.TrustedProxies.Contains(net.ParseIP(host))
}

// clientKey is the client's address as the per-address limits count it
// (IPv6: its /64).
func clientKey(c *gin.Context) string { return connlimit.Group(c.ClientIP()) }

func claimsOf(c *gin.Context) auth.Claims {
	v, _ := c.Get(claimsKey)
	cl, _ := v.(auth.Claims)
	return cl
}

// lobbyCtx bounds a wait for the lobby.
func (a *API) lobbyCtx(c *gin.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.Request.Context(), a.cfg.LobbyTimeout)
}
