package wsclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/table"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/wire"
)

// gatewayBody is ev's body as the gateway writes it (wire.Event): without
// the fields it strips, protojson with proto names, compact.
func gatewayBody(tb testing.TB, ev *tablev1.Event) []byte {
	tb.Helper()
	out := proto.CloneOf(ev)
	out.Trace, out.Epoch, out.CommandEntryId = nil, 0, ""
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(out)
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// spaced is body as the other half of protojson builds write it (see
// cursor.separator): a space after every comma between fields or elements.
func spaced(body []byte) []byte {
	var out []byte
	inString, escaped := false, false
	for _, ch := range body {
		out = append(out, ch)
		switch {
		case escaped:
			escaped = false
		case inString && ch == '\\':
			escaped = true
		case ch == '"':
			inString = !inString
		case !inString && ch == ',':
			out = append(out, ' ')
		}
	}
	return out
}

// kindOf is the name of ev's oneof member ("" for none).
func kindOf(ev *tablev1.Event) string {
	m := ev.ProtoReflect()
	if fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("event")); fd != nil {
		return string(fd.Name())
	}
	return ""
}

// fastKinds are the events decodeEventJSON reads; "" is an event without
// a member.
var fastKinds = map[string]bool{
	"": true, "player_left": true, "seat_taken_by_bot": true, "player_away": true, "player_back": true,
	"hand_started": true, "dealt": true, "trump_turned": true, "trump_chosen": true, "bid_made": true,
	"timer_started": true, "card_played": true, "trick_won": true, "hand_ended": true, "pulka_ended": true,
	"hand_committed": true, "client_seed_accepted": true, "hand_revealed": true,
}

// commitRevealKinds are the fast kinds of the per-hand commit–reveal deal.
// The random games' players send no client seeds (a hand is dealt at its
// seed deadline), so client_seed_accepted never comes up in them; and until
// pkg/table deals commit–reveal, neither do the other two. The real-games
// test asks only for what the games make; TestDecodeEventJSON_Rules covers
// all three either way.
var commitRevealKinds = map[string]bool{"hand_committed": true, "client_seed_accepted": true, "hand_revealed": true}

// playRandomGame plays one game at a pkg/table table and returns all its
// events: classic (some seats bots, standard or nines) or Japanese, by seed.
// The players mostly make random legal moves (Model.Legal); now and then
// the clock runs to the next deadline (timer and bot moves), a player goes
// away and comes back or not (grace expiry), leaves, sits again or sends a
// move the table refuses.
func playRandomGame(tb testing.TB, seed uint64) []*tablev1.Event {
	tb.Helper()
	_, all := playRandomTable(tb, seed, nil)
	return all
}

