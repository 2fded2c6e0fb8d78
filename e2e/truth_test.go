package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/pulka/pulka/pkg/assign"
	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/classic"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	runnerv1 "github.com/pulka/pulka/pkg/gen/pulka/runner/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/tools/record"
	stackplan "github.com/pulka/pulka/tools/stack"
	"github.com/pulka/pulka/tools/stack/stacktest"
)

// headerInput is the header field of the runner's log
// (services/table-runner/internal/tablelog, docs/table-runner.md "The log")
// on the first entry of each step that applied an input: the input.
const headerInput = "input"

// logEntry is one event of a table's event stream: the event as the runner
// wrote it, and on the first entry of a step the input it applied. An
// entry that packs a seat's legal moves (wire.FieldLegal) is two logEntries
// with its ID, the second Packed.
type logEntry struct {
	ID     string
	Ev     *tablev1.Event
	Input  *runnerv1.Input
	Packed bool
}

// inputVersion is the first byte of the runner's logged inputs: the
// framing of pulka.runner.v1.Input (proto/pulka/runner/v1/input.proto) the
// runners of this tree write, before the message's length as a uvarint.
const inputVersion = 3

// decodeInput reads a step's "input" header by its contract.
func decodeInput(b []byte) (*runnerv1.Input, error) {
	if len(b) == 0 || b[0] != inputVersion {
		return nil, fmt.Errorf("an input of %d bytes is not of version %d", len(b), inputVersion)
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || n != uint64(len(b)-1-k) {
		return nil, errors.New("the input's length does not match its data")
	}
	in := &runnerv1.Input{}
	if err := proto.Unmarshal(b[1+k:], in); err != nil {
		return nil, err
	}
	return in, nil
}

// readLog reads a table's whole event stream.
func readLog(ctx context.Context, rdb redis.UniversalClient, tableID string) ([]logEntry, error) {
	var out []logEntry
	after := "0"
	for {
		msgs, err := streams.ReadAfter(ctx, rdb, streams.TableEvents(tableID), after, 1000)
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			ev, packed, err := wire.DecodeEventEntry(m.Data, m.Header)
			if err != nil {
				return nil, fmt.Errorf("event %s: %w", m.ID, err)
			}
			e := logEntry{ID: m.ID, Ev: ev}
			if in, ok := m.Header[headerInput]; ok {
				if e.Input, err = decodeInput([]byte(in)); err != nil {
					return nil, fmt.Errorf("input at %s: %w", m.ID, err)
				}
			}
			out = append(out, e)
			if packed != nil {
				out = append(out, logEntry{ID: m.ID, Ev: packed, Packed: true})
			}
		}
		if len(msgs) < 1000 {
			return out, nil
		}
		after = msgs[len(msgs)-1].ID
	}
}

// mustReadLog is readLog that fails the test on an error.
func mustReadLog(t testing.TB, rdb redis.UniversalClient, tableID string) []logEntry {
	t.Helper()
	log, err := readLog(context.Background(), rdb, tableID)
	if err != nil {
		t.Fatalf("read the log of %s: %v", tableID, err)
	}
	return log
}

// kind is the name of the event's oneof case ("card_played").
func kind(ev *tablev1.Event) string {
	oneof := ev.ProtoReflect().Descriptor().Oneofs().ByName("event")
	if fd := ev.ProtoReflect().WhichOneof(oneof); fd != nil {
		return string(fd.Name())
	}
	return "none"
}

// describe formats an event on one line for failure messages.
func describe(id string, ev *tablev1.Event) string {
	vis := ev.GetVisibility()
	who := strings.TrimPrefix(vis.GetAudience().String(), "AUDIENCE_")
	switch vis.GetAudience() {
	case tablev1.Audience_AUDIENCE_SEAT:
		who += fmt.Sprint(vis.GetSeat())
	case tablev1.Audience_AUDIENCE_PLAYER:
		who += " " + vis.GetPlayerId()
	}
	body := ""
	oneof := ev.ProtoReflect().Descriptor().Oneofs().ByName("event")
	if fd := ev.ProtoReflect().WhichOneof(oneof); fd != nil {
		body = fmt.Sprint(ev.ProtoReflect().Get(fd).Message().Interface())
	}
	return fmt.Sprintf("%s seq=%d epoch=%d %s [%s] caused_by=%q %s", id, ev.GetSeq(), ev.GetEpoch(), kind(ev), who, ev.GetCausedBy(), body)
}

