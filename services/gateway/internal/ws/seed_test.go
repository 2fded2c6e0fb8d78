package ws

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/streams"
)

// A seed frame takes the path of every table command: the table's command
// stream with the authenticated player and the scoped command id, then an
// ack. A malformed one is refused before anything reaches the table.
func TestSeed_IsAClientSeedCommandOnTheTableStream(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{})
	e.publish(t, "t1", seated(0, "ana")) // a seed is a seated player's
	c := g.login(t, "ana")
	c.send(map[string]any{"join": map[string]any{"table": "t1"}})
	c.nextOf("joined")
	for _, tt := range []struct{ frame, code string }{
		{`{"ref":"b1","command":{"table":"t1","seed":{"hand_index":1}}}`, "invalid_message"},
		{`{"ref":"b2","command":{"table":"t1","seed":{"hand_index":1,"seed":"` + hexB64(strings.Repeat("ab", 31)) + `"}}}`, "invalid_message"},
		{`{"ref":"b3","command":{"table":"t1","resign":{},"attached_seed":{"hand_index":1,"seed":"` + hexB64(strings.Repeat("ab", 32)) + `"}}}`, "invalid_message"},
		{`{"ref":"b4","command":{"table":"t2","seed":{"hand_index":1,"seed":"` + hexB64(strings.Repeat("ab", 32)) + `"}}}`, "not_joined"},
	} {
		c.sendRaw([]byte(tt.frame))
		if f := c.next(); f["type"] != "error" || f["code"] != tt.code {
			t.Fatalf("%s → %v, want error %s", tt.frame, f, tt.code)
		}
	}
	seed := strings.Repeat("0f", 32)
	c.send(map[string]any{"ref": "s1", "command": map[string]any{"table": "t1", "cmd": "seed-3", "seed": map[string]any{"hand_index": 3, "seed": hexB64(seed)}}})
	if ack := c.nextOf("ack"); ack["ref"] != "s1" || ack["cmd"] != "ana/seed-3" {
		t.Fatalf("ack = %v", ack)
	}
	xs, err := e.rdb.XRange(context.Background(), streams.TableCommands("t1"), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var seeds []*tablev1.Command
	for _, x := range xs {
		var cmd tablev1.Command
		if err := proto.Unmarshal([]byte(x.Values[streams.FieldData].(string)), &cmd); err != nil {
			t.Fatal(err)
		}
		if cmd.GetClientSeed() != nil {
			seeds = append(seeds, &cmd)
		}
	}
	if len(seeds) != 1 {
		t.Fatalf("%d seed commands on the stream, want 1 (the refused ones reach nothing)", len(seeds))
	}
	cs := seeds[0]
	if cs.PlayerId != "ana" || cs.TableId != "t1" || cs.CommandId != "ana/seed-3" || cs.GetClientSeed().GetHandIndex() != 3 ||
		!bytes.Equal(cs.GetClientSeed().GetSeed(), bytes.Repeat([]byte{0x0f}, 32)) {
		t.Fatalf("command = %v", cs)
	}
}
