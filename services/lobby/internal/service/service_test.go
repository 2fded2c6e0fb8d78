package service

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/services/lobby/internal/store"
)

func TestCreate_EverySettingIsStoredComplete(t *testing.T) {
	e := newEnv(t)
	e.lobby("a")
	var cases []*lobbyv1.TableSettings
	for _, v := range []lobbyv1.ClassicVariant{lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD, lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES} {
		for k := lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200; k <= lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_PER_CARD; k++ {
			for flags := range 8 {
				cases = append(cases, classic(func(s *lobbyv1.TableSettings) {
					s.ClassicVariant, s.Khishti = v, k
					s.Premia, s.Moshla, s.RestDocked = flags&1 != 0, flags&2 != 0, flags&4 != 0
					s.BotLevel = lobbyv1.BotLevel(flags % 4) // 0: unset, stored as the default
					if flags%2 == 1 {
						private(s)
					}
				}))
			}
		}
	}
	for _, target := range []uint32{11, 15, 21, 31} {
		cases = append(cases, japanese(target), japanese(target, private))
	}
	cases = append(cases, classic(func(s *lobbyv1.TableSettings) {
		s.Stake = freeStake
		s.MoveTime, s.ReconnectGrace = durationpb.New(20*time.Second), durationpb.New(90*time.Second)
	}))
	for i, s := range cases {
		pw := ""
		if i%3 == 0 {
			pw = fmt.Sprintf("pw-%d", i)
		}
		r := e.create("host", s, pw, i%2 == 0)
		if !r.GetAccepted() {
			t.Fatalf("case %d %v refused: %v", i, s, r)
		}
		want := proto.CloneOf(s)
		want.HasPassword = pw != ""
		want.Stake = freeStake
		switch want.GetGame() {
		case lobbyv1.Game_GAME_CLASSIC:
			if want.GetBotLevel() == lobbyv1.BotLevel_BOT_LEVEL_UNSPECIFIED {
				want.BotLevel = lobbyv1.BotLevel_BOT_LEVEL_NORMAL // the default, written into the description
			}
		case lobbyv1.Game_GAME_JAPANESE:
			want.BotLevel = lobbyv1.BotLevel_BOT_LEVEL_STRONG // the move timer's bot
		}
		got := e.fetch(r.GetTableId())
		if !proto.Equal(got.GetSettings(), want) {
			t.Fatalf("case %d stored settings:\n got %v\nwant %v", i, got.GetSettings(), want)
		}
		if !proto.Equal(got, r.GetTable()) {
			t.Fatalf("case %d: the result's table differs from the stored one", i)
		}
		if got.GetStatus() != lobbyv1.TableStatus_TABLE_STATUS_WAITING || got.GetHostPlayerId() != "host" {
			t.Fatalf("case %d: %v", i, got)
		}
		if seated := got.GetSeats()[0].GetPlayerId() == "host"; seated != (i%2 == 0) {
			t.Fatalf("case %d: host seated %v", i, seated)
		}
	}
	// The unset Japanese target becomes the rules' default.
	r := e.create("host", japanese(0), "", false)
	if got := e.fetch(r.GetTableId()).GetSettings().GetJapaneseTarget(); got != 21 {
		t.Fatalf("default target = %d", got)
	}
}