// logTail formats the last n entries of a table's log.
func logTail(ctx context.Context, rdb redis.UniversalClient, tableID string, n int) string {
	log, err := readLog(ctx, rdb, tableID)
	if err != nil {
		return err.Error()
	}
	if len(log) > n {
		log = log[len(log)-n:]
	}
	var b strings.Builder
	for _, e := range log {
		step := ""
		if e.Input != nil {
			step = " <" + e.Input.GetKind().String() + ">"
		}
		fmt.Fprintf(&b, "  %s%s\n", describe(e.ID, e.Ev), step)
	}
	return b.String()
}

// tableStarted reads the TableStarted the assigner stored for the table:
// the seats, the settings and the seed the game was created from.
func tableStarted(t testing.TB, rdb redis.UniversalClient, tableID string) *lobbyv1.TableStarted {
	t.Helper()
	raw, err := rdb.Get(context.Background(), assign.StartKey(tableID)).Bytes()
	if err != nil {
		t.Fatalf("read the start of %s: %v", tableID, err)
	}
	ts := &lobbyv1.TableStarted{}
	if err := proto.Unmarshal(raw, ts); err != nil {
		t.Fatal(err)
	}
	return ts
}

// classicScoring is the scoring settings of a classic table.
func classicScoring(ts *lobbyv1.TableSettings) scoring.Settings {
	s := scoring.Settings{Premia: ts.GetPremia(), Moshla: ts.GetMoshla(), RestDocked: ts.GetRestDocked(), Variant: classic.Nines}
	if ts.GetClassicVariant() == lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD {
		s.Variant = classic.Standard
	}
	switch ts.GetKhishti() {
	case lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_500:
		s.Khishti = scoring.Khishti500
	case lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_100:
		s.Khishti = scoring.Khishti100
	case lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_PER_CARD:
		s.Khishti = scoring.KhishtiPerCard
	default:
		s.Khishti = scoring.Khishti200
	}
	return s
}

// handTruth is what the pure replay says about one hand's cards.
type handTruth struct {
	// private is every card dealt to the seat in the hand's private events
	// (first cards, the deal, Japanese face-down cards reaching the hand).
	private [classic.Seats]cards.Set
	// faceUp is each seat's face-up column cards (Japanese).
	faceUp [classic.Seats]cards.Set
	// turned is the card turned for trump (classic), NoCard if none.
	turned cards.Card
}

// held is every card seat holds at some point of the hand.
func (h *handTruth) held(seat int) cards.Set { return h.private[seat] | h.faceUp[seat] }

// truth replays a record move by move with the rules engine and returns,
// per hand, which cards each seat was dealt: the ground truth the frames
// are checked against.
func truth(rec *record.Record) ([]handTruth, error) {
	var hands []handTruth
	at := func(h int) *handTruth {
		for len(hands) <= h {
			hands = append(hands, handTruth{turned: cards.NoCard})
		}
		return &hands[h]
	}
	if rec.Game == record.Classic {
		g, err := classic.NewLive(classic.Settings{Variant: rec.Classic.Variant})
		if err != nil {
			return nil, err
		}
		note := func(evs []classic.Event) {
			for _, e := range evs {
				switch e.Kind {
				case classic.EventDealt, classic.EventFirstCards:
					h := at(int(e.Hand))
					h.private[e.To] |= e.Cards
				case classic.EventTrumpTurned:
					at(int(e.Hand)).turned = e.Card
				}
			}
		}
		for i, text := range rec.Moves {
			if g.AwaitingDeal() {
				k, err := rec.HandKey(g.HandIndex())
				if err != nil {
					return nil, err
				}
				evs, err := g.Deal(k, nil)
				if err != nil {
					return nil, err
				}
				note(evs)
			}
			var m classic.Move
			if err := m.UnmarshalText([]byte(text)); err != nil {
				return nil, fmt.Errorf("move %d %q: %w", i, text, err)
			}
			evs, err := g.Apply(m, nil)
			if err != nil {
				return nil, fmt.Errorf("move %d %q: %w", i, text, err)
			}
			note(evs)
		}
		return hands, nil
	}
	g, err := japanese.NewLive(*rec.Japanese)
	if err != nil {
		return nil, err
	}
	note := func(evs []japanese.Event) {
		for _, e := range evs {
			switch e.Kind {
			case japanese.EventDealt:
				h := at(int(e.Hand))
				h.private[e.To] |= e.Cards
			case japanese.EventFaceDownToHand:
				h := at(int(e.Hand))
				h.private[e.Seat] = h.private[e.Seat].With(e.Card)
			case japanese.EventColumnsDealt:
				h := at(int(e.Hand))
				for _, c := range e.Columns {
					if c != cards.NoCard {
						h.faceUp[e.Seat] = h.faceUp[e.Seat].With(c)
					}
				}
			}
		}
	}
	for i, text := range rec.Moves {
		if g.AwaitingDeal() {
			k, err := rec.HandKey(g.Hand())
			if err != nil {
				return nil, err
			}
			evs, err := g.Deal(k, nil)
			if err != nil {
				return nil, err
			}
			note(evs)
		}
		var m japanese.Move
		if err := m.UnmarshalText([]byte(text)); err != nil {
			return nil, fmt.Errorf("move %d %q: %w", i, text, err)
		}
		evs, err := g.Apply(m, nil)
		if err != nil {
			return nil, fmt.Errorf("move %d %q: %w", i, text, err)
		}
		note(evs)
	}
	return hands, nil
}

