package ws

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/auth"
	"github.com/pulka/pulka/services/gateway/internal/hub"
	"github.com/pulka/pulka/services/gateway/internal/presence"
)

var secret = []byte(strings.Repeat("k", auth.MinSecretLen))

// gateway is one gateway instance under test: its own hub and endpoint on a
// real socket, sharing Redis with the other instances.
type gateway struct {
	srv    *Server
	hub    *hub.Hub
	http   *httptest.Server
	signer *auth.Signer
}

type env struct {
	redis *redistest.Server
	rdb   *redis.Client
	pub   *streams.Publisher
	// tailer are the options of the gateways' hubs' tailers (a tracer
	// provider).
	tailer []streams.Option
}

func newEnv(t *testing.T) *env { return newEnvB(t) }

func newEnvB(t testing.TB) *env {
	t.Helper()
	r := redistest.Start(t)
	rdb := r.Client(t)
	return &env{redis: r, rdb: rdb, pub: streams.NewPublisher(rdb, streams.WithMaxLen(0))}
}

func (e *env) gateway(t *testing.T, cfg Config) *gateway { return e.gatewayCfg(t, cfg) }

func (e *env) gatewayB(b testing.TB) *gateway { return e.gatewayCfg(b, Config{}) }

func (e *env) gatewayCfg(t testing.TB, cfg Config, tune ...func(*Deps)) *gateway {
	t.Helper()
	signer, err := auth.NewSigner(secret, nil, time.Hour, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	h := hub.New(e.rdb, hub.Options{TailerOptions: e.tailer})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = h.Run(ctx); close(done) }()
	deps := Deps{Signer: signer, Hub: h, Publisher: e.pub, Presence: presence.New(e.rdb, time.Minute, time.Now)}
	for _, f := range tune {
		f(&deps)
	}
	s := NewServer(cfg, deps)
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.Shutdown(sctx)
		scancel()
		hs.Close()
		cancel()
		<-done
	})
	return &gateway{srv: s, hub: h, http: hs, signer: signer}
}

func authClaims(player string) auth.Claims { return auth.Claims{PlayerID: player, Name: player} }

func (g *gateway) token(t *testing.T, player string) string {
	t.Helper()
	tok, _, err := g.signer.Issue(auth.Claims{PlayerID: player, Name: player})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// closeBody closes a handshake response's body (coder/websocket says it
// needs no closing; the linter cannot know).
func closeBody(r *http.Response) {
	if r != nil && r.Body != nil {
		_ = r.Body.Close()
	}
}

func (g *gateway) url() string { return "ws" + strings.TrimPrefix(g.http.URL, "http") }

type client struct {
	t *testing.T
	c *websocket.Conn
}

// dial connects without authenticating.
func (g *gateway) dial(t *testing.T, h http.Header) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, g.url(), &websocket.DialOptions{HTTPHeader: h})
	closeBody(resp)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(1 << 24)
	t.Cleanup(func() { _ = c.CloseNow() })
	return &client{t: t, c: c}
}

// login connects and says hello; it returns once welcomed.
func (g *gateway) login(t *testing.T, player string) *client {
	t.Helper()
	c := g.dial(t, nil)
	c.send(map[string]any{"hello": map[string]any{"token": g.token(t, player)}})
	if f := c.next(); f["type"] != "welcome" {
		t.Fatalf("after hello: %v", f)
	}
	return c
}

func (c *client) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendRaw(b)
}

func (c *client) sendRaw(b []byte) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.c.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// read returns the next frame, flattened (flat), or the read error.
func (c *client) read(d time.Duration) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	typ, b, err := c.c.Read(ctx)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, fmt.Errorf("a %v message on a JSON connection", typ)
	}
	return flat(b)
}

// flat is a JSON ServerFrame as one map, for the tests' assertions: its
// member's fields, with "type" naming the member and "ref" the frame's ref
// ({"ref":"r1","ack":{"cmd":"p/k"}} is {"type":"ack","ref":"r1","cmd":"p/k"}).
func flat(b []byte) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	out := map[string]any{}
	for k, v := range m {
		if k == "ref" {
			out[k] = v
			continue
		}
		out["type"] = k
		if inner, ok := v.(map[string]any); ok {
			maps.Copy(out, inner)
		}
	}
	return out, nil
}

// typeOf decodes a JSON frame and names its member (wire.ServerFrameType).
func typeOf(b []byte) (string, error) {
	f := &gatewayv1.ServerFrame{}
	if err := protojson.Unmarshal(b, f); err != nil {
		return "", err
	}
	return wire.ServerFrameType(f), nil
}