// playRandomTable is playRandomGame, also returning the table (whose
// ScoringInputs the sheet tests need); names, if not nil, are the seats'
// display names.
func playRandomTable(tb testing.TB, seed uint64, names []string) (*table.Table, []*tablev1.Event) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x6a736f6e))
	japanese := seed%3 == 0
	var s tablesettings.Settings
	n := 4
	if japanese {
		s = tablesettings.JapaneseSettings([]int{11, 15, 21, 31}[rng.IntN(4)])
		s.ReconnectGrace = time.Hour // an expired grace forfeits the match
		n = 2
	} else {
		sc := scoring.DefaultSettings()
		if rng.IntN(3) == 0 {
			sc.Variant = classic.Nines
		}
		s = tablesettings.ClassicSettings(sc)
		s.BotDelay = []time.Duration{0, 500 * time.Millisecond}[rng.IntN(2)]
		s.ReconnectGrace = time.Duration(5+rng.IntN(60)) * time.Second
	}
	s.MoveTimeout = time.Duration(1+rng.IntN(20)) * time.Second
	seats := make([]table.SeatInfo, n)
	models := make([]*Model, n)
	for i := range seats {
		p := "p" + strconv.Itoa(i)
		seats[i] = table.SeatInfo{PlayerID: p, Name: "Player " + strconv.Itoa(i)}
		if !japanese && i > 0 && rng.IntN(4) == 0 {
			seats[i] = table.SeatInfo{Bot: true, Name: "Bot " + strconv.Itoa(i)}
		}
		if names != nil {
			seats[i].Name = names[i%len(names)]
		}
		models[i] = NewModel("t1", seats[i].PlayerID)
	}
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	t, all, err := table.New("t1", "g"+strconv.FormatUint(seed, 10), s, seats, now, table.Entropy(fairdeal.LocalKey(seed, 0)))
	if err != nil {
		tb.Fatal(err)
	}
	feed := func(evs []*tablev1.Event) {
		for _, ev := range evs {
			for i, m := range models {
				if visibleTo(ev, i, m.PlayerID) {
					m.Apply(ev)
				}
			}
		}
	}
	feed(all)
	apply := func(in table.Input) {
		in.Entropy = table.Entropy(fairdeal.LocalKey(seed, uint32(rng.Uint32()))) // the runner's crypto/rand
		evs, _ := t.Apply(in)                                                     // refusals are events too
		all = append(all, evs...)
		feed(evs)
	}
	entry := 0
	send := func(player string, c *tablev1.Command) {
		entry++
		c.CommandId, c.PlayerId, c.TableId = fmt.Sprintf("%s/k%d", player, entry), player, "t1"
		apply(table.CommandInput(c, fmt.Sprintf("%d-0", entry), now))
	}
	tick := func() {
		if at, ok := t.NextDeadline(); ok {
			if at.After(now) {
				now = at
			}
			apply(table.Tick(now))
		}
	}
	for step := 0; step < 20000 && !t.Over(); step++ {
		now = now.Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
		seat := rng.IntN(n)
		p := "p" + strconv.Itoa(seat)
		switch r := rng.IntN(200); {
		case r < 10:
			tick()
		case r < 13:
			apply(table.Away(p, now))
		case r < 17:
			apply(table.Back(p, now))
		case r == 17 && !japanese:
			send(p, &tablev1.Command{Command: &tablev1.Command_Leave{Leave: &tablev1.LeaveCommand{}}})
		case r == 18:
			send(p, &tablev1.Command{Command: &tablev1.Command_Sit{Sit: &tablev1.SitCommand{Seat: uint32(seat)}}})
		case r == 19:
			send(p, &tablev1.Command{Command: &tablev1.Command_Bid{Bid: &tablev1.BidCommand{Tricks: 10}}})
		default:
			mover := -1
			for i, m := range models {
				if m.PlayerID != "" && m.MyTurn() {
					mover = i
				}
			}
			if mover < 0 {
				tick()
				continue
			}
			m := models[mover]
			legal := m.Legal()
			if len(legal) == 0 {
				tick()
				continue
			}
			entry++
			c, err := commandOf(legal[rng.IntN(len(legal))], "t1", m.PlayerID, fmt.Sprintf("k%d", entry))
			if err != nil {
				tb.Fatal(err)
			}
			apply(table.CommandInput(c, fmt.Sprintf("%d-0", entry), now))
		}
	}
	return t, all
}

// TestDecodeEventJSON_RealGamesDecodeAsWithProtojson: every event of many
// random games, in both layouts protojson writes, decodes by hand exactly
// as protojson decodes it, and every event of the kinds the fast path
// knows takes it (so that the test fails if it silently never runs).
func TestDecodeEventJSON_RealGamesDecodeAsWithProtojson(t *testing.T) {
	games := 30
	if testing.Short() {
		games = 6
	}
	fast := map[string]int{}     // fast-path hits by kind, compact layout
	spacedFast := 0              // fast-path hits, ", " layout
	slow := map[string]int{}     // protojson's, by kind, compact layout
	features := map[string]int{} // things the hot kinds must have shown
	at := time.Unix(1, 0)
	for seed := uint64(1); seed <= uint64(games); seed++ {
		for i, ev := range playRandomGame(t, seed) {
			kind := kindOf(ev)
			compact := gatewayBody(t, ev)
			for layout, body := range [][]byte{compact, spaced(compact)} {
				want := &tablev1.Event{}
				if err := protoIn.Unmarshal(body, want); err != nil {
					t.Fatalf("seed %d: protojson refuses its own output (%v): %s", seed, err, body)
				}
				got, ok := decodeEventJSON(body)
				switch {
				case ok && !proto.Equal(got, want):
					t.Fatalf("seed %d: %s\nby hand  %v\nprotojson %v", seed, body, got, want)
				case fastKinds[kind] && !ok:
					t.Fatalf("seed %d: the fast path refused a %q event: %s", seed, kind, body)
				case !fastKinds[kind] && ok:
					t.Fatalf("seed %d: the fast path took a %q event, which it does not know: %s", seed, kind, body)
				}
				switch {
				case ok && layout == 0:
					fast[kind]++
				case ok:
					spacedFast++
				case layout == 0:
					slow[kind]++
				}
			}
			// The whole frame as this test binary's protojson writes it.
			frame, err := wire.Event("t1", fmt.Sprintf("1-%d", i), ev)
			if err != nil {
				t.Fatal(err)
			}
			f, ok := decodeEventFrame(frame, at)
			full, err := decodeFrame(frame, at)
			if !ok || err != nil || !sameFrame(f, full) {
				t.Fatalf("seed %d: frame %s: fast %v (%v), full %v (%v)", seed, frame, f, ok, full, err)
			}
			// The gateway's encoder (wire's own, not protojson, for these
			// kinds) must write what the fast path reads, or the load
			// generator would silently pay for protojson again.
			if fastKinds[kind] && kind != "" {
				body := frame[bytes.Index(frame, []byte(`,"event":`))+len(`,"event":`) : len(frame)-1]
				if _, ok := decodeEventJSON(body); !ok {
					t.Fatalf("seed %d: wire.Event's frame of a %q event missed the fast path: %s", seed, kind, frame)
				}
			}
			if ev.GetTimer() != nil {
				features["an event with a timer"]++
			}
			if cp := ev.GetCardPlayed(); cp != nil {
				if cp.Column != nil && *cp.Column == 0 {
					features["card_played from column 0"]++
				}
				if cp.Declaration != nil {
					features["card_played with a joker declaration"]++
				}
				if cp.ByServer {
					features["card_played by the server"]++
				}
			}
			for _, r := range ev.GetHandEnded().GetResults() {
				if r.Points < 0 || r.Penalty < 0 {
					features["hand_ended with a negative number"]++
				}
			}
		}
	}
	dealsCommitted := fast["hand_committed"] > 0
	for kind := range fastKinds {
		if kind != "" && fast[kind] == 0 && (!commitRevealKinds[kind] || (dealsCommitted && kind != "client_seed_accepted")) {
			t.Errorf("no %q event took the fast path in %d games", kind, games)
		}
	}
	for _, f := range []string{"an event with a timer", "card_played from column 0", "card_played with a joker declaration",
		"card_played by the server", "hand_ended with a negative number"} {
		if features[f] == 0 {
			t.Errorf("no %s in %d games", f, games)
		}
	}
	total := 0
	for _, n := range fast {
		total += n
	}
	if spacedFast != total {
		t.Errorf("the fast path took %d events compact but %d with spaces", total, spacedFast)
	}
	t.Logf("fast path by kind: %v; protojson: %v", fast, slow)
}

