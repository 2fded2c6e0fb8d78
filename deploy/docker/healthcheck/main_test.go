package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheck_ExitCodeFollowsTheAnswer(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"status":"unavailable","checks":{"redis":"dial refused"}}`))
	}))
	defer srv.Close()
	env := func(string) string { return "" }

	for _, tc := range []struct {
		status int
		want   int
	}{{http.StatusOK, 0}, {http.StatusNoContent, 0}, {http.StatusServiceUnavailable, 1}, {http.StatusInternalServerError, 1}} {
		status = tc.status
		var stderr bytes.Buffer
		if got := check(context.Background(), []string{srv.URL + "/readyz"}, env, &stderr); got != tc.want {
			t.Errorf("answer %d: exit %d, want %d", tc.status, got, tc.want)
		}
		if tc.want == 1 && !strings.Contains(stderr.String(), "dial refused") {
			t.Errorf("answer %d: the failing check is not shown: %q", tc.status, stderr.String())
		}
	}
}

func TestCheck_DefaultsToReadyzOnTheAdminPort(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	env := func(k string) string {
		if k == "PULKA_ADMIN_ADDR" {
			return ":" + port
		}
		return ""
	}
	if got := check(context.Background(), nil, env, &bytes.Buffer{}); got != 0 {
		t.Fatalf("exit %d, want 0", got)
	}
}

func TestCheck_NothingListeningIsUnhealthy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	if got := check(context.Background(), []string{"http://" + addr + "/readyz"}, func(string) string { return "" }, &bytes.Buffer{}); got != 1 {
		t.Fatalf("exit %d, want 1", got)
	}
}

func TestCheck_BadUsageIsExit2(t *testing.T) {
	env := func(k string) string {
		if k == "PULKA_ADMIN_ADDR" {
			return "9090"
		}
		return ""
	}
	for _, args := range [][]string{{"localhost:9090/readyz"}, {"a", "b"}, nil} {
		if got := check(context.Background(), args, env, &bytes.Buffer{}); got != 2 {
			t.Errorf("%q: exit %d, want 2", args, got)
		}
	}
}