// hexB64 is a seed written as hex digits, in the base64 of JSON bytes.
func hexB64(h string) string {
	b, err := hex.DecodeString(h)
	if err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// readType reads one frame and decodes only its type: a reader that keeps
// up with big frames, where decoding each into maps would not.
func (c *client) readType(d time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, b, err := c.c.Read(ctx)
	if err != nil {
		return "", err
	}
	return typeOf(b)
}

func (c *client) next() map[string]any {
	c.t.Helper()
	m, err := c.read(5 * time.Second)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return m
}

// nextOf skips frames until one of type typ.
func (c *client) nextOf(typ string) map[string]any {
	c.t.Helper()
	for {
		if m := c.next(); m["type"] == typ {
			return m
		}
	}
}

// closed waits for the connection to close and returns its close code.
func (c *client) closed() websocket.StatusCode {
	c.t.Helper()
	code, err := c.waitClose()
	if err != nil {
		c.t.Fatal(err)
	}
	return code
}

// waitClose is closed for other goroutines than the test's.
func (c *client) waitClose() (websocket.StatusCode, error) {
	for {
		_, err := c.read(10 * time.Second)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return 0, errors.New("connection still open")
			}
			return websocket.CloseStatus(err), nil
		}
	}
}

func (e *env) publish(t *testing.T, table string, ev *tablev1.Event) string {
	t.Helper()
	data, _ := proto.Marshal(ev)
	id, err := e.pub.Publish(context.Background(), streams.Entry{Stream: streams.TableEvents(table), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func pub(ev *tablev1.Event) *tablev1.Event {
	ev.Visibility = &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PUBLIC}
	return ev
}

func seated(seat uint32, p string) *tablev1.Event {
	return pub(&tablev1.Event{Event: &tablev1.Event_PlayerSeated{PlayerSeated: &tablev1.PlayerSeated{
		Seat: &tablev1.SeatPlayer{Seat: seat, PlayerId: p}}}})
}

func dealt(seat uint32, cs ...commonv1.Card) *tablev1.Event {
	return &tablev1.Event{Visibility: &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_SEAT, Seat: seat},
		Event: &tablev1.Event_Dealt{Dealt: &tablev1.Dealt{Seat: seat, Cards: cs}}}
}

func bidMade(seat uint32) *tablev1.Event {
	return pub(&tablev1.Event{Event: &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{Seat: seat, Tricks: 1}}})
}

func TestAuth_HelloWithTokenIsWelcomed(t *testing.T) {
	g := newEnv(t).gateway(t, Config{})
	c := g.dial(t, nil)
	c.send(map[string]any{"hello": map[string]any{"token": g.token(t, "ana")}})
	f := c.next()
	p, _ := f["player"].(map[string]any)
	if f["type"] != "welcome" || p["id"] != "ana" {
		t.Fatalf("welcome = %v", f)
	}
}

func TestAuth_CookieAuthenticatesAtOnce(t *testing.T) {
	g := newEnv(t).gateway(t, Config{})
	c := g.dial(t, http.Header{"Cookie": {"pulka_session=" + g.token(t, "bob")}})
	if f := c.next(); f["type"] != "welcome" {
		t.Fatalf("first frame = %v", f)
	}
}

func TestAuth_BadTokenGetsErrorAndClose4001(t *testing.T) {
	g := newEnv(t).gateway(t, Config{})
	c := g.dial(t, nil)
	c.send(map[string]any{"ref": "h1", "hello": map[string]any{"token": "v1.forged.sig"}})
	f := c.next()
	if f["type"] != "error" || f["code"] != "unauthorized" || f["ref"] != "h1" {
		t.Fatalf("frame = %v", f)
	}
	if code := c.closed(); code != CloseUnauthorized {
		t.Fatalf("close code = %d, want %d", code, CloseUnauthorized)
	}
}

func TestAuth_FrameOtherThanHelloFirstIsRefused(t *testing.T) {
	g := newEnv(t).gateway(t, Config{})
	c := g.dial(t, nil)
	c.send(map[string]any{"join": map[string]any{"table": "t1"}})
	if f := c.next(); f["code"] != "auth_required" {
		t.Fatalf("frame = %v", f)
	}
	if code := c.closed(); code != CloseUnauthorized {
		t.Fatalf("close code = %d", code)
	}
}

func TestAuth_NoHelloInTimeCloses4002(t *testing.T) {
	g := newEnv(t).gateway(t, Config{AuthTimeout: 100 * time.Millisecond})
	c := g.dial(t, nil)
	if code := c.closed(); code != CloseAuthTimedOut {
		t.Fatalf("close code = %d, want %d", code, CloseAuthTimedOut)
	}
}

func TestOrigin_ForeignOriginIsRejected(t *testing.T) {
	g := newEnv(t).gateway(t, Config{OriginPatterns: []string{"pulka.example"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, g.url(), &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}})
	closeBody(resp)
	if err == nil {
		t.Fatal("foreign origin accepted")
	}
	if resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("response = %v, want 403", resp)
	}
	c, resp, err := websocket.Dial(ctx, g.url(), &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://pulka.example"}}})
	closeBody(resp)
	if err != nil {
		t.Fatalf("allowed origin refused: %v", err)
	}
	_ = c.CloseNow()
}