// replayed is what `table-runner replay` says a table's log replays to
// (services/table-runner/internal/replay's Result).
type replayed struct {
	Steps    int     `json:"steps"`
	Events   int     `json:"events"`
	Seq      uint64  `json:"seq"`
	Over     bool    `json:"over"`
	Hand     *uint32 `json:"hand"`
	Dealt    bool    `json:"dealt"`
	DealtKey string  `json:"dealt_key"`
}

// replayLog checks tableID's log in the Redis rdb is a client of as the
// table-runner's restore uses it: `table-runner replay` restores the
// genesis and applies every logged input again in one process, which must
// yield exactly the logged events (the epoch, which only says who wrote an
// event, aside). So the game a crash interrupted is the game a no-crash run
// of the same inputs gives, event for event. With dealtKey the result
// carries the dealt hand's key, which only the server could know.
func replayLog(ctx context.Context, rdb redis.UniversalClient, tableID string, dealtKey bool) (replayed, error) {
	var r replayed
	bin, err := stacktest.Binaries()
	if err != nil {
		return r, err
	}
	args := []string{"replay", "-table", tableID}
	switch c := rdb.(type) {
	case *redis.Client:
		args = append(args, "-redis-addr", c.Options().Addr)
	case *redis.ClusterClient:
		args = append(args, "-redis-addr", strings.Join(c.Options().Addrs, ","), "-redis-cluster")
	default:
		return r, fmt.Errorf("replay: a Redis client of type %T", rdb)
	}
	if dealtKey {
		args = append(args, "-dealt-key")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, stackplan.TableRunner), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return r, fmt.Errorf("%s: %w: %s", cmd, err, stderr.Bytes())
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return r, fmt.Errorf("%s printed %q: %w", cmd, out, err)
	}
	return r, nil
}

// cellRow is one seat's cell of a sheet row, in whole points.
type cellRow struct {
	Bid    int // -1: none (Japanese)
	Tricks int
	Value  int64 // points, or the khishti penalty (negative)
	Struck bool
}

// flatSheet is a sheet reduced to what a player reads on it, so the
// scoring service's sheet and the pure scoring.Build can be compared cell
// by cell.
type flatSheet struct {
	Hands  [][]cellRow
	Pulkas []pulkaRow
	Totals []int64
}

type pulkaRow struct {
	Finished bool
	Premia   []int64
	Moshla   []int64
	Total    []int64
}

func flatProto(s *scoringv1.Sheet) flatSheet {
	var out flatSheet
	for _, p := range s.GetPulkas() {
		pr := pulkaRow{Finished: p.GetFinished()}
		for _, h := range p.GetHands() {
			row := make([]cellRow, len(h.GetCells()))
			for _, c := range h.GetCells() {
				bid := -1
				if c.Bid != nil {
					bid = int(c.GetBid())
				}
				row[c.GetSeat()] = cellRow{Bid: bid, Tricks: int(c.GetTricks()), Value: c.GetPoints() + c.GetPenalty(), Struck: c.GetStruck()}
			}
			out.Hands = append(out.Hands, row)
		}
		pr.Premia, pr.Moshla, pr.Total = make([]int64, len(p.GetTotals())), make([]int64, len(p.GetTotals())), make([]int64, len(p.GetTotals()))
		for _, st := range p.GetTotals() {
			pr.Premia[st.GetSeat()], pr.Moshla[st.GetSeat()], pr.Total[st.GetSeat()] = st.GetPremia(), st.GetMoshla(), st.GetTotal()
		}
		out.Pulkas = append(out.Pulkas, pr)
	}
	out.Totals = make([]int64, len(s.GetTotals()))
	for _, st := range s.GetTotals() {
		out.Totals[st.GetSeat()] = st.GetTotal()
	}
	return out
}