func TestCreate_InvalidSettingsAreRefusedAndChangeNothing(t *testing.T) {
	e := newEnv(t)
	e.lobby("a")
	for _, tc := range []struct {
		name   string
		s      *lobbyv1.TableSettings
		reason lobbyv1.LobbyRejectReason
		says   string
	}{
		{"no settings", nil, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_SETTINGS, "settings"},
		{"no game", classic(func(s *lobbyv1.TableSettings) { s.Game = 0 }), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_SETTINGS, "game"},
		{"classic without variant", classic(func(s *lobbyv1.TableSettings) { s.ClassicVariant = 0 }), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_SETTINGS, "classic_variant"},
		{"classic without khishti", classic(func(s *lobbyv1.TableSettings) { s.Khishti = 0 }), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_SETTINGS, "khishti"},
		{"unknown khishti", classic(func(s *lobbyv1.TableSettings) { s.Khishti = 9 }), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_SETTINGS, "khishti"},
		{"japanese target 12", japanese(12), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_SETTINGS, "japanese_target"},
		{"japanese with premia", japanese(21, func(s *lobbyv1.TableSettings) { s.Premia = true }), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_SETTINGS, "premia"},
		{"classic with target", classic(func(s *lobbyv1.TableSettings) { s.JapaneseTarget = 15 }), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_SETTINGS, "japanese_target"},
		{"no visibility", classic(func(s *lobbyv1.TableSettings) { s.Visibility = 0 }), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_SETTINGS, "visibility"},
		{"unknown stake", classic(func(s *lobbyv1.TableSettings) { s.Stake = &lobbyv1.Stake{} }), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_SETTINGS, "stake"},
		{"move time 1s", classic(func(s *lobbyv1.TableSettings) { s.MoveTime = durationpb.New(time.Second) }), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_SETTINGS, "move_time"},
		{"coin stake", classic(func(s *lobbyv1.TableSettings) {
			s.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: 100}}}
		}), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_NOT_ALLOWED, "Domino Coin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.create("host", tc.s, "secret", true)
			if r.GetAccepted() || r.GetReason() != tc.reason || !strings.Contains(r.GetMessage(), tc.says) {
				t.Fatalf("result = %v; want %v mentioning %q", r, tc.reason, tc.says)
			}
		})
	}
	keys, _ := e.rdb.Keys(context.Background(), "pulka:{lobby}:table:*").Result()
	if len(keys) != 0 || e.lobbyState().GetVersion() != 0 {
		t.Fatalf("refused creations left tables %v / version %d", keys, e.lobbyState().GetVersion())
	}
}

func TestList_FiltersByGameVariantStakeSeatsAndPassword(t *testing.T) {
	e := newEnv(t)
	e.lobby("a")
	std := e.mustCreate("p1", classic(), "", true)
	nines := e.mustCreate("p2", classic(func(s *lobbyv1.TableSettings) {
		s.ClassicVariant = lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES
	}), "pw", true)
	jap := e.mustCreate("p3", japanese(11), "", true)
	full := e.mustCreate("p4", japanese(31), "", true)
	if r := e.do("p5", sit(full, 1, "")); !r.GetAccepted() {
		t.Fatal(r)
	}
	e.mustCreate("p6", classic(private), "", true)
	e.converge(e.view)

	ids := func(f *lobbyv1.TableFilter) []string {
		var out []string
		for _, t := range e.view.List(f) {
			out = append(out, t.GetTableId())
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    *lobbyv1.TableFilter
		want []string
	}{
		{"all, newest first", nil, []string{full, jap, nines, std}},
		{"classic", &lobbyv1.TableFilter{Game: lobbyv1.Game_GAME_CLASSIC}, []string{nines, std}},
		{"japanese", &lobbyv1.TableFilter{Game: lobbyv1.Game_GAME_JAPANESE}, []string{full, jap}},
		{"nines", &lobbyv1.TableFilter{ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES}, []string{nines}},
		{"free seat", &lobbyv1.TableFilter{HasFreeSeat: true}, []string{jap, nines, std}},
		{"playing", &lobbyv1.TableFilter{Status: lobbyv1.TableStatus_TABLE_STATUS_PLAYING}, []string{full}},
		{"without password", &lobbyv1.TableFilter{WithoutPassword: true, Game: lobbyv1.Game_GAME_CLASSIC}, []string{std}},
		{"free only", &lobbyv1.TableFilter{FreeOnly: true}, []string{full, jap, nines, std}},
		{"max stake", &lobbyv1.TableFilter{MaxStake: 10}, []string{full, jap, nines, std}},
	} {
		if got := ids(tc.f); strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestMatch_CoinStakeFilters(t *testing.T) {
	// Coin tables cannot be created yet; the filter must already treat them
	// right when they come.
	coins := &lobbyv1.TableSummary{Settings: classic(func(s *lobbyv1.TableSettings) {
		s.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: 50}}}
	})}
	unknown := &lobbyv1.TableSummary{Settings: classic(func(s *lobbyv1.TableSettings) { s.Stake = &lobbyv1.Stake{} })}
	for _, tc := range []struct {
		t    *lobbyv1.TableSummary
		f    *lobbyv1.TableFilter
		want bool
	}{
		{coins, &lobbyv1.TableFilter{}, true},
		{coins, &lobbyv1.TableFilter{FreeOnly: true}, false},
		{coins, &lobbyv1.TableFilter{MaxStake: 50}, true},
		{coins, &lobbyv1.TableFilter{MaxStake: 49}, false},
		{unknown, &lobbyv1.TableFilter{}, false},
	} {
		if got := lobbyclient.Match(tc.f, tc.t); got != tc.want {
			t.Errorf("Match(%v, stake %v) = %v", tc.f, tc.t.GetSettings().GetStake(), got)
		}
	}
}