// baseBody is a card_played event with a timer as the gateway writes it
// (TestDecodeEventJSON_BaseBodyIsTheGatewaysLayout); the table cases edit it.
const baseBody = `{"seq":"17","table_id":"t1","game_id":"t1-7","occurred_at":"2025-03-01T12:00:00.250Z",` +
	`"visibility":{"audience":"AUDIENCE_PUBLIC"},"caused_by":"p1/k3",` +
	`"card_played":{"seat":1,"card":"CARD_JOKER_1","declaration":{"action":"JOKER_ACTION_HIGHEST","suit":"SUIT_HEARTS"},"column":0,"by_server":true},` +
	`"timer":{"seat":2,"phase":"PHASE_PLAY","deadline":"2025-03-01T12:00:20.250Z"}}`

func TestDecodeEventJSON_BaseBodyIsTheGatewaysLayout(t *testing.T) {
	ev := &tablev1.Event{
		Seq: 17, TableId: "t1", GameId: "t1-7", Epoch: 3, CommandEntryId: "5-0",
		OccurredAt: timestamppb.New(time.Date(2025, 3, 1, 12, 0, 0, 250e6, time.UTC)),
		Visibility: &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PUBLIC},
		CausedBy:   "p1/k3",
		Event: &tablev1.Event_CardPlayed{CardPlayed: &tablev1.CardPlayed{
			Seat: 1, Card: commonv1.Card_CARD_JOKER_1, Column: proto.Uint32(0), ByServer: true,
			Declaration: &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_HIGHEST, Suit: commonv1.Suit_SUIT_HEARTS},
		}},
		Timer: &tablev1.TimerStarted{Seat: 2, Phase: tablev1.Phase_PHASE_PLAY,
			Deadline: timestamppb.New(time.Date(2025, 3, 1, 12, 0, 20, 250e6, time.UTC))},
	}
	if got := gatewayBody(t, ev); string(got) != baseBody {
		t.Fatalf("the gateway writes\n%s\nnot\n%s", got, baseBody)
	}
}

// with is baseBody with old replaced by new (exactly once).
func with(tb testing.TB, old, new string) string {
	tb.Helper()
	if strings.Count(baseBody, old) != 1 {
		tb.Fatalf("%q is not in the base body once", old)
	}
	return strings.Replace(baseBody, old, new, 1)
}

