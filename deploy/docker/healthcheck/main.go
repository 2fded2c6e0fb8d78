// Command healthcheck is the health check inside Pulka's container images:
// it asks one URL and exits 0 when the answer is 2xx, 1 otherwise (2 for bad
// usage). The images are distroless — no shell, curl or wget — so
// docker-compose's healthcheck runs this:
//
//	test: ["CMD", "/healthcheck", "http://127.0.0.1:9090/readyz"]
//
// Without an argument it asks /readyz on the admin port PULKA_ADMIN_ADDR
// names (":9090" when unset), on loopback.
//
// It is a module of its own, outside go.work, because it only ever runs in
// the images (deploy/docker/Dockerfile builds it with GOWORK=off) and needs
// nothing but the standard library.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"
)

// timeout bounds the whole check; compose's own timeout is longer.
const timeout = 2 * time.Second

func main() {
	os.Exit(check(context.Background(), os.Args[1:], os.Getenv, os.Stderr)) //nolint:forbidigo // main: the exit code is the check's result
}

// check asks the URL in args (or the default) and returns the exit code.
func check(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	var target string
	switch len(args) {
	case 0:
		admin := getenv("PULKA_ADMIN_ADDR")
		if admin == "" {
			admin = ":9090"
		}
		_, port, err := net.SplitHostPort(admin)
		if err != nil {
			fmt.Fprintf(stderr, "healthcheck: PULKA_ADMIN_ADDR %q: %v\n", admin, err)
			return 2
		}
		target = "http://" + net.JoinHostPort("127.0.0.1", port) + "/readyz"
	case 1:
		target = args[0]
		if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			fmt.Fprintf(stderr, "healthcheck: %q is not an http(s) URL\n", target)
			return 2
		}
	default:
		fmt.Fprintln(stderr, "usage: healthcheck [URL]   (default: /readyz on PULKA_ADMIN_ADDR's port)")
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		fmt.Fprintf(stderr, "healthcheck: %v\n", err)
		return 2
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "healthcheck: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	// The body says which check failed (pkg/daemon's /readyz); docker
	// inspect shows it.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		fmt.Fprintf(stderr, "healthcheck: %s: %s %s\n", target, resp.Status, body)
		return 1
	}
	return 0
}