func TestPrivateTable_NotListedButReachableByItsID(t *testing.T) {
	e := newEnv(t)
	e.lobby("a")
	priv := e.mustCreate("host", classic(private), "", true)
	pub := e.mustCreate("host", classic(), "", true)
	e.converge(e.view)
	if _, ok := e.view.Get(priv); ok {
		t.Fatal("private table is in the view")
	}
	if _, ok := e.view.Get(pub); !ok {
		t.Fatal("public table missing from the view")
	}
	if got := e.fetch(priv); got.GetTableId() != priv {
		t.Fatalf("fetch = %v", got)
	}
	// The id is the link: 128 random bits, no hash-tag characters.
	if len(priv) != 26 || strings.ContainsAny(priv, "{}") || priv == pub {
		t.Fatalf("table ids %q %q", priv, pub)
	}
	if r := e.do("guest", sit(priv, 1, "")); !r.GetAccepted() {
		t.Fatalf("sitting at a private table by its link: %v", r)
	}
	if r := e.do("guest", sit("nosuchtable", 1, "")); r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TABLE_NOT_FOUND {
		t.Fatalf("unknown table: %v", r)
	}
}

func TestSitDown_WrongPasswordIsRefusedAndChangesNothing(t *testing.T) {
	e := newEnv(t)
	e.lobby("a")
	id := e.mustCreate("host", classic(), "correct horse", true)
	before := e.fetch(id)
	versionBefore := e.lobbyState().GetVersion()
	for _, pw := range []string{"", "wrong", "Correct horse"} {
		r := e.do("guest", sit(id, 1, pw))
		if r.GetAccepted() || r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_WRONG_PASSWORD {
			t.Fatalf("password %q: %v", pw, r)
		}
	}
	if after := e.fetch(id); !proto.Equal(before, after) || e.lobbyState().GetVersion() != versionBefore {
		t.Fatal("a refused sit-down changed the table or the list")
	}
	if r := e.do("guest", sit(id, 1, "correct horse")); !r.GetAccepted() || r.GetTable().GetSeats()[1].GetPlayerId() != "guest" {
		t.Fatalf("right password: %v", r)
	}
}

func TestPassword_PlaintextDoesNotStayInRedis(t *testing.T) {
	e := newEnv(t)
	e.lobby("a")
	const pw = "plaintext-secret-4711"
	id := e.mustCreate("host", classic(), pw, true)
	e.do("guest", sit(id, 1, pw+"x"))
	e.do("guest", sit(id, 1, pw))
	// Wait for the handled entries to be deleted (after the reply).
	ctx := context.Background()
	deadline := time.Now().Add(5 * time.Second)
	for n, _ := e.rdb.XLen(ctx, lobbyclient.CommandStream).Result(); n > 0; n, _ = e.rdb.XLen(ctx, lobbyclient.CommandStream).Result() {
		if time.Now().After(deadline) {
			t.Fatalf("%d handled commands still in the command stream", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	keys, err := e.rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		dump, err := e.rdb.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(dump, pw) {
			t.Errorf("key %s holds the plaintext password", k)
		}
	}
	hash, _ := e.rdb.HGet(ctx, store.TableKey(id), store.TableFieldPassword).Result()
	if !strings.HasPrefix(hash, "$argon2id$") {
		t.Fatalf("stored password = %q, want an argon2id hash", hash)
	}
}

func TestSitUntilFull_ExactlyOneStartMessage(t *testing.T) {
	e := newEnv(t)
	// Two replicas with two consumers each race for the same seats.
	e.lobby("a")
	e.lobby("b")
	id := e.mustCreate("host", classic(), "", true)
	var wg sync.WaitGroup
	results := make([]*lobbyv1.LobbyCommandResult, 12)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.do(fmt.Sprintf("p%d", i), sit(id, uint32(1+i%3), ""))
		}()
	}
	wg.Wait()
	accepted := 0
	for _, r := range results {
		if r.GetAccepted() {
			accepted++
		} else if r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_SEAT_UNAVAILABLE &&
			r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_ALREADY_STARTED {
			t.Fatalf("unexpected refusal %v", r)
		}
	}
	if accepted != 3 {
		t.Fatalf("%d sit-downs accepted for 3 free seats", accepted)
	}
	starts := e.starts()
	if len(starts) != 1 {
		t.Fatalf("%d start messages", len(starts))
	}
	st, table := starts[0], e.fetch(id)
	if st.GetTableId() != id || table.GetStatus() != lobbyv1.TableStatus_TABLE_STATUS_PLAYING {
		t.Fatalf("start %v, table status %v", st, table.GetStatus())
	}
	if !proto.Equal(st.GetSettings(), table.GetSettings()) || len(st.GetSeats()) != 4 {
		t.Fatalf("start message settings/seats: %v", st)
	}
	for i, s := range st.GetSeats() {
		if !proto.Equal(s, table.GetSeats()[i]) || s.GetPlayerId() == "" || s.GetDisplayName() == "" {
			t.Fatalf("seat %d: start %v, table %v", i, s, table.GetSeats()[i])
		}
	}
	if len(st.GetGameId()) != 32 {
		t.Fatalf("game id %q is not 128 random bits in hex", st.GetGameId())
	}
	if r := e.do("late", sit(id, 1, "")); r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_ALREADY_STARTED {
		t.Fatalf("sitting at a started table: %v", r)
	}
}