func TestFrames_OversizedFrameGetsAnErrorAndTheConnectionLives(t *testing.T) {
	g := newEnv(t).gateway(t, Config{ReadLimit: 512, HardReadLimit: 4096})
	c := g.login(t, "ana")
	c.sendRaw([]byte(`{"ping":{},"pad":"` + strings.Repeat("x", 1000) + `"}`))
	if f := c.next(); f["type"] != "error" || f["code"] != "too_big" {
		t.Fatalf("frame = %v", f)
	}
	c.send(map[string]any{"ref": "p", "ping": map[string]any{}})
	if f := c.next(); f["type"] != "pong" || f["ref"] != "p" {
		t.Fatalf("after the big frame: %v", f)
	}
}

func TestFrames_FrameOverTheHardLimitCloses1009(t *testing.T) {
	g := newEnv(t).gateway(t, Config{ReadLimit: 512, HardReadLimit: 4096})
	c := g.login(t, "ana")
	c.sendRaw([]byte(`{"ping":{},"pad":"` + strings.Repeat("x", 10000) + `"}`))
	if code := c.closed(); code != websocket.StatusMessageTooBig {
		t.Fatalf("close code = %d, want 1009", code)
	}
}

func TestFrames_MalformedAndUnknownFramesGetErrors(t *testing.T) {
	g := newEnv(t).gateway(t, Config{})
	c := g.login(t, "ana")
	for _, tt := range []struct{ frame, code, ref string }{
		{`{"ping":`, "bad_json", ""},
		{`not json at all`, "bad_json", ""},
		{`{"teleport":{},"ref":"r1"}`, "unknown_type", "r1"},
		{`{"command":{"table":"t1","play":{"card":99}},"ref":"r2"}`, "invalid_card", "r2"},
		{`{"command":{"table":"t1","bid":{"tricks":2}},"ref":"r3"}`, "not_joined", "r3"},
		{`{"hello":{"token":"x"},"ref":"r4"}`, "invalid_message", "r4"},
	} {
		c.sendRaw([]byte(tt.frame))
		f := c.next()
		if f["type"] != "error" || f["code"] != tt.code || (tt.ref != "" && f["ref"] != tt.ref) || f["message"] == "" {
			t.Fatalf("%s → %v, want error %s", tt.frame, f, tt.code)
		}
	}
	c.send(map[string]any{"ping": map[string]any{}})
	if f := c.next(); f["type"] != "pong" {
		t.Fatalf("connection unusable after bad frames: %v", f)
	}
}

// The HTTP handler returns once the connection is up, so that neither
// net/http's goroutine nor the request's buffers are held for the
// connection's life (a quarter of an idle connection's memory,
// docs/benchmarks.md), and the connection lives on. (Shutdown still waits
// for it: TestShutdown_ClosesConnectionsWithGoingAway.)
func TestServer_HandlerReturnsWhileTheConnectionLivesOn(t *testing.T) {
	g := newEnv(t).gateway(t, Config{})
	returned := make(chan struct{}, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.srv.ServeHTTP(w, r)
		returned <- struct{}{}
	}))
	t.Cleanup(hs.Close)
	c := (&gateway{srv: g.srv, hub: g.hub, http: hs, signer: g.signer}).login(t, "ana")
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("ServeHTTP has not returned with the connection up")
	}
	c.send(map[string]any{"ping": map[string]any{}})
	if f := c.next(); f["type"] != "pong" {
		t.Fatalf("after the handler returned: %v, want pong", f)
	}
}

// panickingPublisher panics on its first entry (the command), then
// publishes nothing: the closing connection's presence report must not
// panic outside the connection's recovery.
type panickingPublisher struct{ panicked *atomic.Bool }

func (p panickingPublisher) Publish(context.Context, streams.Entry) (string, error) {
	if p.panicked.CompareAndSwap(false, true) {
		panic("a bug in the command path")
	}
	return "0-1", nil
}

// A panic while serving one connection closes that connection with 1011
// and nothing else: the gateway goes on serving everyone.
func TestServer_APanicInAConnectionClosesOnlyIt(t *testing.T) {
	e := newEnv(t)
	g := e.gatewayCfg(t, Config{}, func(d *Deps) { d.Publisher = panickingPublisher{&atomic.Bool{}} })
	c := g.login(t, "ana")
	c.send(map[string]any{"join": map[string]any{"table": "t1"}})
	c.nextOf("joined")
	// Seated after joining: a member's arrival would report presence
	// through the (panicking) publisher. Only a seated player's commands
	// go through.
	e.publish(t, "t1", seated(0, "ana"))
	c.nextOf("event")
	c.send(map[string]any{"command": map[string]any{"table": "t1", "cmd": "k1", "bid": map[string]any{"tricks": 1}}})
	if code := c.closed(); code != CloseInternal {
		t.Fatalf("closed with %d, want %d", code, CloseInternal)
	}
	other := g.login(t, "bob")
	other.send(map[string]any{"ping": map[string]any{}})
	if f := other.next(); f["type"] != "pong" {
		t.Fatalf("another connection after the panic: %v, want pong", f)
	}
}

