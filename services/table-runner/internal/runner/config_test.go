package runner

import (
	"errors"
	"flag"
	"io"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
)

func load(env map[string]string, args ...string) (*Config, error) {
	var c Config
	err := daemon.Load(&c, "table-runner", args, func(k string) string { return env[k] }, io.Discard)
	return &c, err
}

func TestConfig_DefaultsAreValidAndMatchTheDocs(t *testing.T) {
	c, err := load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.MoveTimeout != 20*time.Second || c.ReconnectGrace != 60*time.Second || !c.Assigner ||
		c.HeartbeatTTL != 3*time.Second || c.Inbox != 64 || c.EventMaxLen != 0 || c.SeedTimeout != 3*time.Second {
		t.Fatalf("defaults = %+v", c)
	}
}

func TestConfig_EnvironmentAndFlagsSetTheRunner(t *testing.T) {
	c, err := load(map[string]string{EnvBotDelay: "0s", EnvID: "pod-1", EnvSeedTimeout: "300ms"}, "-heartbeat-ttl", "1s", "-assigner=false")
	if err != nil {
		t.Fatal(err)
	}
	if c.BotDelay != 0 || c.ID != "pod-1" || c.HeartbeatTTL != time.Second || c.Assigner || c.SeedTimeout != 300*time.Millisecond {
		t.Fatalf("config = %+v", c)
	}
}

func TestConfig_RefusesWhatCannotWork(t *testing.T) {
	for name, args := range map[string][]string{
		"id with a comma":         {"-id", "a,b"},
		"no inbox":                {"-inbox", "0"},
		"poll slower than death":  {"-poll-interval", "5s", "-heartbeat-ttl", "3s"},
		"tiny heartbeat":          {"-heartbeat-ttl", "10ms"},
		"event stream too short":  {"-event-maxlen", "100"},
		"negative bot delay":      {"-bot-delay", "-1s"},
		"no time for a move":      {"-move-timeout", "0s"},
		"no time for the seeds":   {"-seed-timeout", "0s"},
		"seeds awaited for ever":  {"-seed-timeout", "1h"},
		"finished tables forever": {"-finished-ttl", "0s"},
	} {
		if _, err := load(nil, args...); !errors.Is(err, daemon.ErrConfig) {
			t.Errorf("%s: Load = %v, want ErrConfig", name, err)
		}
	}
	if _, err := load(nil, "-help"); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-help = %v", err)
	}
}
