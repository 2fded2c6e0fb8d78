package scoringclient_test

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	"github.com/pulka/pulka/pkg/scoringclient"
)

// TableOf reads field 1 of either message: the contract must keep it the
// table of both.
func TestTableOf_FieldOfBothMessages(t *testing.T) {
	for _, m := range []proto.Message{&scoringv1.ScoringInput{}, &scoringv1.FinalStandings{}} {
		f := m.ProtoReflect().Descriptor().Fields().ByNumber(1)
		if f == nil || f.Name() != "table_id" || f.Kind() != protoreflect.StringKind {
			t.Fatalf("%s: field 1 is %v, not the string table_id TableOf reads", m.ProtoReflect().Descriptor().FullName(), f)
		}
	}
}

func TestTableOf(t *testing.T) {
	input, _ := proto.Marshal(&scoringv1.ScoringInput{TableId: "t1", GameId: "g1",
		Input: &scoringv1.ScoringInput_GameEnded{GameEnded: &scoringv1.GameEnded{Completed: true}}})
	standings, _ := proto.Marshal(&scoringv1.FinalStandings{TableId: "t4", GameId: "g1",
		Standings: []*scoringv1.Standing{{Place: 1, PlayerId: "p"}}})
	// The game before the table: a field order proto.Marshal does not
	// write, but a valid encoding all the same.
	gameFirst := protowire.AppendTag(nil, 2, protowire.BytesType)
	gameFirst = protowire.AppendString(gameFirst, "g1")
	gameFirst = protowire.AppendTag(gameFirst, 1, protowire.BytesType)
	gameFirst = protowire.AppendString(gameFirst, "t2")
	noTable, _ := proto.Marshal(&scoringv1.ScoringInput{GameId: "g1"})
	truncated := protowire.AppendTag(nil, 1, protowire.BytesType)
	truncated = append(protowire.AppendVarint(truncated, 10), "t3"...)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"an input's table", input, "t1"},
		{"a final standings' table", standings, "t4"},
		{"the table after other fields", gameFirst, "t2"},
		{"no table", noTable, ""},
		{"a truncated table", truncated, ""},
		{"bytes that are no protobuf", []byte{0xff, 0xff, 0xff}, ""},
		{"nothing", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := scoringclient.TableOf(tc.data)
			if got != tc.want || ok != (tc.want != "") {
				t.Fatalf("TableOf = %q, %t; want %q", got, ok, tc.want)
			}
		})
	}
}

// Any input as a writer encodes it gives its table, and no bytes panic.
func FuzzTableOf(f *testing.F) {
	in, _ := proto.Marshal(&scoringv1.ScoringInput{TableId: "t1", GameId: "g1"})
	f.Add(in)
	f.Add([]byte{0x0a, 0x05})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = scoringclient.TableOf(data)
		parsed := &scoringv1.ScoringInput{}
		if proto.Unmarshal(data, parsed) != nil {
			return
		}
		written, err := proto.Marshal(parsed)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := scoringclient.TableOf(written); got != parsed.GetTableId() || ok != (got != "") {
			t.Fatalf("TableOf = %q, %t; the input's table %q", got, ok, parsed.GetTableId())
		}
	})
}