// flatReplay is the sheet of a replayed record.
func flatReplay(res *record.Result) flatSheet {
	var out flatSheet
	if res.Game == record.Japanese {
		pr := pulkaRow{Finished: res.Over, Premia: []int64{0, 0}, Moshla: []int64{0, 0}, Total: make([]int64, japanese.Seats)}
		for _, h := range res.Japanese.HandResults() {
			row := make([]cellRow, japanese.Seats)
			for s := range japanese.Seats {
				row[s] = cellRow{Bid: -1, Tricks: h.Tricks[s], Value: int64(h.Points[s])}
			}
			out.Hands = append(out.Hands, row)
		}
		for s := range japanese.Seats {
			pr.Total[s] = int64(res.Scores[s])
		}
		out.Pulkas = []pulkaRow{pr}
		out.Totals = append([]int64(nil), pr.Total...)
		return out
	}
	sh := res.Sheet
	for _, p := range sh.Pulkas {
		pr := pulkaRow{Finished: p.Finished}
		for h := p.First; h < p.First+p.Played; h++ {
			r := sh.Hands[h]
			row := make([]cellRow, scoring.Seats)
			for s := range scoring.Seats {
				row[s] = cellRow{Bid: r.Bids[s], Tricks: r.Tricks[s], Value: int64(r.Points[s]), Struck: r.Struck[s]}
			}
			out.Hands = append(out.Hands, row)
		}
		for s := range scoring.Seats {
			pr.Premia = append(pr.Premia, int64(p.Premia[s]))
			pr.Moshla = append(pr.Moshla, int64(p.Moshla[s]))
			pr.Total = append(pr.Total, int64(p.Total[s]))
		}
		out.Pulkas = append(out.Pulkas, pr)
	}
	for s := range scoring.Seats {
		out.Totals = append(out.Totals, int64(sh.Total[s]))
	}
	return out
}

// diffSheets returns the first difference between two flat sheets, "" if
// none.
func diffSheets(got, want flatSheet) string {
	if len(got.Hands) != len(want.Hands) {
		return fmt.Sprintf("%d hands on the sheet, the replay has %d", len(got.Hands), len(want.Hands))
	}
	for h := range got.Hands {
		if fmt.Sprint(got.Hands[h]) != fmt.Sprint(want.Hands[h]) {
			return fmt.Sprintf("hand %d: sheet %+v, replay %+v", h, got.Hands[h], want.Hands[h])
		}
	}
	if len(got.Pulkas) != len(want.Pulkas) {
		return fmt.Sprintf("%d pulkas on the sheet, the replay has %d", len(got.Pulkas), len(want.Pulkas))
	}
	for p := range got.Pulkas {
		if fmt.Sprint(got.Pulkas[p]) != fmt.Sprint(want.Pulkas[p]) {
			return fmt.Sprintf("pulka %d: sheet %+v, replay %+v", p, got.Pulkas[p], want.Pulkas[p])
		}
	}
	if fmt.Sprint(got.Totals) != fmt.Sprint(want.Totals) {
		return fmt.Sprintf("totals: sheet %v, replay %v", got.Totals, want.Totals)
	}
	return ""
}

// cardsIn lists every card a message mentions anywhere (any field of the
// pulka.common.v1.Card enum, however deep), so that no field a check did
// not think of can carry a card past it.
func cardsIn(m protoreflect.Message) []cards.Card {
	var out []cards.Card
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Kind() == protoreflect.EnumKind && fd.Enum().FullName() == "pulka.common.v1.Card":
			if fd.IsList() {
				for i := range v.List().Len() {
					if e := v.List().Get(i).Enum(); e != 0 { // unspecified: an empty column
						out = append(out, cards.Card(e-1))
					}
				}
			} else if v.Enum() != 0 {
				out = append(out, cards.Card(v.Enum()-1))
			}
		case fd.Kind() == protoreflect.MessageKind && fd.IsList():
			for i := range v.List().Len() {
				out = append(out, cardsIn(v.List().Get(i).Message())...)
			}
		case fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
			out = append(out, cardsIn(v.Message())...)
		}
		return true
	})
	return out
}
