// Package replay is `table-runner replay`: it reads a table's whole log from
// Redis (its event stream, tablelog), replays it purely — the genesis
// restored and every logged input applied again, as a runner restoring the
// table would — and checks that each step gives the logged events byte for
// byte, the lease epoch aside (tablelog.Verify). It prints what the log
// replays to as one JSON object (Result) and exits 0; a log that does not
// replay exits 1 with the first difference.
//
// It is how code outside the runner gets the state machine's truth of a
// table without linking the runner's packages: the end-to-end tests check
// every game's log with it, and an operator can check a table's.
package replay

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/services/table-runner/internal/tablelog"
)

// Command is the subcommand's name: table-runner replay -table <id>.
const Command = "replay"

// Result is what a log replays to.
type Result struct {
	Table string `json:"table"`
	// Steps and Events count the log's steps (the genesis included) and
	// events.
	Steps  int `json:"steps"`
	Events int `json:"events"`
	// Seq is the table's last event seq; Over says its game ended.
	Seq  uint64 `json:"seq"`
	Over bool   `json:"over"`
	// Hand is the hand being seeded or played (absent when none is), Dealt
	// whether it has been dealt.
	Hand  *uint32 `json:"hand,omitempty"`
	Dealt bool    `json:"dealt,omitempty"`
	// DealtKey is the dealt hand's shuffle key, hex, with -dealt-key only:
	// a secret until the hand's reveal, which anyone who can read the log
	// (it holds the entropy the server seeds come from) could work out
	// anyway. Tests that must plan a hand's play read it.
	DealtKey string `json:"dealt_key,omitempty"`
}

// config is the subcommand's: the Redis settings every service has, and
// the table.
type config struct {
	daemon.Base
	table    string
	dealtKey bool
}

// RegisterFlags declares the Redis flags every service has, -table and
// -dealt-key.
func (c *config) RegisterFlags(f *daemon.Flags) {
	c.Base.RegisterFlags(f)
	f.FlagSet().StringVar(&c.table, "table", "", "the table whose log to replay (required)")
	f.FlagSet().BoolVar(&c.dealtKey, "dealt-key", false, "also print the dealt hand's shuffle key (a secret until its reveal)")
}

// Validate reports every problem at once.
func (c *config) Validate() error {
	err := c.Base.Validate()
	if c.table == "" {
		err = errors.Join(err, fmt.Errorf("%w: -table is required", daemon.ErrConfig))
	}
	return err
}

// Main runs the subcommand with its arguments (those after "replay") and
// returns the exit code: 0 with the Result printed, 1 when the log cannot
// be read or does not replay, 2 for bad arguments.
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	name := "table-runner " + Command
	var cfg config
	if err := daemon.Load(&cfg, name, args, getenv, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	opts, err := cfg.RedisOptions()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	rdb := redis.NewUniversalClient(opts)
	defer func() { _ = rdb.Close() }()
	res, err := Replay(ctx, rdb, cfg.table, cfg.dealtKey)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	if err := enc.Encode(res); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

// Replay reads tableID's log and replays it (see the package doc).
func Replay(ctx context.Context, rdb redis.UniversalClient, tableID string, dealtKey bool) (Result, error) {
	res := Result{Table: tableID}
	steps, err := tablelog.Read(ctx, rdb, tableID)
	if err != nil {
		return res, fmt.Errorf("read the log of %s: %w", tableID, err)
	}
	if len(steps) == 0 {
		return res, fmt.Errorf("%s: %w", tableID, tablelog.ErrNotStarted)
	}
	t, err := tablelog.Verify(steps)
	if err != nil {
		return res, fmt.Errorf("the log of %s: %w", tableID, err)
	}
	res.Steps = len(steps)
	for _, s := range steps {
		res.Events += len(s.Events)
	}
	res.Seq, res.Over = t.Seq(), t.Over()
	if sd, ok := t.CurrentSeeds(); ok {
		res.Hand, res.Dealt = &sd.Hand.Index, sd.Dealt
		if dealtKey && sd.Dealt {
			k, err := sd.Key()
			if err != nil {
				return res, fmt.Errorf("the key of hand %d of %s: %w", sd.Hand.Index, tableID, err)
			}
			res.DealtKey = hex.EncodeToString(k[:])
		}
	}
	return res, nil
}
