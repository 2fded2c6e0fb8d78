package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// ErrExited is wrapped by WaitReady's error when the process ended first.
var ErrExited = errors.New("exited before it was ready")

// WaitReady polls p's /readyz until it answers 200 (and, for a process
// with Serves, its address accepts a connection). It fails when exited is
// closed first (the process ended: the error wraps ErrExited), when
// timeout passes, or when ctx is cancelled.
func WaitReady(ctx context.Context, p Process, exited <-chan struct{}, timeout time.Duration) error {
	errLate := errors.New("not ready in time")
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errLate)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := "no answer yet"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.ReadyURL(), nil)
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		if resp, err := client.Do(req); err != nil {
			if ctx.Err() == nil { // keep what it said before the deadline cut the request
				last = err.Error()
			}
		} else {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			_ = resp.Body.Close()
			switch {
			case resp.StatusCode != http.StatusOK:
				last = fmt.Sprintf("%s %s", resp.Status, strings.TrimSpace(string(body)))
			case p.Serves == "":
				return nil
			default:
				var d net.Dialer
				conn, err := d.DialContext(ctx, "tcp", p.Serves)
				if err == nil {
					_ = conn.Close()
					return nil
				}
				if ctx.Err() == nil {
					last = "ready, but nothing accepts connections on " + p.Serves + " yet"
				}
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("%s %w", p.Name, ErrExited)
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), errLate) {
				return fmt.Errorf("%s was not ready within %s: /readyz: %s", p.Name, timeout, last)
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// ExitText describes how a process ended, from its Wait's error.
func ExitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
