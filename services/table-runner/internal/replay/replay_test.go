package replay

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/fairdeal"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/services/table-runner/internal/table"
	"github.com/pulka/pulka/services/table-runner/internal/tablelog"
)

// logTable logs a classic table of four bots as a runner does — the
// genesis, then one tick step per bot move — for steps steps, and returns
// the table. tamper, when not nil, may change a step's events before they
// are logged.
func logTable(t *testing.T, rdb *redis.Client, id string, steps int, tamper func(step int, evs []*tablev1.Event)) *table.Table {
	t.Helper()
	ctx := context.Background()
	lease, err := streams.NewLeases(rdb, time.Minute).Acquire(ctx, streams.TableLease(id), "me")
	if err != nil {
		t.Fatal(err)
	}
	pub := streams.NewPublisher(rdb)
	appendStep := func(input, genesis []byte, evs []*tablev1.Event) {
		entries, err := tablelog.Entries(id, lease.Epoch, input, genesis, evs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pub.AppendFenced(ctx, lease, entries...); err != nil {
			t.Fatal(err)
		}
	}
	set := tablesettings.ClassicSettings(scoring.DefaultSettings())
	set.BotDelay = time.Second
	bots := make([]table.SeatInfo, 4)
	for i := range bots {
		bots[i] = table.SeatInfo{Name: "bot", Bot: true}
	}
	now := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	tbl, evs, err := table.New(id, "g-"+id, set, bots, now, table.Entropy(fairdeal.LocalKey(5, 0)))
	if err != nil {
		t.Fatal(err)
	}
	genesis, err := tbl.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	appendStep(nil, genesis, evs)
	for n := 1; n <= steps && !tbl.Over(); n++ {
		at, ok := tbl.NextDeadline()
		if !ok {
			t.Fatal("no deadline")
		}
		in := table.Tick(at)
		in.Entropy = table.Entropy(fairdeal.LocalKey(5, uint32(n)))
		evs, err := tbl.Apply(in)
		if err != nil || len(evs) == 0 {
			t.Fatalf("tick: %d events, %v", len(evs), err)
		}
		input, err := table.MarshalInput(table.ForLog(in, evs))
		if err != nil {
			t.Fatal(err)
		}
		if tamper != nil {
			tamper(n, evs)
		}
		appendStep(input, nil, evs)
	}
	return tbl
}

// run runs the subcommand as main does and returns its exit code and output.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(context.Background(), args, func(string) string { return "" }, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestMain_ReplaysALogAndPrintsWhatItReplaysTo: a log written as a runner
// writes it replays to the table that wrote it — the same last seq, the
// hand being played and its key — and a log whose event was changed
// afterwards is refused with the step that differs.
func TestMain_ReplaysALogAndPrintsWhatItReplaysTo(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	tbl := logTable(t, rdb, "t1", 60, nil)

	code, out, errOut := run(t, "-redis-addr", srv.Addr(), "-table", "t1", "-dealt-key")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	sd, ok := tbl.CurrentSeeds()
	if !ok || !sd.Dealt {
		t.Fatalf("the table has no dealt hand: %+v", sd)
	}
	key, err := sd.Key()
	if err != nil {
		t.Fatal(err)
	}
	if res.Table != "t1" || res.Steps != 61 || res.Seq != tbl.Seq() || res.Events != int(tbl.Seq()) || res.Over ||
		res.Hand == nil || *res.Hand != sd.Hand.Index || !res.Dealt || res.DealtKey != hex.EncodeToString(key[:]) {
		t.Fatalf("replay printed %+v; the table is at seq %d, hand %d, key %x", res, tbl.Seq(), sd.Hand.Index, key)
	}

	// Without -dealt-key the secret is not printed.
	if _, out, _ := run(t, "-redis-addr", srv.Addr(), "-table", "t1"); strings.Contains(out, "dealt_key") {
		t.Fatalf("the key printed without -dealt-key: %s", out)
	}

	// One event of a log changed before it was written: the replay gives
	// another.
	logTable(t, rdb, "t2", 60, func(step int, evs []*tablev1.Event) {
		if step == 30 {
			evs[0].CausedBy = "someone"
		}
	})
	if code, out, errOut := run(t, "-redis-addr", srv.Addr(), "-table", "t2"); code != 1 || out != "" ||
		!strings.Contains(errOut, "does not replay") || !strings.Contains(errOut, "step 30") {
		t.Fatalf("a changed log: exit %d, printed %q, %q", code, out, errOut)
	}

	// No log at all; no table named.
	if code, _, errOut := run(t, "-redis-addr", srv.Addr(), "-table", "t3"); code != 1 || !strings.Contains(errOut, "no log") {
		t.Fatalf("a table without a log: exit %d, %q", code, errOut)
	}
	if code, _, errOut := run(t, "-redis-addr", srv.Addr()); code != 2 || !strings.Contains(errOut, "-table") {
		t.Fatalf("no -table: exit %d, %q", code, errOut)
	}
}