func TestFrames_TooManyBadFramesClose1008(t *testing.T) {
	g := newEnv(t).gateway(t, Config{MaxStrikes: 5})
	c := g.login(t, "ana")
	for i := 0; i < 5; i++ {
		c.sendRaw([]byte(`{`))
	}
	if code := c.closed(); code != websocket.StatusPolicyViolation {
		t.Fatalf("close code = %d, want 1008", code)
	}
}

func TestFrames_TooFastIsRateLimited(t *testing.T) {
	g := newEnv(t).gateway(t, Config{Rate: rate.Limit(1), Burst: 3, MaxStrikes: 100})
	c := g.login(t, "ana")
	for i := 0; i < 10; i++ {
		c.send(map[string]any{"ping": map[string]any{}})
	}
	pongs, limited := 0, 0
	for i := 0; i < 10; i++ {
		switch f := c.next(); {
		case f["type"] == "pong":
			pongs++
		case f["code"] == "rate_limited":
			limited++
		default:
			t.Fatalf("frame = %v", f)
		}
	}
	if pongs < 3 || pongs > 4 || limited != 10-pongs {
		t.Fatalf("pongs %d, rate limited %d", pongs, limited)
	}
}

func TestJoin_PlayerGetsOnlyWhatTheyMaySee(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{})
	ids := []string{
		e.publish(t, "t1", seated(0, "ana")),
		e.publish(t, "t1", seated(1, "bob")),
		e.publish(t, "t1", dealt(0, commonv1.Card_CARD_ACE_OF_SPADES)),
		e.publish(t, "t1", dealt(1, commonv1.Card_CARD_JOKER_1)),
	}
	c := g.login(t, "ana")
	c.send(map[string]any{"ref": "j", "join": map[string]any{"table": "t1"}})
	for _, want := range []int{0, 1, 2} {
		f := c.nextOf("event")
		if f["id"] != ids[want] {
			t.Fatalf("event %v, want %s", f, ids[want])
		}
	}
	j := c.nextOf("joined")
	if j["ref"] != "j" || j["seat"] != float64(0) || j["replayed"] != float64(3) {
		t.Fatalf("joined = %v", j)
	}
	live := e.publish(t, "t1", dealt(1, commonv1.Card_CARD_JOKER_2)) // bob's: never to ana
	mine := e.publish(t, "t1", dealt(0, commonv1.Card_CARD_KING_OF_HEARTS))
	f := c.nextOf("event")
	if f["id"] != mine {
		t.Fatalf("live event = %v, want %s (not bob's %s)", f, mine, live)
	}
	ev := f["event"].(map[string]any)
	d := ev["dealt"].(map[string]any)
	if d["cards"].([]any)[0] != "CARD_KING_OF_HEARTS" {
		t.Fatalf("event body = %v", ev)
	}
}