func TestStart_GameIDsDiffer(t *testing.T) {
	e := newEnv(t)
	e.lobby("a")
	for i := range 3 {
		id := e.mustCreate(fmt.Sprint("h", i), japanese(21), "", true)
		e.do(fmt.Sprint("g", i), sit(id, 1, ""))
	}
	seen := map[string]bool{}
	for _, s := range e.starts() {
		seen[s.GetGameId()] = true
	}
	if len(seen) != 3 {
		t.Fatalf("3 starts, %d distinct game ids", len(seen))
	}
}

func TestFillWithBots_StartsClassicAndIsRefusedForJapanese(t *testing.T) {
	e := newEnv(t)
	e.lobby("a")
	id := e.mustCreate("host", classic(), "", true)
	e.do("guest", sit(id, 2, ""))
	if r := e.do("guest", fillBots(id)); r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_NOT_HOST {
		t.Fatalf("guest filling: %v", r)
	}
	r := e.do("host", fillBots(id))
	if !r.GetAccepted() {
		t.Fatal(r)
	}
	seats := r.GetTable().GetSeats()
	if !seats[1].GetBot() || !seats[3].GetBot() || seats[0].GetBot() || seats[2].GetPlayerId() != "guest" {
		t.Fatalf("seats %v", seats)
	}
	starts := e.starts()
	if len(starts) != 1 || !starts[0].GetSeats()[1].GetBot() || r.GetTable().GetStatus() != lobbyv1.TableStatus_TABLE_STATUS_PLAYING {
		t.Fatalf("starts %v", starts)
	}

	jid := e.mustCreate("host", japanese(21), "", true)
	if r := e.do("host", fillBots(jid)); r.GetAccepted() || r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_NOT_ALLOWED {
		t.Fatalf("bots at a Japanese table: %v", r)
	}
	if len(e.starts()) != 1 || e.fetch(jid).GetSeats()[1].GetBot() {
		t.Fatal("the Japanese table got a bot or started")
	}
}

