package wsclient

import (
	"testing"
	"time"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
)

func bin(f *gatewayv1.ServerFrame) string {
	b, err := wire.Encode(f, wire.Binary)
	if err != nil {
		panic(err)
	}
	return string(b)
}

var cachedEvent = bin(wire.Event("t1", "5-0", &tablev1.Event{Seq: 7, CausedBy: "p/k",
	Event: &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{Seat: 2, Tricks: 1}}}))

func TestFrameCache_IdenticalEventFramesShareOneDecode(t *testing.T) {
	c := NewFrameCache(8)
	t0, t1 := time.Unix(1, 0), time.Unix(2, 0)
	a, err := c.Decode([]byte(cachedEvent), t0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Decode([]byte(cachedEvent), t1)
	if err != nil {
		t.Fatal(err)
	}
	if a.Event != b.Event {
		t.Error("the second identical frame was decoded again")
	}
	if !a.At.Equal(t0) || !b.At.Equal(t1) {
		t.Errorf("At = %v, %v: each frame keeps its own reading time", a.At, b.At)
	}
	if b.Table != "t1" || b.ID != "5-0" || b.Event.GetSeq() != 7 || b.Event.GetBidMade().GetTricks() != 1 {
		t.Errorf("cached frame decoded wrong: %+v", b)
	}
}

func TestFrameCache_MatchesDecodeFrame(t *testing.T) {
	frames := []string{
		cachedEvent,
		bin(wire.Ack("r1", "p/k")),
		bin(wire.ErrorFrame("invalid", "no", "r2")),
	}
	c := NewFrameCache(1) // generations roll over at every frame
	for _, fr := range frames {
		for range 3 {
			got, gerr := c.Decode([]byte(fr), time.Unix(3, 0))
			want, werr := DecodeFrame([]byte(fr), time.Unix(3, 0))
			if (gerr == nil) != (werr == nil) || got.Type != want.Type || got.Ref != want.Ref ||
				got.Cmd != want.Cmd || got.ID != want.ID || got.Event.GetSeq() != want.Event.GetSeq() {
				t.Errorf("%s: cache gave %+v, %v; DecodeFrame %+v, %v", fr, got, gerr, want, werr)
			}
		}
	}
}

func TestFrameCache_BadEventFrameIsAnError(t *testing.T) {
	c := NewFrameCache(8)
	// An event member whose event is cut short.
	if _, err := c.Decode([]byte{0x6a, 0x05, 0x1a, 0x09, 0x08}, time.Now()); err == nil {
		t.Error("an undecodable event frame was accepted")
	}
}