// A client that asks for the binary subprotocol gets every frame as a
// binary ServerFrame, and may send binary ClientFrames (text ones too: the
// message type says which): the same join, replay, visibility and command
// as in JSON.
func TestEncoding_BinarySubprotocolSpeaksBinaryProtobufBothWays(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{})
	ids := []string{
		e.publish(t, "t1", seated(0, "ana")),
		e.publish(t, "t1", dealt(1, commonv1.Card_CARD_JOKER_1)), // bob's: never to ana
		e.publish(t, "t1", dealt(0, commonv1.Card_CARD_ACE_OF_SPADES)),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, g.url(), &websocket.DialOptions{
		HTTPHeader:   http.Header{"Authorization": {"Bearer " + g.token(t, "ana")}},
		Subprotocols: []string{wire.SubprotocolProto}})
	closeBody(resp)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ws.CloseNow() }()
	if ws.Subprotocol() != wire.SubprotocolProto {
		t.Fatalf("subprotocol %q", ws.Subprotocol())
	}
	next := func() *gatewayv1.ServerFrame {
		t.Helper()
		typ, b, err := ws.Read(ctx)
		if err != nil || typ != websocket.MessageBinary {
			t.Fatalf("read: %v, %v", typ, err)
		}
		f := &gatewayv1.ServerFrame{}
		if err := proto.Unmarshal(b, f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	write := func(typ websocket.MessageType, m *gatewayv1.ClientFrame) {
		t.Helper()
		var b []byte
		if typ == websocket.MessageText {
			b, err = protojson.Marshal(m)
		} else {
			b, err = proto.Marshal(m)
		}
		if err == nil {
			err = ws.Write(ctx, typ, b)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if w := next().GetWelcome(); w.GetPlayer().GetId() != "ana" || w.GetServerTime() == nil {
		t.Fatalf("welcome %v", w)
	}
	write(websocket.MessageBinary, &gatewayv1.ClientFrame{Ref: "j", Frame: &gatewayv1.ClientFrame_Join{Join: &gatewayv1.Join{Table: "t1"}}})
	for _, want := range []string{ids[0], ids[2]} {
		if f := next().GetEvent(); f.GetId() != want || f.GetTable() != "t1" {
			t.Fatalf("event %v, want %s", f, want)
		}
	}
	j := next()
	if j.GetRef() != "j" || j.GetJoined().Seat == nil || j.GetJoined().GetSeat() != 0 || j.GetJoined().GetReplayed() != 2 {
		t.Fatalf("joined %v", j)
	}
	write(websocket.MessageText, &gatewayv1.ClientFrame{Ref: "b", Frame: &gatewayv1.ClientFrame_Command{Command: &gatewayv1.TableCommand{
		Table: "t1", Cmd: "k1", Command: &gatewayv1.TableCommand_Bid{Bid: &tablev1.BidCommand{Tricks: 2}}}}})
	if a := next(); a.GetRef() != "b" || a.GetAck().GetCmd() != "ana/k1" {
		t.Fatalf("ack %v", a)
	}
	write(websocket.MessageBinary, &gatewayv1.ClientFrame{Ref: "x", Frame: &gatewayv1.ClientFrame_Command{Command: &gatewayv1.TableCommand{
		Table: "t1", Command: &gatewayv1.TableCommand_Bid{Bid: &tablev1.BidCommand{Tricks: 12}}}}})
	if f := next(); f.GetRef() != "x" || f.GetError().GetCode() != wire.CodeInvalid {
		t.Fatalf("refusal %v", f)
	}
	if err := ws.Write(ctx, websocket.MessageBinary, []byte{0xff, 0xff}); err != nil {
		t.Fatal(err)
	}
	if f := next(); f.GetError().GetCode() != wire.CodeBadFrame {
		t.Fatalf("garbage: %v", f)
	}
}

// A client without a session cookie authenticates with a binary hello, and
// is then welcomed in binary.
func TestEncoding_BinaryHelloAuthenticates(t *testing.T) {
	g := newEnv(t).gateway(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, g.url(), &websocket.DialOptions{Subprotocols: []string{wire.SubprotocolProto}})
	closeBody(resp)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ws.CloseNow() }()
	b, _ := proto.Marshal(&gatewayv1.ClientFrame{Frame: &gatewayv1.ClientFrame_Hello{Hello: &gatewayv1.Hello{Token: g.token(t, "ana")}}})
	if err := ws.Write(ctx, websocket.MessageBinary, b); err != nil {
		t.Fatal(err)
	}
	typ, data, err := ws.Read(ctx)
	if err != nil || typ != websocket.MessageBinary {
		t.Fatalf("read: %v, %v", typ, err)
	}
	var f gatewayv1.ServerFrame
	if err := proto.Unmarshal(data, &f); err != nil || f.GetWelcome().GetPlayer().GetId() != "ana" {
		t.Fatalf("after a binary hello: %v, %v", &f, err)
	}
}

func TestCommand_IsWrittenToTheTableStreamWithThePlayerAndAnAck(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{})
	e.publish(t, "t1", seated(0, "ana")) // only a seated player's commands go through
	c := g.login(t, "ana")
	c.send(map[string]any{"join": map[string]any{"table": "t1"}})
	c.nextOf("joined")
	c.send(map[string]any{"ref": "m1", "command": map[string]any{"table": "t1", "cmd": "k1", "play": map[string]any{"card": "CARD_JOKER_1",
		"declaration": map[string]any{"action": "JOKER_ACTION_HIGHEST", "suit": "SUIT_HEARTS"}}}})
	ack := c.nextOf("ack")
	if ack["ref"] != "m1" || ack["cmd"] != "ana/k1" {
		t.Fatalf("ack = %v", ack)
	}
	xs, err := e.rdb.XRange(context.Background(), streams.TableCommands("t1"), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*tablev1.Command
	for _, x := range xs {
		var cmd tablev1.Command
		if err := proto.Unmarshal([]byte(x.Values[streams.FieldData].(string)), &cmd); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, &cmd)
	}
	last := cmds[len(cmds)-1]
	pc := last.GetPlayCard()
	if last.PlayerId != "ana" || last.TableId != "t1" || last.CommandId != "ana/k1" || pc.GetCard() != commonv1.Card_CARD_JOKER_1 ||
		pc.GetDeclaration().GetAction() != tablev1.JokerAction_JOKER_ACTION_HIGHEST || pc.GetDeclaration().GetSuit() != commonv1.Suit_SUIT_HEARTS {
		t.Fatalf("command = %v", last)
	}
}

func TestCommand_AckWaitsForTheTablesAnswerAndLeavesBeforeIt(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{AckDelay: time.Hour})
	e.publish(t, "t1", seated(0, "ana")) // only a seated player's commands go through
	c := g.login(t, "ana")
	c.send(map[string]any{"join": map[string]any{"table": "t1"}})
	c.nextOf("joined")
	// Frames as they arrive, with when (a read that times out would close
	// the connection, so one reader runs throughout).
	type arrival struct {
		f  map[string]any
		at time.Time
	}
	frames := make(chan arrival, 8)
	go func() {
		for {
			f, err := c.read(10 * time.Second)
			if err != nil {
				close(frames)
				return
			}
			frames <- arrival{f, time.Now()}
		}
	}()
	c.send(map[string]any{"ref": "m1", "command": map[string]any{"table": "t1", "cmd": "k1", "bid": map[string]any{"tricks": 1}}})
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if n, err := e.rdb.XLen(context.Background(), streams.TableCommands("t1")).Result(); err == nil && n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never reached the table's command stream")
		}
	}
	time.Sleep(100 * time.Millisecond) // the table thinks
	answered := time.Now()
	id := e.publish(t, "t1", bidMade(0))
	ack, ev := <-frames, <-frames
	if ack.f["type"] != "ack" || ack.f["ref"] != "m1" || ack.f["cmd"] != "ana/k1" {
		t.Fatalf("first frame after the command = %v, want its ack", ack.f)
	}
	if ack.at.Before(answered) {
		t.Fatalf("the ack left %s before the table answered; it should wait for the answer", answered.Sub(ack.at))
	}
	if ev.f["type"] != "event" || ev.f["id"] != id {
		t.Fatalf("second frame = %v, want event %s", ev.f, id)
	}
}