func TestDuplicateCommand_HasOneEffect(t *testing.T) {
	e := newEnv(t)
	e.lobby("a")
	e.lobby("b")
	create := &lobbyv1.LobbyCommand{CommandId: "create-once", Command: &lobbyv1.LobbyCommand_CreateTable{
		CreateTable: &lobbyv1.CreateTable{Name: "x", Settings: japanese(21), SitDown: true}}}
	first := e.do("host", proto.CloneOf(create))
	again := e.do("host", proto.CloneOf(create))
	if !proto.Equal(first, again) {
		t.Fatalf("a repeat got another answer:\n%v\n%v", first, again)
	}
	// Redelivery as the stream sees it: the same entry appended many times
	// at once (a gateway retrying), handled by four consumers.
	sitCmd := sit(first.GetTableId(), 1, "")
	sitCmd.CommandId, sitCmd.PlayerId, sitCmd.ReplyTo = "sit-once", "guest", e.client.ReplyStream()
	data, _ := proto.Marshal(sitCmd)
	pub := streams.NewPublisher(e.rdb)
	for range 10 {
		if _, err := pub.Publish(context.Background(), streams.Entry{Stream: lobbyclient.CommandStream, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	r := e.do("guest", proto.CloneOf(sitCmd))
	if !r.GetAccepted() {
		t.Fatal(r)
	}
	keys, _ := e.rdb.Keys(context.Background(), "pulka:{lobby}:table:*").Result()
	if len(keys) != 1 {
		t.Fatalf("%d tables after a repeated create", len(keys))
	}
	if n := len(e.starts()); n != 1 {
		t.Fatalf("%d start messages after a repeated sit-down", n)
	}
	// Table revision: created (1), guest sat and it started (2): nothing else.
	if rev, _ := e.rdb.HGet(context.Background(), store.TableKey(first.GetTableId()), "rev").Int(); rev != 2 {
		t.Fatalf("revision %d: a repeat was applied again", rev)
	}
	// Another player reusing the command id gets neither the effect nor the
	// first player's result.
	steal := proto.CloneOf(create)
	r = e.do("thief", steal)
	if r.GetAccepted() || r.GetTableId() != "" || r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_COMMAND {
		t.Fatalf("reused command id: %v", r)
	}
}

func TestStandUpAndLeave_BeforeTheGame(t *testing.T) {
	e := newEnv(t)
	e.lobby("a")
	id := e.mustCreate("host", classic(), "", true)
	e.do("guest", sit(id, 1, ""))
	if r := e.do("other", standUp(id)); r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_NOT_SEATED {
		t.Fatalf("stand up unseated: %v", r)
	}
	if r := e.do("guest", standUp(id)); !r.GetAccepted() || r.GetTable().GetSeats()[1].GetPlayerId() != "" {
		t.Fatalf("stand up: %v", r)
	}
	e.do("guest", sit(id, 3, ""))
	if r := e.do("host", leave(id)); !r.GetAccepted() || r.GetTable().GetHostPlayerId() != "guest" {
		t.Fatalf("host leaving: %v", r)
	}
	e.converge(e.view)
	if _, ok := e.view.Get(id); !ok {
		t.Fatal("table vanished while a player still sits")
	}
	if r := e.do("guest", leave(id)); !r.GetAccepted() || r.GetTable() != nil {
		t.Fatalf("last player leaving: %v", r)
	}
	e.converge(e.view)
	if _, ok := e.view.Get(id); ok {
		t.Fatal("closed table still listed")
	}
	if got := e.fetch(id); got.GetStatus() != lobbyv1.TableStatus_TABLE_STATUS_FINISHED {
		t.Fatalf("closed table status %v", got.GetStatus())
	}
	if ttl := e.rdb.PTTL(context.Background(), store.TableKey(id)).Val(); ttl <= 0 {
		t.Fatalf("a closed table never expires (ttl %v)", ttl)
	}
	if ttl := e.rdb.PTTL(context.Background(), lobbyclient.SummaryKey(id)).Val(); ttl <= 0 {
		t.Fatalf("a closed table's summary never expires (ttl %v)", ttl)
	}
}

func TestLeave_DuringClassicGameForwardsToTheRunner(t *testing.T) {
	e := newEnv(t)
	e.lobby("a")
	id := e.mustCreate("host", classic(), "", true)
	e.do("guest", sit(id, 1, ""))
	e.do("host", fillBots(id))
	r := e.do("guest", leave(id))
	if !r.GetAccepted() || !r.GetTable().GetSeats()[1].GetBot() {
		t.Fatalf("leave during the game: %v", r)
	}
	msgs, err := e.rdb.XRange(context.Background(), streams.TableCommands(id), "-", "+").Result()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("table commands %v, %v", msgs, err)
	}
	var cmd tablev1.Command
	if err := proto.Unmarshal([]byte(msgs[0].Values["data"].(string)), &cmd); err != nil {
		t.Fatal(err)
	}
	if cmd.GetPlayerId() != "guest" || cmd.GetTableId() != id || cmd.GetLeave() == nil || cmd.GetCommandId() != r.GetCommandId() {
		t.Fatalf("forwarded %v", &cmd)
	}
}

func TestFinishTable_RemovesItFromTheList(t *testing.T) {
	e := newEnv(t)
	e.lobby("a")
	id := e.mustCreate("host", japanese(11), "", true)
	e.do("guest", sit(id, 1, ""))
	e.converge(e.view)
	if got, ok := e.view.Get(id); !ok || got.GetStatus() != lobbyv1.TableStatus_TABLE_STATUS_PLAYING {
		t.Fatalf("playing table in view: %v %v", got, ok)
	}
	if r := e.do("", finish(id)); !r.GetAccepted() {
		t.Fatal(r)
	}
	e.converge(e.view)
	if _, ok := e.view.Get(id); ok {
		t.Fatal("finished table still listed")
	}
	if r := e.do("", finish(id)); !r.GetAccepted() {
		t.Fatalf("finishing twice: %v", r)
	}
}

func TestReplyTo_OnlyLobbyReplyStreams(t *testing.T) {
	e := newEnv(t)
	e.lobby("a")
	id := e.mustCreate("host", classic(), "", true)
	target := streams.TableEvents(id)
	cmd := sit(id, 1, "")
	cmd.CommandId, cmd.PlayerId, cmd.ReplyTo = "evil", "guest", target
	data, _ := proto.Marshal(cmd)
	if _, err := streams.NewPublisher(e.rdb).Publish(context.Background(), streams.Entry{Stream: lobbyclient.CommandStream, Data: data}); err != nil {
		t.Fatal(err)
	}
	// The command is still applied; a repeat through the client gets its
	// stored result.
	cmd.ReplyTo = ""
	r := e.do("guest", cmd)
	if !r.GetAccepted() {
		t.Fatal(r)
	}
	if n, _ := e.rdb.XLen(context.Background(), target).Result(); n != 0 {
		t.Fatalf("the lobby wrote %d entries into %s", n, target)
	}
}

func TestView_ConvergesToTheLobbyState(t *testing.T) {
	e := newEnv(t)
	e.lobby("a", func(o *Options) { o.Store.ViewMaxLen = 100 })
	e.lobby("b", func(o *Options) { o.Store.ViewMaxLen = 100 })
	var ids []string
	for i := range 30 {
		s := classic()
		if i%4 == 0 {
			s = japanese(15)
		}
		if i%5 == 0 {
			private(s)
		}
		ids = append(ids, e.mustCreate(fmt.Sprint("h", i), s, "", true))
	}
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i % 4 {
			case 0:
				e.do(fmt.Sprint("g", i), sit(id, 1, ""))
			case 1:
				e.do(fmt.Sprint("h", i), fillBots(id))
			case 2:
				e.do(fmt.Sprint("h", i), leave(id))
			case 3:
				e.do(fmt.Sprint("g", i), sit(id, 2, ""))
				e.do(fmt.Sprint("g", i), standUp(id))
			}
		}()
	}
	wg.Wait()
	e.converge(e.view)

	// A gateway that starts late, after the stream was trimmed past its
	// beginning, loads the snapshot and converges too.
	for range 200 {
		id := e.mustCreate("late", classic(), "", false)
		e.do("late", leave(id))
	}
	late := lobbyclient.NewView(e.srv.Client(t), lobbyclient.ViewOptions{Block: 100 * time.Millisecond})
	e.run(late.Run)
	e.converge(late)
	e.converge(e.view)
	if n := e.rdb.XLen(context.Background(), lobbyclient.ViewStream).Val(); n >= int64(e.lobbyState().GetVersion()) {
		t.Fatalf("the view stream was not trimmed (%d entries, version %d): the late start proved nothing", n, e.lobbyState().GetVersion())
	}
}

