package server

import (
	"net/http"
	"strings"
	"testing"
)

func TestAPI_LogoutRevokesTheTokenOnEveryGateway(t *testing.T) {
	cfg := testConfig()
	ts := startServer(t, cfg, nil)
	other := startServer(t, cfg, ts.redis) // a second instance, the same Redis
	tok := ts.do(t, "POST", "/api/v1/session/guest", nil, nil).body["token"].(string)
	if r := other.do(t, "GET", "/api/v1/me", nil, bearer(tok)); r.status != http.StatusOK {
		t.Fatalf("before logout: %d %v", r.status, r.body)
	}
	if r := ts.do(t, "POST", "/api/v1/logout", nil, bearer(tok)); r.status != http.StatusNoContent {
		t.Fatalf("logout: %d %v", r.status, r.body)
	}
	for name, s := range map[string]*testServer{"this gateway": ts, "another gateway": other} {
		if r := s.do(t, "GET", "/api/v1/me", nil, bearer(tok)); r.status != http.StatusUnauthorized || errorCode(r) != "session_revoked" {
			t.Fatalf("%s after logout: %d %v", name, r.status, r.body)
		}
	}
	// A new session works.
	fresh := ts.do(t, "POST", "/api/v1/session/guest", nil, nil).body["token"].(string)
	if r := other.do(t, "GET", "/api/v1/me", nil, bearer(fresh)); r.status != http.StatusOK {
		t.Fatalf("a new session: %d", r.status)
	}
}

func TestAPI_CookieIsSecureWhenServedOverHTTPS(t *testing.T) {
	secure := func(r response) bool {
		for _, c := range r.header.Values("Set-Cookie") {
			if strings.HasPrefix(c, "pulka_session=") {
				return strings.Contains(c, "; Secure")
			}
		}
		t.Fatalf("no session cookie in %v", r.header)
		return false
	}
	https := map[string]string{"X-Forwarded-Proto": "https"}
	tests := []struct {
		name    string
		setting string
		proxies string
		hdr     map[string]string
		want    bool
	}{
		{"plain HTTP", CookieSecureAuto, "", nil, false},
		{"a trusted proxy says https", CookieSecureAuto, "127.0.0.1", https, true},
		{"an untrusted client says https", CookieSecureAuto, "", https, false},
		{"always", CookieSecureAlways, "", nil, true},
		{"never (plain-HTTP local use)", CookieSecureNever, "127.0.0.1", https, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.CookieSecure, cfg.TrustedProxies = tc.setting, tc.proxies
			ts := startServer(t, cfg, nil)
			if got := secure(ts.do(t, "POST", "/api/v1/session/guest", nil, tc.hdr)); got != tc.want {
				t.Fatalf("Secure = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestConfig_RefusesAnUnknownCookieSecureSetting(t *testing.T) {
	cfg := testConfig()
	cfg.RedisAddr, cfg.AdminAddr, cfg.ShutdownTimeout = "localhost:6379", "127.0.0.1:0", 1e9
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the test config: %v", err)
	}
	cfg.CookieSecure = "sometimes"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "cookie-secure") {
		t.Fatalf("Validate = %v", err)
	}
}

func TestServer_ProbesOnThePublicPort(t *testing.T) {
	probes := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok","path":"` + r.URL.Path + `"}`))
	})
	ts := startServer(t, testConfig(), nil, func(p *Parts) { p.Probes = probes })
	for _, path := range []string{"/healthz", "/readyz"} {
		if r := ts.do(t, "GET", path, nil, nil); r.status != http.StatusOK || r.body["path"] != path {
			t.Fatalf("%s: %d %v", path, r.status, r.body)
		}
	}
}
