package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/envnames"
	"github.com/pulka/pulka/tools/stack"
	"github.com/pulka/pulka/tools/stack/stacktest"
)

// repoRoot is the repository root (where go.work is), from this package's
// directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := stacktest.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestLocal_RunsAllOfPulkaAndStopsOnCtrlC runs the launcher and every
// service as make build builds them (stacktest builds them) and, for each
// Redis the launcher can start (a real redis-server and the embedded
// server; one body for both), talks to the gateway as a browser on this
// machine would, plays whole games through every service (a classic game
// with bots, a Japanese match of two players), and stops it with Ctrl-C
// (SIGINT).
func TestLocal_RunsAllOfPulkaAndStopsOnCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every service and runs all of Pulka: skipped under -short")
	}
	t.Run("every setting the launcher gives is one the service reads", checkSettingsAgainstHelp)
	for _, b := range []struct {
		name string
		// real: the machine's redis-server, which must be installed.
		real bool
		args []string
		// about is what the summary must say the Redis is, so that a run
		// meant for one Redis never passes on the other.
		about string
	}{
		{name: "redis-server", real: true, about: "redis-server"},
		{name: "embedded Redis", args: []string{"-embedded-redis"}, about: "embedded (miniredis)"},
	} {
		t.Run(b.name, func(t *testing.T) {
			if b.real {
				if _, err := exec.LookPath("redis-server"); err != nil {
					t.Fatal("redis-server is not installed (apt-get install redis-server)")
				}
			}
			l := stacktest.StartLocal(t, stacktest.LocalOptions{Args: b.args, Settings: localSettings})
			summary := l.Output()
			pids := pidsOf(t, summary)
			backends, gw := plan(Config{Runners: DefaultRunners}, "", "", make([]int, stack.Count(DefaultRunners)))
			for _, p := range append(backends, gw) {
				if pids[p.Name] == 0 {
					t.Fatalf("no pid for %s in the summary", p.Name)
				}
			}
			m := summaryRedisAbout.FindStringSubmatch(summary)
			if m == nil {
				t.Fatal("no Redis address in the summary")
			}
			redisAddr, redisAbout := m[1], m[2]
			if !strings.Contains(redisAbout, b.about) {
				t.Fatalf("the summary says the Redis is %q, want %s", redisAbout, b.about)
			}
			useGateway(t, l.URL, l.Origin)
			t.Run("a classic game with bots is played to the end", func(t *testing.T) {
				playClassicWithBots(t, l.URL)
			})
			t.Run("a Japanese match of two players is played to the end", func(t *testing.T) {
				playJapaneseMatch(t, l.URL)
			})
			stopped(t, l, pids, redisAddr)
		})
	}
}

// checkSettingsAgainstHelp runs each binary with -h: every variable the
// launcher sets must be named in its usage.
func checkSettingsAgainstHelp(t *testing.T) {
	cfg := Config{Addr: DefaultAddr, Runners: 2, LogLevel: "info", StopTimeout: DefaultStopTimeout}
	backends, gw := plan(cfg, "127.0.0.1:1", "x", make([]int, stack.Count(cfg.Runners)))
	for _, s := range append(backends, gw) {
		unread, err := stacktest.UnreadSettings(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range unread {
			t.Errorf("%s: the launcher sets %s, which %s -h does not list", s.Name, key, s.Binary)
		}
	}
}

// localSettings are what the launcher (and so every service) gets on top
// of the test's environment: bots move at once, and a client may send a
// move as soon as its turn comes (the gateway's default 20 frames/s would
// make the game wait for the rate limit instead of Redis).
var localSettings = map[string][]string{
	stack.TableRunner: {envnames.RunnerBotDelay + "=1ms"},
	stack.Gateway:     {envnames.WSRate + "=1000", envnames.WSBurst + "=1000"},
}

var summaryRedisAbout = regexp.MustCompile(`(?m)^pulka-local\s+\|\s+Redis\s+(\S+)\s+\((.*)\)\s*$`)

// stopped sends Ctrl-C (SIGINT) and checks that the launcher exits 0 and
// that every service and Redis are gone.
func stopped(t *testing.T, l *stacktest.Local, pids map[string]int, redisAddr string) {
	t.Helper()
	if err := l.Interrupt(time.Minute); err != nil {
		t.Fatalf("pulka-local after Ctrl-C: %v, want exit status 0 within a minute", err)
	}
	for n, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still runs after the launcher exited", n, pid)
		}
	}
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(context.Background()).Err(); err == nil {
		t.Errorf("the Redis at %s still answers after the launcher exited", redisAddr)
	}
}

// useGateway does what the web client does first: it loads the page, gets
// a guest session from a page of origin (the URL the launcher prints,
// which is not the host the request goes to, so the allowed origin is what
// lets it through) and lists the tables with it.
func useGateway(t *testing.T, base, origin string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusServiceUnavailable:
		t.Errorf("GET /: %s: the gateway was built without the web client; run `make web` (make test does) first", resp.Status)
	default:
		t.Errorf("GET /: %s", resp.Status)
	}

	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/session/guest", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", origin)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var session struct {
		Token  string `json:"token"`
		Player struct {
			ID string `json:"id"`
		} `json:"player"`
	}
	err = json.NewDecoder(resp.Body).Decode(&session)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || err != nil || session.Token == "" || session.Player.ID == "" {
		t.Fatalf("POST /api/v1/session/guest from %s: %s, %+v, %v", origin, resp.Status, session, err)
	}

	req, err = http.NewRequest(http.MethodGet, base+"/api/v1/tables", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+session.Token)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/tables with the guest session: %s", resp.Status)
	}
}