func TestView_SinceReturnsTheChangesForLiveUpdates(t *testing.T) {
	e := newEnv(t)
	e.lobby("a")
	e.converge(e.view)
	from := e.view.Version()
	id := e.mustCreate("host", classic(), "", true)
	e.do("guest", sit(id, 1, ""))
	e.do("host", leave(id))
	e.converge(e.view)
	changes, version, complete := e.view.Since(from)
	if !complete || len(changes) != 3 || version != from+3 {
		t.Fatalf("since %d: %v, %d, %v", from, changes, version, complete)
	}
	if changes[0].Upserted.GetTableId() != id || changes[1].Upserted.GetSeats()[1].GetPlayerId() != "guest" || changes[2].Upserted.GetHostPlayerId() != "guest" {
		t.Fatalf("changes %v", changes)
	}
	if _, _, complete := e.view.Since(version + 5); complete {
		t.Fatal("a version from the future is complete")
	}
}

func TestRestart_LosesNothing(t *testing.T) {
	e := newEnv(t)
	_, stop := e.lobby("a")
	id := e.mustCreate("host", classic(), "pw", true)
	e.do("p1", sit(id, 1, "pw"))
	stop()

	// Commands sent while no lobby runs wait in the stream.
	type answer struct {
		r   *lobbyv1.LobbyCommandResult
		err error
	}
	answers := make(chan answer, 2)
	for i, p := range []string{"p2", "p3"} {
		go func() {
			cmd := sit(id, uint32(2+i), "pw")
			cmd.CommandId, cmd.PlayerId = "while-down-"+p, p
			r, err := e.client.Do(context.Background(), cmd)
			answers <- answer{r, err}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	e.lobby("a2")
	for range 2 {
		a := <-answers
		if a.err != nil || !a.r.GetAccepted() {
			t.Fatalf("command sent while the lobby was down: %v %v", a.r, a.err)
		}
	}
	table := e.fetch(id)
	if table.GetStatus() != lobbyv1.TableStatus_TABLE_STATUS_PLAYING || len(e.starts()) != 1 {
		t.Fatalf("after restart: status %v, %d starts", table.GetStatus(), len(e.starts()))
	}
	for i, want := range []string{"host", "p1", "p2", "p3"} {
		if table.GetSeats()[i].GetPlayerId() != want {
			t.Fatalf("seat %d = %v", i, table.GetSeats()[i])
		}
	}
	fresh := lobbyclient.NewView(e.srv.Client(t), lobbyclient.ViewOptions{Block: 100 * time.Millisecond})
	e.run(fresh.Run)
	e.converge(fresh)
}

func TestRestart_RedisWithPersistenceKeepsEverything(t *testing.T) {
	e := newEnv(t, redistestPersistence())
	_, stop := e.lobby("a")
	id := e.mustCreate("host", classic(), "", true)
	e.do("guest", sit(id, 1, ""))
	e.converge(e.view)
	stop()
	if err := e.srv.Restart(); err != nil {
		t.Fatal(err)
	}
	e.lobby("b")
	if r := e.do("host", fillBots(id)); !r.GetAccepted() {
		t.Fatalf("after a Redis restart: %v", r)
	}
	if got := e.fetch(id); got.GetSeats()[1].GetPlayerId() != "guest" || got.GetStatus() != lobbyv1.TableStatus_TABLE_STATUS_PLAYING {
		t.Fatalf("table after restart: %v", got)
	}
	e.converge(e.view)
}

func TestSeatChanged_TheListShowsWhoPlaysEachSeatOfARunningGame(t *testing.T) {
	e := newEnv(t)
	e.lobby("a")
	id := e.mustCreate("host", classic(), "", true)
	e.do("guest", sit(id, 1, ""))
	e.do("host", fillBots(id))
	seat := func() *lobbyv1.Seat {
		e.converge(e.view)
		got, ok := e.view.Get(id)
		if !ok {
			t.Fatal("the table is not in the view")
		}
		return got.GetSeats()[1]
	}
	if r := e.do("", seatChanged(id, 1, "guest", "", true, 30)); !r.GetAccepted() {
		t.Fatalf("the runner's change: %v", r)
	}
	if s := seat(); !s.GetBot() || s.GetPlayerId() != "guest" {
		t.Fatalf("after a bot took seat 1 for its player: %v", s)
	}
	if r := e.do("", seatChanged(id, 1, "guest", "Guest", false, 31)); !r.GetAccepted() {
		t.Fatalf("the runner's change: %v", r)
	}
	if s := seat(); s.GetBot() || s.GetPlayerId() != "guest" || s.GetDisplayName() != "Guest" {
		t.Fatalf("after the player took seat 1 back: %v", s)
	}
	// A player may not send it, and a late, older change is ignored.
	if r := e.do("guest", seatChanged(id, 1, "", "", true, 32)); r.GetAccepted() ||
		r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_COMMAND {
		t.Fatalf("a player's SeatChanged: %v", r)
	}
	if r := e.do("", seatChanged(id, 1, "", "", true, 30)); !r.GetAccepted() {
		t.Fatalf("a late change: %v", r)
	}
	if s := seat(); s.GetBot() || s.GetPlayerId() != "guest" {
		t.Fatalf("a late, older change overwrote the seat: %v", s)
	}
}
