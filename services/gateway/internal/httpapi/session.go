package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pulka/pulka/services/gateway/internal/apierr"
	"github.com/pulka/pulka/services/gateway/internal/auth"
)

// Player is who a session belongs to.
type Player struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Guest bool   `json:"guest"`
}

// Session is the answer of guest, register and login: the token (also set
// as the cookie, for browsers) and when it expires.
type Session struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	Player    Player    `json:"player"`
}

type credentials struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

func (a *API) bindCredentials(c *gin.Context) (credentials, bool) {
	var cr credentials
	if err := c.ShouldBindJSON(&cr); err != nil {
		Fail(c, apierr.BadRequestf("send JSON {\"username\":…,\"password\":…}"))
		return cr, false
	}
	return cr, true
}

// signupAllowed applies the per-IP limit of new identities.
func (a *API) signupAllowed(c *gin.Context) bool {
	if a.deps.Signups == nil {
		return true
	}
	ok, retry, err := a.deps.Signups.Hit(c.Request.Context(), clientKey(c))
	if err != nil {
		Fail(c, errors.Join(apierr.ErrUnavailable, err))
		return false
	}
	if a.deps.SignupCounted != nil {
		result := "refused"
		if ok {
			result = "allowed"
		}
		a.deps.SignupCounted(result)
	}
	if !ok {
		Fail(c, &auth.RateLimitedError{Scope: "ip", RetryAfter: retry})
		return false
	}
	return true
}

func (a *API) guest(c *gin.Context) {
	if !a.signupAllowed(c) {
		return
	}
	id, name := auth.NewGuest()
	a.issue(c, http.StatusCreated, auth.Claims{PlayerID: id, Name: name, Guest: true})
}

func (a *API) register(c *gin.Context) {
	cr, ok := a.bindCredentials(c)
	if !ok || !a.signupAllowed(c) {
		return
	}
	acc, err := a.deps.Accounts.Register(c.Request.Context(), cr.Username, cr.Password)
	if err != nil {
		Fail(c, err)
		return
	}
	a.openWallet(c, acc.ID)
	a.issue(c, http.StatusCreated, auth.Claims{PlayerID: acc.ID, Name: acc.Name})
}

func (a *API) login(c *gin.Context) {
	cr, ok := a.bindCredentials(c)
	if !ok {
		return
	}
	acc, err := a.deps.Login.Login(c.Request.Context(), cr.Username, cr.Password, clientKey(c))
	if err != nil {
		if !errors.Is(err, auth.ErrInvalidCredentials) {
			a.deps.Logger.InfoContext(c.Request.Context(), "login refused", "err", err)
		}
		Fail(c, err)
		return
	}
	a.ensureWallet(c, acc.ID)
	a.issue(c, http.StatusOK, auth.Claims{PlayerID: acc.ID, Name: acc.Name})
}

// logout revokes the request's session on every gateway (its HTTP requests
// are refused, its open sockets closed with 4003) and clears the cookie.
// A request without a valid session just clears the cookie.
func (a *API) logout(c *gin.Context) {
	if tok := a.requestToken(c); tok != "" && a.deps.Revocations != nil {
		if cl, err := a.deps.Signer.Verify(tok); err == nil {
			if err := a.deps.Revocations.Revoke(c.Request.Context(), cl); err != nil {
				Fail(c, errors.Join(apierr.ErrUnavailable, err))
				return
			}
		}
	}
	a.setCookie(c, "", -1)
	c.Status(http.StatusNoContent)
}

// currentSession says whether the request carries a live session without
// a 401: a browser asks on every fresh page load, where having none is the
// normal case (and a 401 is an error in its console each time). 200 with
// what /me says; 204 for no token, or one invalid, expired or revoked (its
// cookie then cleared); a session that could not be checked fails as
// everywhere (503), so an outage does not sign anyone out.
func (a *API) currentSession(c *gin.Context) {
	tok := a.requestToken(c)
	if tok == "" {
		c.Status(http.StatusNoContent)
		return
	}
	cl, err := auth.VerifySession(c.Request.Context(), a.deps.Signer, a.deps.Revocations, tok)
	if errors.Is(err, auth.ErrSessionUnchecked) {
		Fail(c, err)
		return
	}
	if err != nil {
		a.setCookie(c, "", -1)
		c.Status(http.StatusNoContent)
		return
	}
	c.Set(claimsKey, cl)
	a.me(c)
}

func (a *API) me(c *gin.Context) {
	cl := claimsOf(c)
	c.JSON(http.StatusOK, gin.H{
		"player":     Player{ID: cl.PlayerID, Name: cl.Name, Guest: cl.Guest},
		"expires_at": time.Unix(cl.ExpiresAt, 0).UTC(),
	})
}

func (a *API) issue(c *gin.Context, status int, cl auth.Claims) {
	tok, cl, err := a.deps.Signer.Issue(cl)
	if err != nil {
		Fail(c, err)
		return
	}
	a.setCookie(c, tok, int(a.deps.Signer.TTL()/time.Second))
	c.JSON(status, Session{Token: tok, ExpiresAt: time.Unix(cl.ExpiresAt, 0).UTC(),
		Player: Player{ID: cl.PlayerID, Name: cl.Name, Guest: cl.Guest}})
}

func (a *API) setCookie(c *gin.Context, value string, maxAge int) {
	secure := a.cfg.CookieSecure == SecureAlways || (a.cfg.CookieSecure == SecureAuto && a.overHTTPS(c))
	http.SetCookie(c.Writer, &http.Cookie{Name: a.cfg.CookieName, Value: value, Path: "/", Domain: a.cfg.CookieDomain,
		MaxAge: maxAge, Secure: secure, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}
