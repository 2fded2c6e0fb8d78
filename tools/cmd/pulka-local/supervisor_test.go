package main

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/envnames"
	"github.com/pulka/pulka/tools/stack"
)

// fakeSupervisor runs fakes of the given modes, one per name.
type fakeSupervisor struct {
	*supervisor
	out *lockedBuffer
}

func newFakeSupervisor(t *testing.T, modes string, capacity int) fakeSupervisor {
	t.Helper()
	out := &lockedBuffer{}
	s := fakeSupervisor{newSupervisor(fakeBinDir(t), fakeEnviron(modes), newConsole(out, 8, true), capacity), out}
	// Whatever a test leaves running is killed, so no fake outlives it.
	t.Cleanup(func() {
		for _, c := range s.running() {
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	})
	return s
}

func (s fakeSupervisor) startFake(t *testing.T, name, binary string, env ...string) *child {
	t.Helper()
	ports, err := stack.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	admin := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	c, err := s.start(stack.Process{Name: name, Binary: binary, Admin: admin,
		Env: append([]string{daemon.EnvAdminAddr + "=" + admin}, env...)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSupervisor_StopSendsSIGTERMAndWaitsForEveryChild(t *testing.T) {
	s := newFakeSupervisor(t, "*="+fakeServe, 2)
	a := s.startFake(t, "alpha", "lobby")
	b := s.startFake(t, "beta", "scoring")
	for _, c := range []*child{a, b} {
		if err := waitReady(context.Background(), c, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.stop(10 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	for _, c := range []*child{a, b} {
		if !c.exited() || c.err != nil || !gone(c.Pid()) {
			t.Errorf("%s: exited=%v err=%v", c.spec.Name, c.exited(), c.err)
		}
	}
	for _, want := range []string{"alpha | bye", "beta | bye", "alpha | plain line from pid " + strconv.Itoa(a.Pid())} {
		if !hasLine(s.out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, s.out.String())
		}
	}
}

func TestSupervisor_KillsAChildThatIgnoresSIGTERM(t *testing.T) {
	s := newFakeSupervisor(t, "lobby="+fakeIgnoreTerm+",*="+fakeServe, 2)
	stubborn := s.startFake(t, "stubborn", "lobby")
	polite := s.startFake(t, "polite", "scoring")
	for _, c := range []*child{stubborn, polite} {
		if err := waitReady(context.Background(), c, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	err := s.stop(time.Second)
	if err == nil || !strings.Contains(err.Error(), "stubborn did not stop within 1s and was killed") {
		t.Fatalf("want an error naming the killed child, got %v", err)
	}
	if strings.Contains(err.Error(), "polite") {
		t.Errorf("the child that stopped is reported too: %v\n%s", err, s.out.String())
	}
	if took := time.Since(start); took < time.Second || took > 6*time.Second {
		t.Errorf("stop took %s, want the 1s timeout and the kill", took)
	}
	if !gone(stubborn.Pid()) || !gone(polite.Pid()) {
		t.Error("a child is still running")
	}
	if !hasLine(s.out.String(), "pulka-local | stubborn did not stop within 1s: killing it") {
		t.Errorf("the kill is not announced:\n%s", s.out.String())
	}
}

func TestSupervisor_StopReportsAChildThatFailsWhileStopping(t *testing.T) {
	s := newFakeSupervisor(t, "*="+fakeFailStop, 1)
	c := s.startFake(t, "failer", "lobby")
	if err := waitReady(context.Background(), c, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	err := s.stop(10 * time.Second)
	if err == nil || !strings.Contains(err.Error(), "failer stopped with a failure (exit status 1)") {
		t.Fatalf("want the failure reported, got %v", err)
	}
}

func TestSupervisor_ExitsReceivesAChildThatEnds(t *testing.T) {
	s := newFakeSupervisor(t, "*="+fakeDie, 1)
	c := s.startFake(t, "dier", "lobby")
	select {
	case got := <-s.exits:
		if got != c || got.err == nil || !strings.Contains(got.err.Error(), "exit status 4") {
			t.Fatalf("got %s with %v, want dier with exit status 4", got.spec.Name, got.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the exit was not reported")
	}
	// Its output before dying is printed in full.
	if !hasLine(s.out.String(), "dier | plain line from pid "+strconv.Itoa(c.Pid())) {
		t.Errorf("output of the dead child lost:\n%s", s.out.String())
	}
	if err := s.stop(time.Second); err != nil {
		t.Errorf("stop with nothing running: %v", err)
	}
}

func TestSupervisor_RefusesMoreChildrenThanPlanned(t *testing.T) {
	s := newFakeSupervisor(t, "*="+fakeServe, 1)
	s.startFake(t, "one", "lobby")
	if _, err := s.start(stack.Process{Name: "two", Binary: "lobby"}); err == nil {
		t.Fatal("a second child was started on a supervisor planned for one")
	}
}

func TestWaitReady_FailsAsSoonAsTheChildDies(t *testing.T) {
	s := newFakeSupervisor(t, "*="+fakeDie, 1)
	c := s.startFake(t, "dier", "lobby")
	start := time.Now()
	err := waitReady(context.Background(), c, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "dier exited before it was ready (exit status 4)") {
		t.Fatalf("got %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("took %s: the death was not noticed", time.Since(start))
	}
}

func TestWaitReady_TimesOutWithWhatReadyzSaid(t *testing.T) {
	s := newFakeSupervisor(t, "*="+fakeNeverReady, 1)
	c := s.startFake(t, "slow", "lobby")
	err := waitReady(context.Background(), c, 700*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "slow was not ready within 700ms") || !strings.Contains(err.Error(), "503") {
		t.Fatalf("got %v", err)
	}
}

func TestWaitReady_StopsWhenCancelled(t *testing.T) {
	s := newFakeSupervisor(t, "*="+fakeNeverReady, 1)
	c := s.startFake(t, "slow", "lobby")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := waitReady(ctx, c, time.Minute); err == nil || strings.Contains(err.Error(), "not ready within") {
		t.Fatalf("want the context's error, got %v", err)
	}
}

// hasLine reports whether out has the line "name | text", whatever the
// width of the name column.
func hasLine(out, want string) bool {
	wantName, wantText, _ := strings.Cut(want, " | ")
	for _, l := range strings.Split(out, "\n") {
		name, text, ok := strings.Cut(l, " | ")
		if ok && strings.TrimSpace(name) == wantName && text == wantText {
			return true
		}
	}
	return false
}

func TestWaitReady_AServedAddressMustAcceptConnectionsToo(t *testing.T) {
	s := newFakeSupervisor(t, "*="+fakeLateListen, 1)
	ports, err := stack.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	admin := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	web := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	c, err := s.start(stack.Process{Name: "gw", Binary: "gateway", Admin: admin, Serves: web,
		Env: []string{daemon.EnvAdminAddr + "=" + admin, envnames.GatewayAddr + "=" + web}})
	if err != nil {
		t.Fatal(err)
	}
	if err := waitReady(context.Background(), c, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", web)
	if err != nil {
		t.Fatalf("ready, but %s refuses connections: %v", web, err)
	}
	_ = conn.Close()
}

func TestWaitReady_TimesOutWhenTheServedAddressNeverOpens(t *testing.T) {
	s := newFakeSupervisor(t, "*="+fakeServe, 1)
	ports, err := stack.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	admin := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	web := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	c, err := s.start(stack.Process{Name: "gw", Binary: "gateway", Admin: admin, Serves: web,
		Env: []string{daemon.EnvAdminAddr + "=" + admin}})
	if err != nil {
		t.Fatal(err)
	}
	err = waitReady(context.Background(), c, 700*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "nothing accepts connections on "+web) {
		t.Fatalf("got %v", err)
	}
}