func TestCommand_AckWithoutAnAnswerLeavesAfterAckDelay(t *testing.T) {
	e := newEnv(t)
	const delay = 80 * time.Millisecond
	g := e.gateway(t, Config{AckDelay: delay})
	e.publish(t, "t1", seated(0, "ana")) // only a seated player's commands go through
	c := g.login(t, "ana")
	c.send(map[string]any{"join": map[string]any{"table": "t1"}})
	c.nextOf("joined")
	start := time.Now()
	c.send(map[string]any{"ref": "m1", "command": map[string]any{"table": "t1", "cmd": "k1", "bid": map[string]any{"tricks": 1}}})
	ack := c.nextOf("ack")
	if got := time.Since(start); got < delay {
		t.Fatalf("the ack came after %s, before AckDelay %s with nothing to ride with", got, delay)
	}
	if ack["ref"] != "m1" {
		t.Fatalf("ack = %v", ack)
	}
}

// presenceReports lists the presence entries of a table's command stream
// as "player:away|back".
func (e *env) presenceReports(t *testing.T, table string) []string {
	t.Helper()
	xs, err := e.rdb.XRange(context.Background(), streams.TableCommands(table), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range xs {
		if p, ok := x.Values["presence"].(string); ok {
			out = append(out, x.Values["player"].(string)+":"+p)
		}
	}
	return out
}

func TestPresence_BackOnAPlayersFirstConnectionAwayAfterTheLast(t *testing.T) {
	e := newEnv(t)
	first := e.gateway(t, Config{})
	second := e.gateway(t, Config{})
	seen := e.publish(t, "t1", seated(2, "cem"))
	a := first.login(t, "cem")
	a.send(map[string]any{"join": map[string]any{"table": "t1", "last_event_id": seen}})
	a.nextOf("joined")
	b := second.login(t, "cem") // another tab, on another instance: not a return
	b.send(map[string]any{"join": map[string]any{"table": "t1", "last_event_id": seen}})
	b.nextOf("joined")
	w := first.login(t, "wendy") // a watcher: the table does not care
	w.send(map[string]any{"join": map[string]any{"table": "t1"}})
	w.nextOf("joined")
	if got := strings.Join(e.presenceReports(t, "t1"), ","); got != "cem:back" {
		t.Fatalf("reports after joining = %q, want cem:back", got)
	}
	_ = a.c.Close(websocket.StatusNormalClosure, "")
	waitOpen(t, first.srv, 1)
	if got := strings.Join(e.presenceReports(t, "t1"), ","); got != "cem:back" {
		t.Fatalf("reports with one tab left = %q", got)
	}
	_ = b.c.Close(websocket.StatusNormalClosure, "")
	_ = w.c.Close(websocket.StatusNormalClosure, "")
	waitOpen(t, second.srv, 0)
	waitOpen(t, first.srv, 0)
	if got := strings.Join(e.presenceReports(t, "t1"), ","); got != "cem:back,cem:away" {
		t.Fatalf("reports after the last tab closed = %q, want cem:back,cem:away", got)
	}
}

func waitOpen(t *testing.T, s *Server, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.Open() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, want %d", s.Open(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A last_event_id past every event of the table is no id a client was ever
// sent: taken at its word it held the seat the player had "then" until the
// table got there, so a player who had left still passed not_seated. The
// join is refused and leaves nothing behind; the player may join as anyone.
func TestResume_ALastEventIDPastTheTableIsRefused(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{})
	e.publish(t, "t1", seated(0, "ana"))
	e.publish(t, "t1", pub(&tablev1.Event{Event: &tablev1.Event_PlayerLeft{PlayerLeft: &tablev1.PlayerLeft{Seat: 0, PlayerId: "ana"}}}))
	c := g.login(t, "ana")
	c.send(map[string]any{"ref": "j", "join": map[string]any{"table": "t1", "last_event_id": "99999999999999-0"}})
	if m := c.nextOf("error"); m["code"] != wire.CodeInvalid || m["ref"] != "j" {
		t.Fatalf("join from the future: %v, want invalid_message", m)
	}
	if got := e.presenceReports(t, "t1"); len(got) != 0 {
		t.Fatalf("a refused join reported presence: %v", got)
	}
	c.send(map[string]any{"ref": "b", "command": map[string]any{"table": "t1", "bid": map[string]any{"tricks": 1}}})
	if m := c.nextOf("error"); m["code"] != wire.CodeNotJoined {
		t.Fatalf("a command after the refused join: %v", m)
	}
	c.send(map[string]any{"ref": "j2", "join": map[string]any{"table": "t1"}})
	if j := c.nextOf("joined"); j["ref"] != "j2" || j["seat"] != nil {
		t.Fatalf("a join from the start after the refusal: %v", j)
	}
	c.send(map[string]any{"ref": "b2", "command": map[string]any{"table": "t1", "bid": map[string]any{"tricks": 1}}})
	if m := c.nextOf("error"); m["code"] != wire.CodeNotSeated {
		t.Fatalf("a command of the player who left: %v, want not_seated", m)
	}
}

func TestResume_TrimmedHistoryAsksTheTableForAView(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{})
	var ids []string
	for i := 0; i < 20; i++ {
		ids = append(ids, e.publish(t, "t1", bidMade(0)))
	}
	if err := e.rdb.XTrimMaxLen(context.Background(), streams.TableEvents("t1"), 5).Err(); err != nil {
		t.Fatal(err)
	}
	c := g.login(t, "ana")
	c.send(map[string]any{"join": map[string]any{"table": "t1", "last_event_id": ids[1]}})
	if j := c.nextOf("joined"); j["history_trimmed"] != true {
		t.Fatalf("joined = %v", j)
	}
	xs, _ := e.rdb.XRange(context.Background(), streams.TableCommands("t1"), "-", "+").Result()
	var cmd tablev1.Command
	if len(xs) != 1 || proto.Unmarshal([]byte(xs[0].Values[streams.FieldData].(string)), &cmd) != nil ||
		cmd.GetReconnect().GetLastEventId() != ids[1] || cmd.PlayerId != "ana" {
		t.Fatalf("commands = %v", xs)
	}
}

