package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/redistest"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestRun_ServesThenClosesWebSocketsWithGoingAway runs the gateway the way
// main does (inside the daemon shell) and stops it.
func TestRun_ServesThenClosesWebSocketsWithGoingAway(t *testing.T) {
	r := redistest.Start(t)
	cfg := testConfig()
	cfg.HTTPAddr = freeAddr(t)
	cfg.Base = daemon.Base{RedisAddr: r.Addr(), AdminAddr: "127.0.0.1:0", ShutdownTimeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Options{Name: "gateway", Config: cfg.Base}, cfg.Run)
	}()
	base := "http://" + cfg.HTTPAddr
	var tok string
	deadline := time.Now().Add(10 * time.Second)
	for tok == "" {
		resp, err := http.Post(base+"/api/v1/session/guest", "application/json", nil)
		if err == nil {
			if resp.StatusCode == http.StatusCreated {
				for _, c := range resp.Cookies() {
					if c.Name == "pulka_session" {
						tok = c.Value
					}
				}
			}
			resp.Body.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway did not come up: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer wcancel()
	c, resp, err := websocket.Dial(wctx, "ws"+strings.TrimPrefix(base, "http")+"/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {"pulka_session=" + tok}}})
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.CloseNow() }()
	if _, _, err := c.Read(wctx); err != nil { // welcome
		t.Fatal(err)
	}
	cancel() // SIGTERM
	_, _, err = c.Read(wctx)
	if code := websocket.CloseStatus(err); code != websocket.StatusGoingAway {
		t.Fatalf("close = %v (code %d), want 1001", err, code)
	}
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return")
	}
}
