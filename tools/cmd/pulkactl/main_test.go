package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun_NoCommandExits2WithUsage(t *testing.T) {
	_, errOut, code := runCmd(t, "")
	if code != 2 || !strings.Contains(errOut, "usage: pulkactl") || !strings.Contains(errOut, "score") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestRun_UnknownCommandExits2(t *testing.T) {
	_, errOut, code := runCmd(t, "", "scroe")
	if code != 2 || !strings.Contains(errOut, `unknown command "scroe"`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestRun_HelpListsCommands(t *testing.T) {
	out, _, code := runCmd(t, "", "help")
	if code != 0 || !strings.Contains(out, "score") {
		t.Errorf("exit %d, stdout %q", code, out)
	}
}

func TestExitCode_MapsErrors(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("boom"), 1},
		{usageError(errors.New("bad")), 2},
		{&ExitError{Code: 3}, 3},
		{context.Canceled, 130},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if got := exitCode(c.err, &b); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// The built binary, as make build writes it: exit codes and streams as a
// shell sees them.
func TestBinary_ScoreSeedAndBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	bin := filepath.Join(t.TempDir(), "pulkactl")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	seed, err := os.Open("testdata/seed_pulkas_I_II.json")
	if err != nil {
		t.Fatal(err)
	}
	defer seed.Close()
	cmd := exec.Command(bin, "score", "--text", "--names", "Giorgi,Ana,Levan,Nika")
	cmd.Stdin = seed
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("score: %v", err)
	}
	if !strings.Contains(string(out), "9.5 (+2.5)") || !strings.Contains(string(out), "1.7 (-3)") {
		t.Errorf("sheet lacks Giorgi's 9.5 (+2.5) or Nika's 1.7 (-3):\n%s", out)
	}

	bad := exec.Command(bin, "score")
	bad.Stdin = strings.NewReader(`{"hands":[{"bids":[1,0,0,1],"tricks":[1,0,0,0]},{"bids":[0,5,0,0],"tricks":[1,1,0,0]}]}`)
	var stderr bytes.Buffer
	bad.Stderr = &stderr
	err = bad.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("bad input: %v, want exit status 2", err)
	}
	if !strings.Contains(stderr.String(), "hand 2") || !strings.Contains(stderr.String(), "bid 5") {
		t.Errorf("stderr %q does not name hand 2 and its bid", stderr.String())
	}
}