// TestSlowConsumer_IsDisconnectedWithoutBlockingAFastOne has one client that
// never reads and one that does, at a table that publishes a lot: the fast
// one gets every event in time, the slow one is cut off.
func TestSlowConsumer_IsDisconnectedWithoutBlockingAFastOne(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{SendQueueFrames: 64, SendQueueBytes: 1 << 20, WriteTimeout: time.Second})
	slow := g.login(t, "slow")
	slow.send(map[string]any{"join": map[string]any{"table": "t1"}})
	slow.nextOf("joined")
	fast := g.login(t, "fast")
	fast.send(map[string]any{"join": map[string]any{"table": "t1"}})
	fast.nextOf("joined")

	// Big public events, so that the slow client's socket buffers fill up
	// and its queue overflows. The publisher keeps at most `window` events
	// ahead of what the fast client has read, so the fast client's queue
	// never holds more than `window` frames (16 × 22 KiB, well under both
	// limits) however slow this machine is: if it is cut off anyway, or
	// stalls, the slow client blocked it. (A fixed publishing pace flaked
	// under -race on two busy cores: the reader fell 64 frames behind.)
	// The fast client decodes only each frame's type: decoding 22 KiB
	// frames into maps takes milliseconds under -race.
	big := make([]commonv1.Card, 0, 1000)
	for i := 0; i < cap(big); i++ {
		big = append(big, commonv1.Card(1+i%36))
	}
	const n, window = 600, 16
	var read atomic.Int64
	got := make(chan int, 1)
	go func() {
		count := 0
		for count < n {
			typ, err := fast.readType(10 * time.Second)
			if err != nil {
				t.Logf("fast client: %v", err)
				break
			}
			if typ == "event" {
				count++
				read.Store(int64(count))
			}
		}
		got <- count
	}()
	start := time.Now()
	for i := 0; i < n; i++ {
		for wait := time.Now().Add(10 * time.Second); int64(i)-read.Load() >= window; {
			if time.Now().After(wait) {
				t.Fatalf("fast client stalled at %d of %d published events", read.Load(), i)
			}
			time.Sleep(time.Millisecond)
		}
		ev := pub(&tablev1.Event{Event: &tablev1.Event_ColumnsDealt{ColumnsDealt: &tablev1.ColumnsDealt{FaceUp: big}}})
		e.publish(t, "t1", ev)
	}
	if c := <-got; c != n {
		t.Fatalf("fast client got %d of %d events", c, n)
	}
	t.Logf("fast client received %d events of ~%d KiB in %v", n, len(big)*22/1024, time.Since(start))
	deadline := time.Now().Add(10 * time.Second)
	for g.srv.Open() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("slow client still connected (%d open)", g.srv.Open())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := g.srv.Closed(CloseSlowConsumer); n != 1 {
		g.srv.mu.Lock()
		t.Logf("closed by code: %v", g.srv.closedBy)
		g.srv.mu.Unlock()
		t.Fatalf("%d connections closed as slow consumers, want 1", n)
	}
	// The slow client, reading at last, finds its connection closed.
	code := slow.closed()
	if code != CloseSlowConsumer && code != -1 {
		t.Fatalf("slow client close code = %d", code)
	}
	t.Logf("slow client's close code: %d (-1: its socket was too full for the close frame)", code)
}