// withCardPlayed is baseBody with another card_played body.
func withCardPlayed(tb testing.TB, body string) string {
	tb.Helper()
	return with(tb, `{"seat":1,"card":"CARD_JOKER_1","declaration":{"action":"JOKER_ACTION_HIGHEST","suit":"SUIT_HEARTS"},"column":0,"by_server":true}`, body)
}

// withTime is baseBody with another occurred_at.
func withTime(tb testing.TB, ts string) string {
	tb.Helper()
	return with(tb, `"2025-03-01T12:00:00.250Z"`, `"`+ts+`"`)
}

// TestDecodeEventJSON_Rules: each rule of the layout, and what falls back.
// fast says whether the hand decoder takes the body, valid whether
// protojson does; either way unmarshalEvent decodes it as protojson does.
func TestDecodeEventJSON_Rules(t *testing.T) {
	column := func(want *uint32) func(*tablev1.Event) bool {
		return func(ev *tablev1.Event) bool {
			got := ev.GetCardPlayed().Column
			return (got == nil) == (want == nil) && (got == nil || *got == *want)
		}
	}
	seconds := func(s int64, n int32) func(*tablev1.Event) bool {
		return func(ev *tablev1.Event) bool {
			return ev.GetOccurredAt().GetSeconds() == s && ev.GetOccurredAt().GetNanos() == n
		}
	}
	for _, c := range []struct {
		name        string
		body        string
		fast, valid bool
		check       func(*tablev1.Event) bool
	}{
		{name: "the base body", body: baseBody, fast: true, valid: true},
		{name: "an empty event", body: `{}`, fast: true, valid: true},
		{name: "protojson's other layout: a space after each comma", body: string(spaced([]byte(baseBody))), fast: true, valid: true},

		// Presence and zero values.
		{name: "optional column 0 is present", body: baseBody, fast: true, valid: true, check: column(proto.Uint32(0))},
		{name: "optional column 3", body: with(t, `"column":0`, `"column":3`), fast: true, valid: true, check: column(proto.Uint32(3))},
		{name: "optional column absent", body: with(t, `"column":0,`, ``), fast: true, valid: true, check: column(nil)},
		{name: "empty sub-messages", body: `{"visibility":{},"card_played":{"declaration":{}},"timer":{}}`, fast: true, valid: true,
			check: func(ev *tablev1.Event) bool {
				return ev.Visibility != nil && ev.GetCardPlayed().Declaration != nil && ev.Timer != nil
			}},
		{name: "an empty member", body: `{"seq":"1","player_back":{}}`, fast: true, valid: true,
			check: func(ev *tablev1.Event) bool { return ev.GetPlayerBack() != nil }},
		{name: "zeros written out", body: withCardPlayed(t, `{"seat":0,"card":"CARD_UNSPECIFIED","by_server":false}`), fast: true, valid: true},
		{name: "an empty list", body: `{"dealt":{"seat":2,"cards":[]}}`, fast: true, valid: true},
		{name: "a list", body: `{"dealt":{"seat":2,"cards":["CARD_JOKER_1","CARD_ACE_OF_CLUBS"]}}`, fast: true, valid: true},
		{name: "a null field", body: with(t, `{"audience":"AUDIENCE_PUBLIC"}`, `null`), valid: true},

		// 64-bit integers.
		{name: "negative int64 strings", body: `{"hand_ended":{"hand_index":3,"results":[{"seat":1,"bid":2,"tricks":1,"penalty":"-200"},{"seat":2,"points":"-5"}]}}`, fast: true, valid: true,
			check: func(ev *tablev1.Event) bool {
				r := ev.GetHandEnded().GetResults()
				return len(r) == 2 && r[0].Penalty == -200 && r[1].Points == -5
			}},
		{name: "int64 extremes", body: `{"pulka_ended":{"results":[{"premia":"9223372036854775807","moshla":"-9223372036854775808"}]}}`, fast: true, valid: true},
		{name: "int64 over the top", body: `{"pulka_ended":{"results":[{"premia":"9223372036854775808"}]}}`},
		{name: "int64 below the bottom", body: `{"pulka_ended":{"results":[{"moshla":"-9223372036854775809"}]}}`},
		{name: "int64 -0", body: `{"pulka_ended":{"results":[{"moshla":"-0"}]}}`, valid: true},
		{name: "int64 as a bare number", body: `{"pulka_ended":{"results":[{"total":-5}]}}`, valid: true},
		{name: "int64 with a leading zero", body: `{"pulka_ended":{"results":[{"total":"05"}]}}`},
		{name: "uint64 max", body: with(t, `"seq":"17"`, `"seq":"18446744073709551615"`), fast: true, valid: true},
		{name: "uint64 overflow", body: with(t, `"seq":"17"`, `"seq":"18446744073709551616"`)},
		{name: "uint64 negative", body: with(t, `"seq":"17"`, `"seq":"-1"`)},

		// uint32.
		{name: "uint32 max", body: with(t, `"seat":2`, `"seat":4294967295`), fast: true, valid: true},
		{name: "uint32 overflow", body: with(t, `"seat":2`, `"seat":4294967296`)},
		{name: "uint32 far overflow", body: with(t, `"seat":2`, `"seat":99999999999999999999999`)},
		{name: "uint32 negative", body: with(t, `"seat":2`, `"seat":-1`)},
		{name: "uint32 leading zero", body: with(t, `"seat":2`, `"seat":02`)},
		{name: "uint32 as a string", body: with(t, `"seat":2`, `"seat":"2"`), valid: true},
		{name: "uint32 with an exponent", body: with(t, `"seat":2`, `"seat":2e0`), valid: true},
		{name: "uint32 with a fraction", body: with(t, `"seat":2`, `"seat":2.0`), valid: true},
		{name: "uint32 with a real fraction", body: with(t, `"seat":2`, `"seat":2.5`)},

		// Enums and bools.
		{name: "unknown enum name", body: with(t, `"CARD_JOKER_1"`, `"CARD_JOKER_3"`), valid: true},
		{name: "unknown enum name in a list", body: `{"dealt":{"cards":["CARD_JOKER_1","CARD_JOKER_3"]}}`, valid: true},
		{name: "enum given as a number", body: with(t, `"CARD_JOKER_1"`, `1`), valid: true},
		{name: "enum name in lower case", body: with(t, `"CARD_JOKER_1"`, `"card_joker_1"`), valid: true},
		{name: "bool as a string", body: with(t, `"by_server":true`, `"by_server":"true"`)},
		{name: "bool misspelt", body: with(t, `"by_server":true`, `"by_server":tru`)},

		// Timestamps.
		{name: "timestamp, 0 fractional digits", body: withTime(t, "2025-03-01T12:00:00Z"), fast: true, valid: true, check: seconds(1740830400, 0)},
		{name: "timestamp, 3 fractional digits", body: withTime(t, "2025-03-01T12:00:00.001Z"), fast: true, valid: true, check: seconds(1740830400, 1e6)},
		{name: "timestamp, 6 fractional digits", body: withTime(t, "2025-03-01T12:00:00.000001Z"), fast: true, valid: true, check: seconds(1740830400, 1e3)},
		{name: "timestamp, 9 fractional digits", body: withTime(t, "2025-03-01T12:00:00.123456789Z"), fast: true, valid: true, check: seconds(1740830400, 123456789)},
		{name: "timestamp, 1 fractional digit", body: withTime(t, "2025-03-01T12:00:00.5Z"), valid: true},
		{name: "timestamp, 10 fractional digits", body: withTime(t, "2025-03-01T12:00:00.1234567890Z")},
		{name: "timestamp, a dot without digits", body: withTime(t, "2025-03-01T12:00:00.Z")},
		{name: "timestamp, the epoch", body: withTime(t, "1970-01-01T00:00:00Z"), fast: true, valid: true, check: seconds(0, 0)},
		{name: "timestamp before the epoch", body: withTime(t, "1969-12-31T23:59:59.500Z"), fast: true, valid: true, check: seconds(-1, 5e8)},
		{name: "timestamp, the first instant", body: withTime(t, "0001-01-01T00:00:00Z"), fast: true, valid: true, check: seconds(-62135596800, 0)},
		{name: "timestamp, the last instant", body: withTime(t, "9999-12-31T23:59:59.999999999Z"), fast: true, valid: true, check: seconds(253402300799, 999999999)},
		{name: "timestamp, year 0", body: withTime(t, "0000-12-31T23:59:59Z")},
		{name: "timestamp, 29 February in a leap year", body: withTime(t, "2024-02-29T00:00:00Z"), fast: true, valid: true},
		{name: "timestamp, 29 February in 2000", body: withTime(t, "2000-02-29T00:00:00Z"), fast: true, valid: true},
		{name: "timestamp, 29 February in 1900", body: withTime(t, "1900-02-29T00:00:00Z")},
		{name: "timestamp, 29 February in another year", body: withTime(t, "2025-02-29T00:00:00Z")},
		{name: "timestamp, 31 April", body: withTime(t, "2025-04-31T00:00:00Z")},
		{name: "timestamp, month 13", body: withTime(t, "2025-13-01T00:00:00Z")},
		{name: "timestamp, month 0", body: withTime(t, "2025-00-01T00:00:00Z")},
		{name: "timestamp, day 0", body: withTime(t, "2025-01-00T00:00:00Z")},
		{name: "timestamp, hour 24", body: withTime(t, "2025-03-01T24:00:00Z")},
		{name: "timestamp, minute 60", body: withTime(t, "2025-03-01T12:60:00Z")},
		{name: "timestamp, leap second", body: withTime(t, "2016-12-31T23:59:60Z")},
		{name: "timestamp with an offset", body: withTime(t, "2025-03-01T14:00:00+02:00"), valid: true},
		{name: "timestamp with a zero offset", body: withTime(t, "2025-03-01T12:00:00+00:00"), valid: true},
		{name: "timestamp, lower-case z", body: withTime(t, "2025-03-01T12:00:00z")},
		{name: "timestamp, lower-case t", body: withTime(t, "2025-03-01t12:00:00Z")},
		{name: "timestamp, a space for T", body: withTime(t, "2025-03-01 12:00:00Z")},
		{name: "timestamp, no zone", body: withTime(t, "2025-03-01T12:00:00")},
		{name: "timestamp, a sign in a digit", body: withTime(t, "2025-03-01T12:00:+1Z")},
		{name: "timestamp as a number", body: with(t, `"2025-03-01T12:00:00.250Z"`, `1740830400`)},

		// Spacing, order, repetition, unknown keys.
		{name: "a space after a colon", body: with(t, `"seq":"17"`, `"seq": "17"`), valid: true},
		{name: "a space before a comma", body: with(t, `"seq":"17",`, `"seq":"17" ,`), valid: true},
		{name: "two spaces after a comma", body: with(t, `"seq":"17",`, `"seq":"17",  `), valid: true},
		{name: "a tab after a comma", body: with(t, `"seq":"17",`, "\"seq\":\"17\",\t"), valid: true},
		{name: "a newline", body: with(t, `"seq":"17",`, "\"seq\":\"17\",\n"), valid: true},
		{name: "a space after the brace", body: with(t, `{"seq"`, `{ "seq"`), valid: true},
		{name: "a leading space", body: " " + baseBody, valid: true},
		{name: "a trailing space", body: baseBody + " ", valid: true},
		{name: "reordered envelope keys", body: with(t, `"seq":"17","table_id":"t1"`, `"table_id":"t1","seq":"17"`), valid: true},
		{name: "the timer before the member", body: `{"timer":{"seat":2},"bid_made":{"seat":1}}`, valid: true},
		{name: "reordered member keys", body: withCardPlayed(t, `{"card":"CARD_JOKER_1","seat":1}`), valid: true},
		{name: "duplicate key", body: with(t, `"seq":"17"`, `"seq":"17","seq":"18"`)},
		{name: "duplicate key in a member", body: withCardPlayed(t, `{"seat":1,"seat":2}`)},
		{name: "two members", body: `{"bid_made":{"seat":1},"trick_won":{"seat":1}}`},
		{name: "the same member twice", body: `{"bid_made":{"seat":1},"bid_made":{"seat":1}}`},
		{name: "unknown envelope key", body: with(t, `"seq":"17",`, `"seq":"17","extra":{"a":[1,2]},`), valid: true},
		{name: "unknown member key", body: withCardPlayed(t, `{"seat":1,"extra":1}`), valid: true},
		{name: "unknown member", body: `{"seq":"1","future_event":{"seat":1}}`, valid: true},
		{name: "stripped envelope fields: epoch", body: with(t, `"game_id":"t1-7",`, `"game_id":"t1-7","epoch":"3",`), valid: true},
		{name: "stripped envelope fields: trace", body: with(t, `"caused_by":"p1/k3",`, `"caused_by":"p1/k3","trace":{},`), valid: true},
		{name: "stripped envelope fields: command_entry_id", body: with(t, `"caused_by":"p1/k3",`, `"caused_by":"p1/k3","command_entry_id":"5-0",`), valid: true},
		{name: "JSON names", body: with(t, `"table_id"`, `"tableId"`), valid: true},
		{name: "a comma first", body: with(t, `{"seq"`, `{,"seq"`)},
		{name: "a missing comma", body: with(t, `"seq":"17",`, `"seq":"17"`)},
		{name: "a trailing comma", body: withCardPlayed(t, `{"seat":1,}`)},
		{name: "a trailing comma in a list", body: `{"dealt":{"cards":["CARD_JOKER_1",]}}`},
		{name: "a comma first in a list", body: `{"dealt":{"cards":[,"CARD_JOKER_1"]}}`},
		{name: "something after the body", body: baseBody + "x"},
		{name: "a second body", body: baseBody + "{}"},
		{name: "cut short", body: baseBody[:len(baseBody)-1]},
		{name: "cut in a string", body: baseBody[:10]},
		{name: "nothing", body: ``},

		// Strings.
		{name: "an escape in a string", body: with(t, `"table_id":"t1"`, `"table_id":"t\u0031"`), valid: true},
		{name: "an escaped quote", body: with(t, `"table_id":"t1"`, `"table_id":"t\"1"`), valid: true},
		{name: "an escape in a key", body: with(t, `"table_id"`, `"table\u005fid"`), valid: true},
		{name: "an escape in an enum name", body: with(t, `"CARD_JOKER_1"`, `"CARD_JOKER\u005f1"`), valid: true},
		{name: "non-ASCII", body: with(t, `"caused_by":"p1/k3"`, `"caused_by":"pü"`), valid: true},
		{name: "DEL", body: with(t, `"caused_by":"p1/k3"`, "\"caused_by\":\"p\x7f\""), valid: true},
		{name: "invalid UTF-8", body: with(t, `"caused_by":"p1/k3"`, "\"caused_by\":\"p\xff\"")},
		{name: "a control character", body: with(t, `"caused_by":"p1/k3"`, "\"caused_by\":\"p\x01\"")},
		{name: "a string for a message", body: with(t, `{"audience":"AUDIENCE_PUBLIC"}`, `"public"`)},

		// The commit–reveal events and their bytes: standard base64 with
		// padding only.
		{name: "hand_committed", body: `{"seq":"4","hand_committed":{"hand_index":2,"commitment":"+/8APg==","seed_deadline":"2025-03-01T12:00:00Z","awaited_seats":[0,2]}}`,
			fast: true, valid: true, check: func(ev *tablev1.Event) bool {
				h := ev.GetHandCommitted()
				return h.GetHandIndex() == 2 && bytes.Equal(h.GetCommitment(), []byte{0xfb, 0xff, 0, 0x3e}) && len(h.GetAwaitedSeats()) == 2
			}},
		{name: "client_seed_accepted", body: `{"client_seed_accepted":{"hand_index":1,"seat":3}}`, fast: true, valid: true},
		{name: "hand_revealed", body: `{"hand_revealed":{"hand_index":5,"server_seed":"YWJj","client_seeds":["AQ==","","AQI="],"commitment":"YWI="}}`,
			fast: true, valid: true, check: func(ev *tablev1.Event) bool {
				r := ev.GetHandRevealed()
				return string(r.GetServerSeed()) == "abc" && len(r.GetClientSeeds()) == 3 && len(r.GetClientSeeds()[1]) == 0
			}},
		{name: "bytes, URL-safe base64", body: `{"hand_committed":{"commitment":"-_8APg=="}}`, valid: true},
		{name: "bytes, unpadded base64", body: `{"hand_committed":{"commitment":"+/8APg"}}`, valid: true},
		{name: "bytes, non-canonical trailing bits", body: `{"hand_committed":{"commitment":"QR=="}}`, valid: true},
		{name: "bytes, an escaped slash", body: `{"hand_committed":{"commitment":"+\/8APg=="}}`, valid: true},
		{name: "bytes, not base64", body: `{"hand_committed":{"commitment":"%%%%"}}`},
		{name: "bytes, a newline escape", body: `{"hand_committed":{"commitment":"YW\nJj"}}`, valid: true},
		{name: "bytes as a number", body: `{"hand_committed":{"commitment":12}}`},

		// Events the fast path leaves to protojson.
		{name: "game_started", body: `{"seq":"1","game_started":{"seats":[{"seat":0,"player_id":"p0","display_name":"Ana"}]}}`, valid: true},
		{name: "move_rejected", body: `{"seq":"1","move_rejected":{"reason":"REJECT_REASON_NOT_YOUR_TURN","message":"wait"}}`, valid: true},
		{name: "game_ended", body: `{"seq":"1","game_ended":{"reason":"GAME_END_REASON_COMPLETED","placings":[{"place":1,"score":"300"}]}}`, valid: true},
		{name: "view_synced", body: `{"seq":"1","view_synced":{"view":{"phase":"PHASE_PLAY"}}}`, valid: true},
		{name: "columns_dealt", body: `{"seq":"1","columns_dealt":{"seat":1,"face_up":["CARD_JOKER_1"]}}`, valid: true},
		{name: "player_seated", body: `{"seq":"1","player_seated":{"seat":{"seat":1,"player_id":"p1"}}}`, valid: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := []byte(c.body)
			want := &tablev1.Event{}
			wantErr := protoIn.Unmarshal(body, want)
			if (wantErr == nil) != c.valid {
				t.Fatalf("protojson: %v, expected valid=%v: %s", wantErr, c.valid, body)
			}
			got, ok := decodeEventJSON(body)
			if ok != c.fast {
				t.Fatalf("the fast path took it: %v, expected %v: %s", ok, c.fast, body)
			}
			if ok && (wantErr != nil || !proto.Equal(got, want)) {
				t.Fatalf("by hand %v, protojson %v (%v)", got, want, wantErr)
			}
			ev, _, err := unmarshalEvent(body)
			if (err == nil) != (wantErr == nil) || (err == nil && !proto.Equal(ev, want)) {
				t.Fatalf("unmarshalEvent: %v (%v), protojson %v (%v)", ev, err, want, wantErr)
			}
			if c.check != nil && (err != nil || !c.check(ev)) {
				t.Fatalf("decoded %v", ev)
			}
		})
	}
}

