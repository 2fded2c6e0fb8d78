package wsclient

import (
	"strconv"
	"testing"
	"time"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"

	"github.com/pulka/pulka/pkg/golden"
	"github.com/pulka/pulka/pkg/wire"
)

// gameFrames returns the event frames of the start of a classic game as the
// gateway writes them: the events of a golden game (pkg/golden) up to its
// first move — the game created and its first hand dealt at the seed
// deadline, nobody having sent a client seed.
func gameFrames(tb testing.TB) [][]byte {
	tb.Helper()
	evs, err := golden.Events(golden.SetModel, "classic-standard-1", golden.KindEvents)
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for i, ev := range evs {
		if ev.GetBidMade() != nil || ev.GetTrumpChosen() != nil {
			break
		}
		f, err := wire.Encode(wire.Event("t1", "1700000000000-"+strconv.Itoa(i), ev), wire.Binary)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, f)
	}
	if len(out) < 4 {
		tb.Fatalf("%d events before the first move", len(out))
	}
	return out
}

// TestDecodeFrame_ReadsEveryServerFrame decodes each kind of frame the
// gateway writes (pkg/wire's frames, binary) into the Frame the client's
// programs read.
func TestDecodeFrame_ReadsEveryServerFrame(t *testing.T) {
	at := time.Unix(1, 0)
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	seat := uint32(2)
	for _, tt := range []struct {
		frame *gatewayv1.ServerFrame
		check func(Frame) bool
	}{
		{wire.Welcome(wire.Player{ID: "p1", Name: "Nino", Guest: true}, now), func(f Frame) bool {
			return f.Type == wire.TypeWelcome && *f.Player == wire.Player{ID: "p1", Name: "Nino", Guest: true} && f.ServerTime.Equal(now)
		}},
		{wire.Joined("t1", "r1", &seat, 7, true), func(f Frame) bool {
			return f.Type == wire.TypeJoined && f.Ref == "r1" && f.Table == "t1" && *f.Seat == 2 && f.Replayed == 7 && f.HistoryTrimmed
		}},
		{wire.Joined("t1", "", nil, 0, false), func(f Frame) bool { return f.Seat == nil }},
		{wire.Unjoined("t1", "r2"), func(f Frame) bool { return f.Type == wire.TypeUnjoined && f.Table == "t1" && f.Ref == "r2" }},
		{wire.Ack("r3", "p1/k"), func(f Frame) bool { return f.Type == wire.TypeAck && f.Ref == "r3" && f.Cmd == "p1/k" }},
		{wire.Pong("r4", now), func(f Frame) bool { return f.Type == wire.TypePong && f.ServerTime.Equal(now) }},
		{wire.ErrorFrame(wire.CodeNotJoined, "no", "r5"), func(f Frame) bool {
			return f.Type == wire.TypeError && f.Ref == "r5" && wire.CodeOf(f.Err) == wire.CodeNotJoined
		}},
		{wire.TableError("t1", wire.CodeTableGone, "gone"), func(f Frame) bool { return f.Table == "t1" && wire.CodeOf(f.Err) == wire.CodeTableGone }},
		{wire.Sheet("t1", "5-0", &scoringv1.SheetUpdate{Version: 3}), func(f Frame) bool {
			return f.Type == wire.TypeSheet && f.ID == "5-0" && f.Sheet.GetVersion() == 3
		}},
		{wire.LobbyView(&lobbyv1.LobbyView{Version: 4}), func(f Frame) bool { return f.LobbyView.GetVersion() == 4 }},
		{wire.LobbyUpdate(&lobbyv1.LobbyUpdate{Version: 5}), func(f Frame) bool { return f.LobbyUpdate.GetVersion() == 5 }},
		{wire.Balance(&walletv1.Balance{AccountId: "u-1", Available: 1100, Version: 2}, &walletv1.LedgerEntry{Seq: 2, AvailableDelta: 100}), func(f Frame) bool {
			return f.Type == wire.TypeBalance && f.Balance.GetBalance().GetAvailable() == 1100 && f.Balance.GetEntry().GetAvailableDelta() == 100
		}},
	} {
		data, err := wire.Encode(tt.frame, wire.Binary)
		if err != nil {
			t.Fatal(err)
		}
		f, err := DecodeFrame(data, at)
		if err != nil || !f.At.Equal(at) || !tt.check(f) {
			t.Errorf("%v decoded to %+v, %v", tt.frame, f, err)
		}
	}
	for _, data := range gameFrames(t) {
		f, err := DecodeFrame(data, at)
		if err != nil || f.Type != wire.TypeEvent || f.Table != "t1" || f.Event.GetTableId() != "t1" {
			t.Fatalf("%+v, %v", f, err)
		}
	}
	if _, err := DecodeFrame([]byte{0xff, 0xff}, at); err == nil {
		t.Error("garbage decoded")
	}
	if _, err := DecodeFrame(nil, at); err == nil {
		t.Error("a frame of no type decoded")
	}
}

// BenchmarkDecodeFrame is a load generator's cost per event frame.
func BenchmarkDecodeFrame(b *testing.B) {
	frames := gameFrames(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := DecodeFrame(frames[i%len(frames)], time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}
