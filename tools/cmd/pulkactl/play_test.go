package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestPlay_RefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"play"},
		{"play", "--table", "t1", "--create", "classic"},
		{"play", "--create", "poker"},
		{"play", "--create", "japanese", "--bots"},
		{"play", "--table", "t1", "extra"},
	} {
		if _, errOut, code := runCmd(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d (%s), want %d", args, code, errOut, exitUsage)
		}
	}
}

// fullyVerified is the line of a hand whose commitment, own seed and dealt
// cards were all checked.
var fullyVerified = regexp.MustCompile(`deal verified \(commitment, your seed, your [1-9]\d* cards\)\n`)

var gameOver = regexp.MustCompile(`game over \(completed\) after (\d+) hands\n((?:  \d\. .*\n)+)`)

func TestPlay_AutoFinishesAClassicGameAgainstBots(t *testing.T) {
	url := liveStack(t)
	path := filepath.Join(t.TempDir(), "game.json")
	out, errOut, code := runCmd(t, "", "play", "--server", url, "--create", "classic", "--bots", "--auto", "--timeout", "3m", "--record", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// The record the player wrote from the frames it received verifies:
	// every hand's commitment and deal.
	if vout, verr, vcode := runCmd(t, "", "verify", path); vcode != 0 || !strings.Contains(vout, "ok: 24 hands verified") {
		t.Errorf("verify of the played game's record exited %d: %s\n%s", vcode, verr, tail(vout, 5))
	}
	m := gameOver.FindStringSubmatch(out)
	if m == nil || m[1] != "24" || strings.Count(m[2], "\n") != 4 || !strings.Contains(m[2], "you") {
		t.Fatalf("no finished 24-hand game with four placings in:\n%s", tail(out, 20))
	}
	for _, want := range []string{"game started: you, Bot 2, Bot 3, Bot 4", "you bid", "you played", "took the trick", "hand ended:"} {
		if !strings.Contains(out, want) {
			t.Errorf("the game's lines lack %q", want)
		}
	}
	if strings.Contains(out, "refused:") {
		t.Errorf("the table refused a move the client chose:\n%s", out)
	}
	// Every revealed hand checks out, the client's own seed and the cards
	// it was dealt included (the table deals commit–reveal: all 24 are
	// revealed).
	if n, ok := strings.Count(out, "deal verified"), len(fullyVerified.FindAllString(out, -1)); n != 24 || ok != 24 || strings.Contains(out, "NOT VERIFIED") {
		t.Errorf("%d hands verified, %d with this client's seed and cards, of 24:\n%s", n, ok, tail(out, 30))
	}
}

func TestPlay_TwoAutoPlayersFinishAJapaneseMatch(t *testing.T) {
	url := liveStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	var hostOut bytes.Buffer
	hostDone := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"play", "--server", url, "--create", "japanese", "--target", "11", "--auto", "--quiet"},
			strings.NewReader(""), io.MultiWriter(pw, &hostOut), io.Discard)
		_ = pw.Close()
		hostDone <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "table ") {
		t.Fatalf("host printed %q, %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	table := strings.TrimSpace(strings.TrimPrefix(line, "table "))
	var guestOut, guestErr bytes.Buffer
	if err := run(ctx, []string{"play", "--server", url, "--table", table, "--auto"}, strings.NewReader(""), &guestOut, &guestErr); err != nil {
		t.Fatalf("guest: %v\n%s", err, guestErr.String())
	}
	if err := <-hostDone; err != nil {
		t.Fatalf("host: %v", err)
	}
	for who, out := range map[string]string{"host": hostOut.String(), "guest": guestOut.String()} {
		m := gameOver.FindStringSubmatch(out)
		if m == nil || strings.Count(m[2], "\n") != 2 {
			t.Fatalf("%s saw no finished match with two placings:\n%s", who, out)
		}
		if who == "guest" {
			// Every hand's deal checks out, the cards dealt (and the
			// face-down column cards received) included.
			if n, ok := strings.Count(out, "deal verified"), len(fullyVerified.FindAllString(out, -1)); n == 0 || n != ok || strings.Contains(out, "NOT VERIFIED") {
				t.Errorf("guest: %d hands verified, %d with its seed and cards:\n%s", n, ok, tail(out, 30))
			}
		}
		scores := regexp.MustCompile(`1\. .* (\d+)\n`).FindStringSubmatch(m[2])
		if scores == nil || len(scores[1]) < 2 { // the winner reached the target of 11
			t.Fatalf("%s: winner below the target:\n%s", who, m[2])
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