// FuzzDecodeEventJSON: whatever protojson decodes, unmarshalEvent decodes
// the same; whatever it refuses, unmarshalEvent refuses; and what the fast
// path takes, protojson takes and decodes the same.
func FuzzDecodeEventJSON(f *testing.F) {
	seen := map[string]int{}
	for seed := uint64(1); seed <= 3; seed++ {
		for _, ev := range playRandomGame(f, seed) {
			key := kindOf(ev) + strconv.FormatBool(ev.GetTimer() != nil)
			if seen[key] >= 2 {
				continue
			}
			seen[key]++
			body := gatewayBody(f, ev)
			f.Add(body)
			f.Add(spaced(body))
		}
	}
	f.Add([]byte(baseBody))
	f.Add([]byte(`{"hand_ended":{"results":[{"penalty":"-200"},{"points":"9223372036854775807"}]}}`))
	f.Add([]byte(`{"seq":"1","player_away":{"seat":1,"player_id":"p1","grace_deadline":"2025-03-01T12:01:00.000000Z"}}`))
	f.Add([]byte(`{"trick_won":{"trick_index":2,"seat":3,"tricks_taken":[0,1,4294967295,0]}}`))
	f.Add([]byte(`{"seq":"4","hand_committed":{"hand_index":2,"commitment":"+/8APg==","seed_deadline":"2025-03-01T12:00:00Z","awaited_seats":[0,2]}}`))
	f.Add([]byte(`{"client_seed_accepted":{"hand_index":1,"seat":3}}`))
	f.Add([]byte(`{"hand_revealed":{"hand_index":5,"server_seed":"YWJj","client_seeds":["AQ==","","AQI="],"commitment":"YWI="}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		checkDecodesAsProtojson(t, body, decodeEventJSON, unmarshalEvent)
	})
}

// checkDecodesAsProtojson is a hand decoder's fuzz property: what decode
// takes is JSON that protojson takes and decodes to the same message, and
// unmarshal (decode, else protojson) fails exactly when protojson fails and
// otherwise gives protojson's message.
func checkDecodesAsProtojson[T any, M interface {
	*T
	proto.Message
}](t *testing.T, body []byte, decode func([]byte) (M, bool), unmarshal func([]byte) (M, bool, error)) {
	t.Helper()
	want := M(new(T))
	wantErr := protoIn.Unmarshal(body, want)
	if fast, ok := decode(body); ok {
		if wantErr != nil {
			t.Fatalf("the fast path took what protojson refuses (%v): %q", wantErr, body)
		}
		if !json.Valid(body) {
			t.Fatalf("the fast path took what is not JSON (asInFull): %q", body)
		}
		if !proto.Equal(fast, want) {
			t.Fatalf("by hand %v\nprotojson %v\nof %q", fast, want, body)
		}
	}
	got, _, err := unmarshal(body)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("unmarshal: %v, protojson: %v, of %q", err, wantErr, body)
	}
	if err == nil && !proto.Equal(got, want) {
		t.Fatalf("unmarshal %v\nprotojson %v\nof %q", got, want, body)
	}
}

// BenchmarkDecodeEventJSON: a card_played event with the next seat's timer
// from a real game, by hand and with protojson.
func BenchmarkDecodeEventJSON(b *testing.B) {
	var body []byte
	for _, ev := range playRandomGame(b, 1) {
		if ev.GetCardPlayed() != nil && ev.GetTimer() != nil {
			body = gatewayBody(b, ev)
			break
		}
	}
	if _, ok := decodeEventJSON(body); !ok {
		b.Fatalf("the fast path refuses %s", body)
	}
	b.Logf("%d bytes: %s", len(body), body)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := unmarshalEvent(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := protoIn.Unmarshal(body, &tablev1.Event{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