func TestResume_SecondGatewayInstanceSendsExactlyTheMissedEvents(t *testing.T) {
	e := newEnv(t)
	first := e.gateway(t, Config{})
	second := e.gateway(t, Config{})
	ids := []string{e.publish(t, "t1", seated(1, "bob")), e.publish(t, "t1", dealt(1)), e.publish(t, "t1", bidMade(0))}
	c := first.login(t, "bob")
	c.send(map[string]any{"join": map[string]any{"table": "t1"}})
	seen := ""
	for i := 0; i < 2; i++ {
		seen = c.nextOf("event")["id"].(string)
	}
	_ = c.c.CloseNow() // the connection drops after the second event
	missed := []string{ids[2], e.publish(t, "t1", dealt(0)), e.publish(t, "t1", dealt(1)), e.publish(t, "t1", bidMade(1))}
	want := []string{missed[0], missed[2], missed[3]} // not seat 0's deal
	r := second.login(t, "bob")
	r.send(map[string]any{"join": map[string]any{"table": "t1", "last_event_id": seen}})
	for _, id := range want {
		if f := r.nextOf("event"); f["id"] != id {
			t.Fatalf("resumed event %v, want %s", f["id"], id)
		}
	}
	j := r.nextOf("joined")
	if j["replayed"] != float64(len(want)) {
		t.Fatalf("joined = %v", j)
	}
	live := e.publish(t, "t1", bidMade(2))
	if f := r.nextOf("event"); f["id"] != live {
		t.Fatalf("live event %v, want %s", f["id"], live)
	}
}

func TestShutdown_ClosesConnectionsWithGoingAway(t *testing.T) {
	g := newEnv(t).gateway(t, Config{})
	c := g.login(t, "ana")
	code := make(chan websocket.StatusCode, 1)
	go func() { cc, _ := c.waitClose(); code <- cc }() // a browser answers the close handshake
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if got := <-code; got != websocket.StatusGoingAway {
		t.Fatalf("close code = %d, want 1001", got)
	}
	_, resp, err := websocket.Dial(ctx, g.url(), nil)
	closeBody(resp)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("dial after shutdown: %v %v", resp, err)
	}
}

func TestJoin_AgainOnTheSameConnectionResumesWithoutDuplicatesOrPresenceNoise(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{})
	ids := []string{e.publish(t, "t1", seated(0, "ana")), e.publish(t, "t1", dealt(0)), e.publish(t, "t1", bidMade(0))}
	c := g.login(t, "ana")
	c.send(map[string]any{"join": map[string]any{"table": "t1"}})
	c.nextOf("joined")
	c.send(map[string]any{"ref": "again", "join": map[string]any{"table": "t1", "last_event_id": ids[1]}})
	if f := c.nextOf("event"); f["id"] != ids[2] {
		t.Fatalf("replay after the second join: %v", f)
	}
	if j := c.next(); j["type"] != "joined" || j["ref"] != "again" || j["replayed"] != float64(1) {
		t.Fatalf("second joined = %v", j)
	}
	live := e.publish(t, "t1", bidMade(1))
	if f := c.next(); f["id"] != live {
		t.Fatalf("live event = %v, want %s once", f, live)
	}
	c.send(map[string]any{"ref": "p", "ping": map[string]any{}})
	if f := c.next(); f["type"] != "pong" {
		t.Fatalf("a duplicate arrived: %v", f)
	}
	if got := strings.Join(e.presenceReports(t, "t1"), ","); got != "ana:back" {
		t.Fatalf("presence reports = %q, want ana:back only", got)
	}
	c.send(map[string]any{"ref": "u", "unjoin": map[string]any{"table": "t1"}})
	if f := c.next(); f["type"] != "unjoined" {
		t.Fatalf("unjoin answer = %v", f)
	}
	if got := strings.Join(e.presenceReports(t, "t1"), ","); got != "ana:back,ana:away" {
		t.Fatalf("presence reports after unjoin = %q", got)
	}
}
