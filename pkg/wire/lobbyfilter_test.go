package wire

import (
	"testing"

	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
)

func TestLobbyFilter_Proto(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    LobbyFilter
		want *lobbyv1.TableFilter
	}{
		{"nothing set filters nothing", LobbyFilter{}, &lobbyv1.TableFilter{}},
		{"every field", LobbyFilter{Game: "classic", Variant: "nines", Status: "waiting", FreeSeat: true, FreeOnly: true, WithoutPassword: true, MaxStake: 5},
			&lobbyv1.TableFilter{Game: lobbyv1.Game_GAME_CLASSIC, ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES,
				Status: lobbyv1.TableStatus_TABLE_STATUS_WAITING, HasFreeSeat: true, FreeOnly: true, WithoutPassword: true, MaxStake: 5}},
		{"case does not matter", LobbyFilter{Game: "Japanese", Status: "PLAYING"},
			&lobbyv1.TableFilter{Game: lobbyv1.Game_GAME_JAPANESE, Status: lobbyv1.TableStatus_TABLE_STATUS_PLAYING}},
	} {
		got, err := tc.f.Proto()
		if err != nil || !proto.Equal(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestParse_LobbyWatchWithFilterAndLimit(t *testing.T) {
	m, err := Parse([]byte(`{"lobby":{"watch":true,"filter":{"game":"GAME_CLASSIC","has_free_seat":true},"limit":20}}`), JSON)
	w := m.GetLobby()
	if err != nil || !w.GetWatch() || w.GetFilter().GetGame() != lobbyv1.Game_GAME_CLASSIC || !w.GetFilter().GetHasFreeSeat() || w.GetLimit() != 20 {
		t.Fatalf("%v, %v", m, err)
	}
}
